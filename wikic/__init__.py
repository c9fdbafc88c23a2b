"""wikic: compile sources into an interlinked Markdown wiki, incrementally."""

__version__ = "0.3.0"
