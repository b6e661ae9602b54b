"""``python -m minigrad``: see :mod:`minigrad.cli`."""

import sys

from minigrad.cli import main

if __name__ == "__main__":
    sys.exit(main())
