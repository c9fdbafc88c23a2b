"""Sources: finding them under sources/ (scan.py) and reading them as text (read.py)."""
