"""The ``tilefold`` command: one module per subcommand, dispatched by :mod:`tilefold.cli.main`."""
