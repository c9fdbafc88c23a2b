"""The build state in .wikic/state.db: the source stat cache, the LLM response cache, the
last run of every action, the files wikic wrote, and the incremental stages' caches.

Each change is committed at once, so a killed build keeps every finished call. This is the
only package with SQL, and it imports nothing from wikic but its errors.
"""

from wikic.state.batches import BatchRecord
from wikic.state.build import ActionRecord, FileRecord
from wikic.state.incremental import LintRow, Planned, Rendered
from wikic.state.schema import FORMAT, Meta
from wikic.state.store import State

__all__ = [
    "FORMAT",
    "ActionRecord",
    "BatchRecord",
    "FileRecord",
    "LintRow",
    "Meta",
    "Planned",
    "Rendered",
    "State",
]
