"""`python -m credence.cli`: the same entry point as the `credence` command."""

import sys

from credence.cli import main

sys.exit(main())
