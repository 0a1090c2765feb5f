"""``python -m tilefold`` runs the command line."""

from tilefold.cli.main import entry

entry()
