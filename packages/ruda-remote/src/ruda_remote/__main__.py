"""``python -m ruda_remote serve ...``."""

import sys

from ruda_remote.cli import main

sys.exit(main())
