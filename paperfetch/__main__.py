"""``python -m paperfetch``: the ``paperfetch`` command."""

import sys

from paperfetch.cli import main

if __name__ == "__main__":
    sys.exit(main())
