"""`python -m sevenmaps_pipeline.cli`: the `sevenmaps` command (the bench runs each part this way, in a process
of its own)."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
