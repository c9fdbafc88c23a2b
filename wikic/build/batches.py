"""A stage's pending model actions through the provider's Batch API (`wikic build --batch`,
`model.batch: auto`): submit them as one batch and stop; a later build collects the
answers, which then go through the runner exactly as live answers do (validation,
repair requests, fallbacks, the response cache); lines that failed go live, lines the
provider never ran (expiry) go into the next batch.

A submission is recorded under wikic's own name for it before anything is sent, and the
provider's batch carries that name, so a build killed at any point finds its batch
again instead of submitting twice (state.begin_batch, BatchAPI.find). A collected batch
is forgotten only after its answers are stored.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wikic.build.actions import Action, Runner
from wikic.build.report import Progress, Report
from wikic.errors import UsageError
from wikic.state import BatchRecord, State

if TYPE_CHECKING:
    from wikic.backends.batch import BatchAPI
    from wikic.config import ModelConfig


class Batches:
    """A build's batches: whether a stage goes through one, collecting, submitting, waiting."""

    def __init__(
        self,
        state: State,
        runner: Runner,
        cfg: ModelConfig,
        report: Report,
        progress: Progress,
        *,
        force: bool = False,  # --batch
        wait: bool = False,  # --wait
        offline: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.state, self.runner, self.cfg, self.report, self.progress = state, runner, cfg, report, progress
        self.force, self.wait, self.offline, self.sleep = force, wait, offline, sleep
        self.collected: list[str] = []  # tokens whose answers the runner is about to store
        self._api: BatchAPI | None = None

    def wanted(self, pending: list[Action]) -> bool:
        """Whether these pending actions are sent as a batch rather than live."""
        if self.offline or not pending:
            return False
        return self.force or (self.cfg.batch == "auto" and len(pending) >= self.cfg.batch_min)

    def settle(self, pending: list[Action]) -> list[Action]:
        """Prime the runner with the answers of the stage's finished batches, submit what is
        left when batching; return the actions still waiting on a batch (not to run now)."""
        if not pending or self.offline:
            return []
        stage = pending[0].stage
        records = self.state.batches(stage)
        if not records and not self.wanted(pending):
            return []
        keys = {a.key for a in pending}
        while True:
            waiting, live = self._collect(records, keys)
            taken = waiting | live | set(self.runner.primed)
            unsent = [a for a in pending if a.key not in taken]
            if self.wanted(unsent):
                waiting |= self._submit(stage, unsent)
            if not (waiting and self.wait):
                break
            self.progress.message(f"waiting {self.cfg.batch_poll:g} s for {len(waiting)} {stage} answers")
            self.sleep(self.cfg.batch_poll)
            records = self.state.batches(stage)
        return [a for a in pending if a.key in waiting and a.key not in self.runner.primed]

    def close(self) -> None:
        """Forget the batches whose answers the runner has stored."""
        for token in self.collected:
            self.state.end_batch(token)
        self.collected = []

    # --- the provider -------------------------------------------------------------
    def api(self) -> BatchAPI:
        if self._api is None:
            from wikic.backends.batch import BatchAPI
            from wikic.backends.openai_compat import OpenAIBackend

            backend = self.runner.backend()
            if not isinstance(backend, OpenAIBackend):
                raise UsageError(
                    "--batch and model.batch need an OpenAI-compatible Batch API: set model.backend: openai "
                    "(with model.base_url for a server other than OpenAI's)"
                )
            self._api = BatchAPI(backend)
        return self._api

    def _submit(self, stage: str, actions: list[Action]) -> set[str]:
        """One batch of these actions; recorded before the upload, named by a token the provider keeps."""
        api = self.api()
        lines: dict[str, dict[str, Any]] = {}
        for a in actions:
            lines.setdefault(a.key, api.line(a.key, a.render()))
        token = secrets.token_hex(8)
        self.state.begin_batch(token, stage, sorted(lines))
        file_id = api.upload([lines[k] for k in sorted(lines)])
        self.state.set_batch_ids(token, file_id, None)
        batch_id = api.create(file_id, token)
        self.state.set_batch_ids(token, None, batch_id)
        self.report.batches.append(
            {"stage": stage, "batch": batch_id, "status": "submitted", "actions": len(lines)}
        )
        return set(lines)

    def _collect(self, records: list[BatchRecord], keys: set[str]) -> tuple[set[str], set[str]]:
        """(keys still waiting on a running batch, keys to run live now) over the open records."""
        waiting: set[str] = set()
        live: set[str] = set()
        for rec in records:
            if rec.file_id is None:  # killed before the upload was recorded: nothing was created
                self.state.end_batch(rec.token)
                continue
            batch_id = rec.batch_id or self._adopt(rec)
            status = self.api().status(batch_id)
            mine = keys & set(rec.keys)
            if not status.finished:
                waiting |= mine
                entry = {
                    "stage": rec.stage,
                    "batch": batch_id,
                    "status": status.state,
                    "actions": len(rec.keys),
                }
                self.report.batches.append(entry | {"done": status.done, "total": status.total})
                continue
            live |= self._read(rec, batch_id, status, mine)
            self.collected.append(rec.token)
        return waiting, live

    def _adopt(self, rec: BatchRecord) -> str:
        """The batch of a submission whose id was never recorded: found by its token, else created."""
        assert rec.file_id is not None
        api = self.api()
        batch_id = api.find(rec.token) or api.create(rec.file_id, rec.token)
        self.state.set_batch_ids(rec.token, None, batch_id)
        return batch_id

    def _read(self, rec: BatchRecord, batch_id: str, status: Any, mine: set[str]) -> set[str]:
        """Prime the runner with a finished batch's answers; the keys to run live."""
        results = self.api().results(status)
        for key, completion in results.answers.items():
            if key in mine:
                self.runner.primed[key] = completion
        for problem in [*status.errors, *results.unreadable]:
            self.report.warnings.append(f"batch {batch_id}: {problem}")
        failed = mine & set(results.failed)
        for key in sorted(failed)[:5]:
            self.report.warnings.append(
                f"batch {batch_id}: a request failed ({results.failed[key]}); asked live"
            )
        # expired lines wait for the next batch (when batching), any other unanswered one goes live
        unanswered = mine - set(results.answers) - results.expired
        self.report.batches.append(
            {
                "stage": rec.stage,
                "batch": batch_id,
                "status": status.state,
                "actions": len(rec.keys),
                "answered": len(mine & set(results.answers)),
                "expired": len(mine & results.expired),
                "failed": len(unanswered),
            }
        )
        return unanswered
