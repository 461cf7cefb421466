"""``python -m choicebox``."""

import sys

from ._cli import main

sys.exit(main())
