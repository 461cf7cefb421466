"""``python -m choicebox``."""

from .cli import run

run()
