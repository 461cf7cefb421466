"""The choicebox_mcqa resources server: what NeMo Gym runs for it.

Gym starts it as ``cd resources_servers/choicebox_mcqa && <venv>/bin/python app.py`` with its
config in $NEMO_GYM_CONFIG_DICT / $NEMO_GYM_CONFIG_PATH; choicebox reads the host, port and
grading mode Gym assigned there and serves (``choicebox gym``).
"""

import sys

from choicebox.gym import main

if __name__ == "__main__":
    sys.exit(main())
