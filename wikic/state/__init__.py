"""The build state in .wikic/state.db: the source stat cache, the LLM response cache, the
last run of every action, the files wikic wrote, and the incremental stages' caches.

Each change is committed at once, so a killed build keeps every finished call. This is the
only package with SQL, and it imports nothing from wikic but its errors.

Its names are loaded on first use: the no-op build reads one meta row through
`wikic.state.connection` and must not pay for every table's module (and dataclasses).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wikic.state.batches import BatchRecord
    from wikic.state.build import ActionRecord, FileRecord
    from wikic.state.incremental import Links, LintRow, Planned, Rendered
    from wikic.state.schema import FORMAT, Meta
    from wikic.state.store import State

_HOME = {
    "FORMAT": "schema",
    "ActionRecord": "build",
    "BatchRecord": "batches",
    "FileRecord": "build",
    "Links": "incremental",
    "LintRow": "incremental",
    "Meta": "schema",
    "Planned": "incremental",
    "Rendered": "incremental",
    "State": "store",
}

__all__ = [
    "FORMAT",
    "ActionRecord",
    "BatchRecord",
    "FileRecord",
    "Links",
    "LintRow",
    "Meta",
    "Planned",
    "Rendered",
    "State",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value
