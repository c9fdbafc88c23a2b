"""A fake OpenAI-compatible Batch API for tests: files, batches and chat completions,
answered as the scripted backend would. Served in process (`transport()`, for
httpx.MockTransport under the real `openai` client) or on 127.0.0.1 (`serve()`, for
a `wikic build` in another process). Tests steer it: how many looks a batch takes to
finish, which lines fail, expire or come back malformed, and holding a create."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from wikic.backends.base import Request
from wikic.backends.scripted import ScriptedBackend
from wikic.config import ModelConfig


@dataclass
class FakeBatchAPI:
    polls_to_finish: int = 0  # looks at a batch before it is done
    fail: set[str] = field(default_factory=set)  # substrings of a line's prompt: that line fails
    garbage: set[str] = field(default_factory=set)  # ... answers with text that is not JSON
    expire_after: int | None = None  # lines a batch answers before it expires (None: never)
    malformed: bool = False  # the output file gets lines that are not batch results
    hold_create: threading.Event | None = None  # set: create records the batch, then waits for it
    created: list[str] = field(default_factory=list)  # batch ids, in order of creation
    live: int = 0  # chat completions answered live
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    creating: threading.Event = field(default_factory=threading.Event)  # a create has arrived
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.model = ScriptedBackend(ModelConfig(backend="scripted", name="fake"))

    # --- routes -------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        path = path.split("?")[0].rstrip("/")
        if method == "POST" and path.endswith("/chat/completions"):
            with self.lock:
                self.live += 1
            return 200, self.answer(json.loads(body))
        if method == "POST" and path.endswith("/files"):
            return 200, self._upload(headers, body)
        if method == "POST" and path.endswith("/batches"):
            return 200, self._create(json.loads(body))
        if method == "GET" and path.endswith("/batches"):
            return 200, {"object": "list", "data": list(self.batches.values()), "has_more": False}
        if method == "GET" and "/batches/" in path:
            return 200, self._look(path.rsplit("/", 1)[1])
        if method == "GET" and path.endswith("/content"):
            return 200, self.files[path.split("/")[-2]]
        return 404, {"error": {"message": f"no route {method} {path}"}}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
        prompt = json.dumps(body["messages"])
        if any(g in prompt for g in self.garbage) and len(body["messages"]) <= 2:
            text = "I cannot answer in JSON, sorry."  # the repair request (a third message) is answered
        else:
            text = self.model.complete(Request(body["messages"], schema=schema)).text
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def _upload(self, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        boundary = headers["content-type"].split("boundary=")[1].encode()
        data = b""
        for part in body.split(b"--" + boundary):
            if b'name="file"' in part:
                data = part.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
        with self.lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": 0,
            "filename": "wikic-batch.jsonl",
            "purpose": "batch",
            "status": "processed",
        }

    def _create(self, req: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            lines = self.files[req["input_file_id"]].decode().splitlines()
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": req["endpoint"],
                "errors": None,
                "input_file_id": req["input_file_id"],
                "completion_window": req["completion_window"],
                "status": "in_progress",
                "created_at": int(time.time()),
                "output_file_id": None,
                "error_file_id": None,
                "metadata": req.get("metadata") or {},
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "_looks": 0,
            }
            self.created.append(batch_id)
        self.creating.set()
        if self.hold_create is not None:
            self.hold_create.wait(30)
        return self._public(batch_id)

    def _look(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            batch["_looks"] += 1
            if batch["status"] == "in_progress" and batch["_looks"] > self.polls_to_finish:
                self._finish(batch)
        return self._public(batch_id)

    def _finish(self, batch: dict[str, Any]) -> None:
        out, err = [], []
        for n, raw in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            line = json.loads(raw)
            cid, prompt = line["custom_id"], json.dumps(line["body"]["messages"])
            if self.expire_after is not None and n >= self.expire_after:
                err.append(
                    {
                        "id": f"r{n}",
                        "custom_id": cid,
                        "response": None,
                        "error": {"code": "batch_expired", "message": "not run before the window closed"},
                    }
                )
            elif any(f in prompt for f in self.fail):
                err.append(
                    {
                        "id": f"r{n}",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 500,
                            "request_id": "x",
                            "body": {"error": {"message": "server error"}},
                        },
                    }
                )
            else:
                out.append(
                    {
                        "id": f"r{n}",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 200,
                            "request_id": "x",
                            "body": self.answer(line["body"]),
                        },
                    }
                )
        text = "".join(json.dumps(x) + "\n" for x in out)
        if self.malformed:
            text = "this is not json\n" + text + '{"no_custom_id": true}\n'
        batch["output_file_id"] = self._store(text)
        batch["error_file_id"] = self._store("".join(json.dumps(x) + "\n" for x in err)) if err else None
        batch["status"] = "expired" if self.expire_after is not None else "completed"
        batch["request_counts"] = {"total": len(out) + len(err), "completed": len(out), "failed": len(err)}

    def _store(self, text: str) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = text.encode()
        return file_id

    def _public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    # --- serving ------------------------------------------------------------------
    def transport(self) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            status, payload = self.handle(
                request.method, request.url.path, dict(request.headers), request.read()
            )
            if isinstance(payload, bytes):
                return httpx.Response(status, content=payload)
            return httpx.Response(status, json=payload)

        return httpx.MockTransport(handler)

    @contextmanager
    def serve(self) -> Iterator[str]:
        """The API on 127.0.0.1; yields its base_url."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = fake.handle(self.command, self.path, headers, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client was killed while waiting
                    self.wfile.write(data)

            do_GET = do_POST = _any  # noqa: N815 (http.server's names)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        finally:
            if self.hold_create is not None:
                self.hold_create.set()
            httpd.shutdown()
            httpd.server_close()
