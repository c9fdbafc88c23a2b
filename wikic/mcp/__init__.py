"""`wikic mcp`: the compiled wiki as a Model Context Protocol server (server.py), over
tools that are plain Python (tools.py) and a wiki loaded once per process (loaded.py)."""
