"""The default configuration of ``choicebox audit`` (``default.yaml``), shipped as package data."""
