"""`wikic gc`: delete the cached model answers nothing refers to any more, and give
their space (and their bytes) back: state.db compacted, its WAL emptied."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wikic.backends.prefix_cache import PrefixCache
from wikic.lock import ProjectLock
from wikic.privacy.forget import MODEL_STAGES
from wikic.project import Project
from wikic.state import State


@dataclass
class Collected:
    """What `wikic gc` removed, and the state's size before and after."""

    model_answers: int = 0  # digest and write answers no action refers to
    loose_answers: int = 0  # ask and lint --llm answers made for an older wiki
    bytes_before: int = 0
    bytes_after: int = 0
    compacted: bool = False  # False: another process was reading state.db; run gc again

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def state_bytes(path: Path) -> int:
    """state.db with its -wal and -shm files."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        total += side.stat().st_size if side.exists() else 0
    return total


def collect(project: Project, wait: bool = True) -> Collected:
    """Under the project lock: what an older source, prompt, model or wiki left in the cache.
    Answers of the current actions are kept, so an offline rebuild still replays."""
    out = Collected()
    with ProjectLock(project.lock_path, wait=wait):
        if not project.state_path.exists():
            return out
        out.bytes_before = state_bytes(project.state_path)
        with State.open(project.state_path) as state:
            with state.transaction():
                out.model_answers = state.drop_cache(MODEL_STAGES, unreferenced=True)
                changed = state.wiki_changed_at()
                out.loose_answers = state.drop_cache(MODEL_STAGES, other=True, before=changed)
            out.compacted = state.compact()
        PrefixCache(project.state_dir / "prefix", 1 << 62).prune()  # orphans and temporary files only
        out.bytes_after = state_bytes(project.state_path)
    return out
