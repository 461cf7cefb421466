"""Helpers for the tests that run NeMo Gym 0.7.0 itself (in its own Python 3.13 venv)."""
