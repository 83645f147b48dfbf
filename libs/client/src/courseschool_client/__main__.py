"""`python -m courseschool_client`: the command-line front (see cli.py)."""

import sys

from .cli import main

sys.exit(main())
