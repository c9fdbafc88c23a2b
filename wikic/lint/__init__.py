"""`wikic lint`: the runner, the deterministic rules (rules.py, citations.py),
the model-based rules and the fixes. No imports here: each module is loaded as needed."""
