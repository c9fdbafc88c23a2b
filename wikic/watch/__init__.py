"""`wikic watch`: `changes.py` (which changes count, when a burst has settled) and
`watcher.py` (the observer and the build loop). No imports here."""
