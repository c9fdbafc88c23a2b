"""Entry point for `python -m wikic`."""

from wikic.cli import main

main()
