"""`python -m tinyinit`: the command line (see `python -m tinyinit figure --help`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
