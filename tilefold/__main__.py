"""``python -m tilefold`` runs the command line."""

import sys

from tilefold.cli.main import main

sys.exit(main())
