"""Entry point for `python -m wikic`."""

from wikic.cli.entry import main

main()
