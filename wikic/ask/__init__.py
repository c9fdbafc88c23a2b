"""`wikic ask`: the runner, what the model is shown (context.py), ranking, and
answers filed as pages. No imports here: each module is loaded as needed."""
