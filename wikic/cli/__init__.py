"""The command line (`wikic.cli.main`), one module per command family."""
