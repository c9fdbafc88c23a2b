"""Entry point for `python -m wikic`."""

from wikic.cli.main import main

main()
