"""The runner commits each answer as it comes (a killed build never pays for it twice) and
writes the actions' records together when the run ends, or is cut short."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from wikic.backends.base import Completion, Request
from wikic.build.actions import Action, Runner, resolve
from wikic.state import State

MODEL = "test-model"


class Counted:
    """A backend answering {"n": i}, which looks at state.db from another connection before
    each answer (`peek`) and can be cut short by a Ctrl-C at one call (`stop_at`)."""

    model_id = MODEL

    def __init__(self, db: Path, stop_at: int | None = None) -> None:
        self.db, self.stop_at = db, stop_at
        self.calls = 0
        self.lock = threading.Lock()
        self.seen: list[tuple[int, int]] = []  # (answers, records) committed before each call

    def complete(self, request: Request) -> Completion:
        with self.lock:
            self.calls += 1
            n = self.calls
        with sqlite3.connect(self.db) as other:  # only what is committed is seen from here
            cached = other.execute("SELECT count(*) FROM cache").fetchone()[0]
            records = other.execute("SELECT count(*) FROM actions").fetchone()[0]
        self.seen.append((cached, records))
        if n == self.stop_at:
            raise KeyboardInterrupt
        return Completion(f'{{"n": {n}}}', prompt_tokens=10, completion_tokens=3)


def action(i: int) -> Action:
    request = Request([{"role": "user", "content": f"question {i}"}], schema={"type": "object"})
    return Action(
        id=f"digest:sources/s{i}.md",
        stage="digest",
        label=f"digest sources/s{i}.md",
        inputs={"source": f"hash{i}"},
        render=lambda: request,
        validate=lambda data: data,
    )


def settled(state: State, actions: list[Action]) -> list[Action]:
    records = state.actions()
    for a in actions:
        resolve(a, records.get(a.id), state, MODEL)
    return actions


@pytest.fixture
def state(tmp_path: Path) -> Any:
    opened = State.open(tmp_path / "state.db")
    yield opened
    opened.close()


def test_each_answer_is_committed_as_it_comes_the_records_when_the_run_ends(state: State) -> None:
    backend = Counted(state.path)
    actions = settled(state, [action(i) for i in range(3)])
    Runner(state, lambda: backend).run(actions)
    # before each call, every earlier answer was committed, and no record yet
    assert backend.seen == [(0, 0), (1, 0), (2, 0)]
    assert [a.status for a in actions] == ["ran"] * 3
    records = state.actions()
    assert {rec.id: rec.key for rec in records.values()} == {a.id: a.key for a in actions}
    assert all(records[a.id].inputs == a.inputs for a in actions)
    again = settled(state, [action(i) for i in range(3)])
    assert [a.status for a in again] == ["up_to_date"] * 3
    assert [a.output for a in again] == [{"n": 1}, {"n": 2}, {"n": 3}]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_cut_short_records_the_answers_it_committed(state: State, jobs: int) -> None:
    backend = Counted(state.path, stop_at=3)
    actions = settled(state, [action(i) for i in range(4)])
    with pytest.raises(KeyboardInterrupt):
        Runner(state, lambda: backend, jobs=jobs).run(actions)
    answered = {a.id for a in actions if a.status == "ran"}  # with 2 jobs, the 4th may be under way
    assert len(answered) in ((2,) if jobs == 1 else (2, 3))
    assert set(state.actions()) == answered
    again = settled(state, [action(i) for i in range(4)])
    assert {a.id for a in again if a.status == "up_to_date"} == answered
    assert all(a.status == "pending" for a in again if a.id not in answered)


def test_an_answer_committed_without_its_record_is_found_by_its_key(state: State) -> None:
    """A build killed between an answer's commit and the end of its run: the next finds the
    answer in the cache by the action's key and records it, with no call."""
    first = settled(state, [action(0)])[0]
    state.put_cache(first.key, "digest", {"n": 7}, 10, 3)  # as the runner commits an answer
    assert state.actions() == {}
    backend = Counted(state.path)
    again = settled(state, [action(0)])
    Runner(state, lambda: backend).run(again)
    assert (again[0].status, again[0].output, backend.calls) == ("cached", {"n": 7}, 0)
    assert state.actions()[first.id].key == first.key
    assert settled(state, [action(0)])[0].status == "up_to_date"
