"""``python -m ruda`` is the ``ruda`` command."""

import sys

from ruda.cli import main

sys.exit(main())
