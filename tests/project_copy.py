"""A copy of the files choicebox is built from, so that a build or a ``pip install`` of the
project leaves nothing (``build/``, ``*.egg-info``) in the working tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_IGNORE = shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc", "build", "dist")


def copy_project(dest: Path) -> Path:
    """The top-level metadata files and the folders the wheel is made of, copied into ``dest``."""
    dest.mkdir(parents=True)
    for name in os.listdir(ROOT):
        if (ROOT / name).is_file() and (
            name.endswith((".toml", ".md", ".txt")) or name.startswith("LICENSE")
        ):
            shutil.copy2(ROOT / name, dest / name)
    for folder in ("sdk", "rules", "grammars"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=_IGNORE)
    return dest
