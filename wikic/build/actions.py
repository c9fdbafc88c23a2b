"""Model actions: their keys, why each one must run (reasons are values, which
`--explain` only prints), and running them with the response cache.

An action's key hashes everything that reaches the model. Its `inputs` hold
one digest per thing a person can change (the source, the template, the model,
the rules...), stored beside the key so a rerun can say which one changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from wikic.backends.base import Backend, Completion, Request
from wikic.backends.structured import Invalid, complete_json
from wikic.errors import AuthError, BackendError, Timeout, Unavailable, WikicError
from wikic.hashing import json_digest
from wikic.pool import run_all
from wikic.state import ActionRecord, State

STAGE_VERSION = {"digest": 2, "write": 2}

INPUT_REASONS = {
    "source": "source changed",
    "template": "prompt template changed",
    "model": "model changed",
    "rules": "writing rules changed",
    "schema": "schema.yaml changed",
    "claims": "its notes changed (an upstream source changed)",
    "privacy": "privacy.redact rules changed",
    "extractor": "extractor changed (the library that reads the PDF, DOCX, ... was upgraded)",
}


@dataclass
class Action:
    """One model call to be made, or found already made."""

    id: str
    stage: str
    label: str
    inputs: dict[str, str]
    render: Callable[[], Request]
    validate: Callable[[Any], Any]
    # what to take when the model's answers stay unusable: made without the model, marked
    # {"fallback": why} so the build can say so and --retry-failed can ask again
    fallback: Callable[[str], Any] | None = None
    status: str = "pending"  # up_to_date | cached | ran | failed
    reason: str = ""
    key: str = ""
    output: Any = None
    error: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    made: Request | None = None  # the request made for its key, kept to be sent (resolve's `keep`)
    keyed: tuple[str, str] | None = None  # a model id and the key of its request, made ahead

    def take_request(self) -> Request:
        """The request to send: the one made for its key where it was kept, else made again."""
        made, self.made = self.made, None
        return made if made is not None else self.render()


def action_key(stage: str, request: Request, model_id: str, extractor: str = "") -> str:
    """`extractor`: what turned a PDF, DOCX, ... into the text the messages hold, so that
    upgrading it runs that source's actions again (absent for text sources: their keys
    stay as they were)."""
    payload = {
        "stage": stage,
        "version": STAGE_VERSION[stage],
        "model": model_id,
        "messages": request.messages,
        "schema": request.schema,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if extractor:
        payload["extractor"] = extractor
    return json_digest(payload)


def reason_for(record: ActionRecord | None, inputs: dict[str, str]) -> str:
    """Why an action whose inputs are not all as last time must be looked at again."""
    if record is None:
        return "new"
    keys = [*inputs, *(k for k in record.inputs if k not in inputs)]  # an input may also go away
    changed = [INPUT_REASONS.get(k, f"{k} changed") for k in keys if record.inputs.get(k) != inputs.get(k)]
    if not changed:
        return "previous answer missing from the cache"
    return ", ".join(changed)


def is_fallback(output: Any) -> bool:
    """An answer made without the model after its own stayed unusable."""
    return isinstance(output, dict) and bool(output.get("fallback"))


def resolve(
    action: Action,
    record: ActionRecord | None,
    state: State,
    model_id: str,
    retry_failed: bool = False,
    known: dict[str, Any] | None = None,
    keep: bool = False,
) -> None:
    """Settle an action from the state alone: up to date, cached, or still to run.
    With `retry_failed`, an answer made without the model (a fallback) is not taken.
    `known`: outputs already read from the cache by key (State.cached_many); `keep`: a pending
    action keeps the request made for its key, to be sent as it is (not made twice)."""
    if record is not None and record.inputs == action.inputs:
        output = known[record.key] if known and record.key in known else state.cached(record.key)
        if output is not None and not (retry_failed and is_fallback(output)):
            action.status, action.key, action.output = "up_to_date", record.key, output
            return
    action.reason = reason_for(record, action.inputs)
    if retry_failed and record is not None and is_fallback(state.cached(record.key)):
        action.reason = "--retry-failed: its last answer was made without the model"
    request = action.render()
    if action.keyed is not None and action.keyed[0] == model_id:  # made with the request, ahead
        action.key = action.keyed[1]
    else:
        action.key = action_key(action.stage, request, model_id, action.inputs.get("extractor", ""))
    output = state.cached(action.key)
    if output is not None and not (retry_failed and is_fallback(output)):
        action.status, action.output = "cached", output
        state.set_action(ActionRecord(action.id, action.stage, action.key, action.inputs))
    elif keep:
        action.made = request


KEEP_MADE = 4096  # pending actions that keep their request from resolve to run: 100,000 are never held
GIVE_UP_AFTER = 3  # consecutive actions failed by an unreachable backend: the rest are not tried


class Runner:
    """Runs the actions that need the model, `jobs` at a time, committing each
    answer at once so that a killed build never pays for it twice. The actions'
    records (which key each action last had) are written together when the run
    ends: a build killed before finds the answers by their keys, in the cache, and
    records them then (resolve). One row a commit, not two: a commit writes every
    page its rows touch, the records' table and its three indexes four of six."""

    def __init__(
        self,
        state: State,
        backend_factory: Callable[[], Backend],
        jobs: int = 1,
        offline: bool = False,
        on_done: Callable[[Action], None] | None = None,
    ) -> None:
        self.state = state
        self.backend_factory = backend_factory
        self.jobs = jobs
        self.offline = offline
        self.on_done = on_done
        self._backend: Backend | None = None
        self._lock = threading.Lock()
        self._refused: AuthError | None = None  # a refused key is refused for every action
        self.primed: dict[str, Completion] = {}  # action key -> its answer from a Batch API (batches.py)
        self._down: list[BackendError] = []  # consecutive actions the backend could not serve
        self._records: list[ActionRecord] = []  # of the answers committed, written when the run ends

    def backend(self) -> Backend:
        with self._lock:
            if self._backend is None:
                self._backend = self.backend_factory()
            return self._backend

    def run(self, actions: list[Action]) -> None:
        todo = [a for a in actions if a.status == "pending"]
        if not todo:
            return
        if self.offline:
            for a in todo:
                a.status = "failed"
                a.error = f"--offline: no cached answer for {a.label} ({a.reason})"
                self._finish(a)
            return
        try:
            if self.jobs <= 1:
                for a in todo:
                    self._run_one(a)
            else:
                # Ctrl-C, SIGTERM (watch) or a bug: the calls under way finish and are kept,
                # the queued ones never start.
                run_all(self._run_one, todo, self.jobs)
        finally:
            records, self._records = self._records, []
            if records:
                with self.state.transaction():
                    self.state.set_actions(records)

    def _run_one(self, action: Action) -> None:
        if self._refused is not None:
            action.status, action.error = "failed", f"not run: {self._refused}"
            self._finish(action)
            return
        if len(self._down) >= GIVE_UP_AFTER:
            action.status = "failed"
            action.error = f"not run: the model failed {len(self._down)} actions in a row ({self._down[-1]})"
            self._finish(action)
            return
        primed = self.primed.get(action.key)
        try:
            backend: Backend = self.backend() if primed is None else _Primed(primed, self.backend)
            output, usage = complete_json(
                backend, action.take_request(), _structural(action.validate), fallback=action.fallback
            )
        except AuthError as exc:
            self._refused = exc
            action.status, action.error = "failed", str(exc)
        except (Unavailable, Timeout) as exc:  # already retried with backoff by the backend
            self._down.append(exc)
            action.status, action.error = "failed", str(exc)
        except WikicError as exc:
            action.status, action.error = "failed", str(exc)
        else:
            action.output = output
            action.usage = {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cached_tokens": usage.cached_tokens,
                "calls": usage.calls,
            }
            if primed is not None:  # its first answer came from a batch: priced as such
                action.usage |= {
                    "batch_prompt_tokens": primed.prompt_tokens,
                    "batch_completion_tokens": primed.completion_tokens,
                }
            action.status = "ran"
            self._down.clear()
            with self._lock:  # one statement: committed as it is run
                self.state.put_cache(
                    action.key, action.stage, output, usage.prompt_tokens, usage.completion_tokens
                )
                self._records.append(ActionRecord(action.id, action.stage, action.key, action.inputs))
        self._finish(action)

    def _finish(self, action: Action) -> None:
        if self.on_done:
            with self._lock:
                self.on_done(action)


class _Primed:
    """A backend whose first answer is one already received (from a batch); the repair
    requests that may follow go to the live backend, as for any live answer."""

    def __init__(self, first: Completion, live: Callable[[], Backend]) -> None:
        self.first: Completion | None = first
        self.live = live
        self.model_id = ""

    def complete(self, request: Request) -> Completion:
        if self.first is not None:
            first, self.first = self.first, None
            return replace(first)
        return self.live().complete(request)


def _structural(validate: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A validator that meets a shape it did not expect (a number where a list should
    be) has met bad output, not a bug: the model is told and asked again."""

    def check(data: Any) -> Any:
        try:
            return validate(data)
        except Invalid:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as exc:
            raise Invalid(f"the answer does not have the requested structure ({type(exc).__name__})") from exc

    return check
