"""The build: one entry point (run.py) over the pipeline of stages (scan, digest,
plan, write, assemble, publish). No imports here, so the no-op check stays light."""
