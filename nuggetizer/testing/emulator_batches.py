"""The files and batches endpoints of the emulator (emulator.py): OpenAI's Batch API.

Each request line of a batch is answered by the emulator's own chat logic (`Emulator.chat`,
logged with "via": "batch"), so a batch's answer is the live answer to the same request.

    POST /v1/files (multipart: purpose, file)     GET /v1/files/ID/content
    POST /v1/batches (input_file_id, ...)         GET /v1/batches/ID

Settings (POST /_control, with the chat ones):
  batch_polls      a batch whose lines are answered ends at its Nth GET (default 1)
  batch_hold       true: every batch stays in_progress (a command can be killed while polling)
  batch_hold_from  N: the Nth batch created and every later one stay in_progress (the earlier
                   ones end: a command can be killed between rounds)
  batch_expire     N: a batch answers only its first N lines, then ends "expired"
  batch_fail_rate  share of lines answered HTTP 500 in the error file (a hash of the seed, the
                   line's custom_id and how many times that custom_id was batched before)
  batch_fail       [TEXT, ...]: a line whose messages contain TEXT always fails
  batch_busy       N: the next N calls of the files and batches endpoints answer HTTP 429
                   (Retry-After 0.05 s), as a busy Batch API does
  batch_page       N: GET /v1/batches lists at most N batches a page (default 100; `limit`
                   and `after` as OpenAI's)
GET /_stats has the counters under "batches": files, batches (created), lines, polls, busy
(the 429s answered).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any

Answer = tuple[int, dict[str, str], Any]
TERMINAL = ("completed", "expired", "failed", "cancelled")


def multipart_file(raw: bytes, content_type: str) -> bytes | None:
    """The content of the `file` field of a multipart/form-data body."""
    boundary = content_type.partition("boundary=")[2].strip('"')
    if not boundary:
        return None
    for part in raw.split(b"--" + boundary.encode()):
        head, _, body = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return body[:-2] if body.endswith(b"\r\n") else body
    return None


class Batches:
    """Uploaded files, batches and their lines, answered by `emulator.chat`."""

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self.settings: dict[str, Any] = {"batch_polls": 1, "batch_hold": False,
                                         "batch_hold_from": None,
                                         "batch_expire": None, "batch_fail_rate": 0.0,
                                         "batch_fail": [], "batch_busy": 0,
                                         "batch_page": 100}
        self.counts = {"files": 0, "batches": 0, "lines": 0, "polls": 0, "busy": 0}
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.seen: dict[str, int] = {}

    def set(self, name: str, value: Any) -> None:
        if name not in self.settings:
            raise ValueError(f"unknown setting {name!r}")
        self.settings[name] = value

    def stats(self) -> dict[str, Any]:
        return {**self.counts, "settings": self.settings}

    async def route(self, method: str, path: str, raw: bytes, headers: dict[str, str]
                    ) -> Answer | None:
        """The answer to a files or batches request, None for another path."""
        parts = path.split("?", 1)[0].rstrip("/").split("/")
        where = next((i for i, p in enumerate(parts) if p in ("files", "batches")), None)
        if where is None:
            return None
        kind, rest = parts[where], parts[where + 1:]
        if int(self.settings["batch_busy"]) > 0:
            self.settings["batch_busy"] = int(self.settings["batch_busy"]) - 1
            self.counts["busy"] += 1
            return 429, {"retry-after-ms": "50", "retry-after": "1"}, {
                "error": {"message": "emulated 429 (batch_busy)", "type": "rate_limit"}}
        if kind == "files" and method == "POST" and not rest:
            data = multipart_file(raw, headers.get("content-type", ""))
            if data is None:
                return 400, {}, {"error": {"message": "no file in the upload"}}
            self.counts["files"] += 1
            return 200, {}, self._store(data, "batch")
        if kind == "files" and method == "GET" and len(rest) == 2 and rest[1] == "content":
            if rest[0] not in self.files:
                return 404, {}, {"error": {"message": f"no file {rest[0]}"}}
            return 200, {}, self.files[rest[0]]
        if kind == "batches" and method == "POST" and not rest:
            return self._create(json.loads(raw or b"{}"))
        if kind == "batches" and method == "GET" and not rest:
            return 200, {}, self._listing(path)
        if kind == "batches" and method == "GET" and len(rest) == 1:
            return self._poll(rest[0])
        return 404, {}, {"error": {"message": f"no route {method} {path}"}}

    def _listing(self, path: str) -> dict[str, Any]:
        """A page of the batches, newest first (`limit`, `after`: OpenAI's query)."""
        query = dict(p.partition("=")[::2] for p in path.partition("?")[2].split("&") if p)
        newest = sorted(self.batches.values(), key=lambda b: -int(b["id"].split("_")[1]))
        if query.get("after") in self.batches:
            newest = newest[[b["id"] for b in newest].index(query["after"]) + 1:]
        size = min(int(query.get("limit") or 20), int(self.settings["batch_page"]))
        return {"object": "list", "data": newest[:size], "has_more": len(newest) > size}

    def _store(self, data: bytes, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return {"id": file_id, "object": "file", "bytes": len(data), "purpose": purpose,
                "created_at": int(time.time()), "filename": f"{file_id}.jsonl"}

    def _create(self, body: dict[str, Any]) -> Answer:
        file_id = str(body.get("input_file_id"))
        if file_id not in self.files:
            return 404, {}, {"error": {"message": f"no file {file_id}"}}
        lines = [json.loads(x) for x in self.files[file_id].decode().splitlines() if x.strip()]
        self.counts["batches"] += 1
        batch_id = f"batch_{self.counts['batches']}"
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"),
            "input_file_id": file_id, "completion_window": body.get("completion_window"),
            "status": "in_progress", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()), "metadata": body.get("metadata") or {},
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self.polls[batch_id] = 0
        self.tasks[batch_id] = asyncio.create_task(self._answer(batch_id, lines))
        return 200, {}, self.batches[batch_id]

    def _poll(self, batch_id: str) -> Answer:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {}, {"error": {"message": f"no batch {batch_id}"}}
        self.counts["polls"] += 1
        self.polls[batch_id] += 1
        task = self.tasks[batch_id]
        if (batch["status"] not in TERMINAL and task.done() and not self._held(batch_id)
                and self.polls[batch_id] >= int(self.settings["batch_polls"])):
            output, errors = task.result()
            expired = self.settings["batch_expire"] is not None
            batch["status"] = "expired" if expired else "completed"
            batch[f"{batch['status']}_at"] = int(time.time())
            if output:
                batch["output_file_id"] = self._store(output, "batch_output")["id"]
            if errors:
                batch["error_file_id"] = self._store(errors, "batch_output")["id"]
        return 200, {}, batch

    def _held(self, batch_id: str) -> bool:
        """Whether the batch stays in_progress (batch_hold, batch_hold_from)."""
        start = self.settings["batch_hold_from"]
        number = int(batch_id.split("_")[1])
        return bool(self.settings["batch_hold"]) or (start is not None and number >= int(start))

    def _fails(self, line: dict[str, Any]) -> bool:
        custom_id = str(line.get("custom_id"))
        k = self.seen.get(custom_id, 0)
        self.seen[custom_id] = k + 1
        text = json.dumps(line.get("body", {}).get("messages"))
        if any(marker in text for marker in self.settings["batch_fail"]):
            return True
        digest = hashlib.blake2b(f"{self.emulator.settings.seed}\x1fbatch\x1f{custom_id}"
                                 f"\x1f{k}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64 < float(self.settings["batch_fail_rate"])

    async def _answer(self, batch_id: str, lines: list[dict[str, Any]]) -> tuple[bytes, bytes]:
        """(output file, error file) of a batch: every line answered, concurrently."""
        counts = self.batches[batch_id]["request_counts"]
        limit = self.settings["batch_expire"]
        kept = lines if limit is None else lines[:int(limit)]

        async def one(index: int, line: dict[str, Any]) -> tuple[bool, str]:
            if self._fails(line):
                status, payload = 500, {"error": {"message": "emulated batch line failure",
                                                  "type": "server_error"}}
            else:
                status, _, payload = await self.emulator.chat(line.get("body") or {}, "batch")
            ok = status == 200
            counts["completed" if ok else "failed"] += 1
            self.counts["lines"] += 1
            if payload is None:
                status, payload = 500, {"error": {"message": "emulated dropped request"}}
            record = {"id": f"{batch_id}_req_{index}", "custom_id": line.get("custom_id"),
                      "response": {"status_code": status, "body": payload}, "error": None}
            return ok, json.dumps(record) + "\n"

        answered = await asyncio.gather(*(one(i, line) for i, line in enumerate(kept)))
        output = "".join(text for ok, text in answered if ok).encode()
        errors = "".join(text for ok, text in answered if not ok).encode()
        return output, errors
