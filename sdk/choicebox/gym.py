"""``python -m choicebox.gym``: choicebox as a resources server that NeMo Gym starts.

A Gym resources-server directory (``examples/nemo_gym/resources_servers/choicebox_mcqa/``) needs
only an ``app.py`` that runs :func:`main`; Gym runs it with its config in the environment, and
:func:`main` serves on the host and port Gym assigned (``choicebox gym``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from choicebox.cli import main as _cli_main

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve as Gym's config says (``choicebox gym`` with ``argv``, e.g. ``["--check"]``)."""
    return _cli_main(["gym", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
