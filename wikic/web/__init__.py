"""Looking at a built wiki: `wikic serve` (server.py), `wikic site` (site.py) and `wikic graph`
(graph.py). Imports nothing, so `wikic build` never loads it."""
