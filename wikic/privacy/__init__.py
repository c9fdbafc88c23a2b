"""Privacy: redaction before any model (redact.py), sources kept off remote backends
(local.py), forgetting a deleted source everywhere (forget.py), unreferenced cache
entries (gc.py). Imports nothing: each module is loaded by what needs it."""
