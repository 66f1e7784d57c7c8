"""An OpenAI-compatible chat server that emulates an LLM for benchmarks and fault tests.

    python benchmarks/emulator.py --port 0 --port-file port.txt --log requests.jsonl \
        --latency 0.1 --jitter 0.02 --fault-rate 0.2 --seed 1

It answers the nuggetizer's prompts (assignment, importance, nugget creation) with well-formed
lists, deterministic given the seed: the labels of a prompt are a hash of the seed and the
prompt's first user message, so a re-ask or a retry gets the same labels as the first try.
Whether a request fails is a hash of the seed, the request's messages and how many times that
same request was seen before (k), so a run is reproducible whatever the arrival order.

Faults (`--fault-rate`, spread over `--fault-mix` with optional weights, e.g. `429:2,500,drop`):
  429        HTTP 429 with Retry-After (`--retry-after` seconds, also as retry-after-ms)
  500        HTTP 500
  timeout    no answer for `--hang` seconds (longer than the client's timeout)
  drop       the connection is closed without an answer
  truncated  the answer cut in half, finish_reason "length"
  offmenu    a label that is not on the menu
  count      one label too many or too few
  garbage    prose without any list
`--poison TEXT` (repeatable): a prompt containing TEXT always gets garbage (never parses).
`--refuse TEXT` (repeatable): a request whose messages contain TEXT is refused at once with
HTTP 400 and OpenAI's context-length error body, as a server does for a prompt too long.
`--fail TEXT` (repeatable): a request whose messages contain TEXT is answered HTTP 500 every
time (a server that fails on some inputs: retried, then given up on).
`--api-key KEY`: answer HTTP 401 to requests without `Authorization: Bearer KEY`;
`--model NAME` (repeatable): answer HTTP 404 (model_not_found) to requests for other models.
`--persona reasoning`: an OpenAI-style reasoning model (emulator_reasoning.py, its flags).
Pairwise battles (MT-Bench's layout, prompts/battle_judge) get `{"verdict": "A"|"B"|"tie"}`:
the clearly longer answer wins, else a hash of the prompt decides. Citation support
(prompts/support_judge, the paper's) gets `{"label": ...}`, "Full Support", "Partial Support"
or "No Support", a hash of the prompt. RAGDoll's rubric author gets criteria made of the
nuggets (emulator_rubrics.py).
`--obey-injection`: like a model hijacked by the passage, it answers the last `Labels: [...]`
list written inside the passage, when there is one.
A request that offers tools (agentic nugget creation) is answered by emulator_tools.py's agent:
a search, then reads of the hits, `--tool-rounds` rounds of calls (default 2), then the nugget
list made of what it read; the log entry names the tools called (`tools`).

Every request is logged as one JSON line: arrival and answer times (t0, t), seq, digest of the
messages, k, prompt kind, its search query, outcome, HTTP status, and for an answer the
prompt_tokens and completion_tokens its `usage` reports (characters / 4, deterministic).
POST /_control with a JSON object changes settings at run time (e.g. {"answer_limit": 10}:
after 10 good answers, hold every request until the limit is lifted); GET /_stats returns the
counters. The Batch API (files and batches endpoints, its `batch_*` settings) is in
emulator_batches.py. Standard library only; one process, asyncio.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.testing.emulator_batches import (
    Batches,  # the files and batches endpoints (Batch API)
)
from nuggetizer.testing.emulator_reasoning import add_arguments, rejection, think
from nuggetizer.testing.emulator_rubrics import AUTHOR, authored
from nuggetizer.testing.emulator_tools import call_message, final_nuggets, next_call

ASSIGN = re.compile(r"label each of the (\d+) nuggets either as support, partial_support, or "
                    r"not_support")
ASSIGN2 = re.compile(r"label each of the (\d+) nuggets either as support or not_support")
IMPORTANCE = re.compile(r"label each of the (\d+) nuggets either a vital or okay")
CREATE = re.compile(r"Update the list of atomic nuggets.*?at most (\d+) nuggets", re.DOTALL)
INITIAL = re.compile(r"^Initial Nugget List: (.*)$", re.MULTILINE)
CONTEXT_LINE = re.compile(r"^\[\d+\] (.*)$", re.MULTILINE)
QUERY = re.compile(r"^Search Query: (.*)$", re.MULTILINE)
INJECTED = re.compile(r"Labels:\s*(\[[^\[\]]*\])")
BATTLE = re.compile(r"\[The Start of Assistant A's Answer\]\n(.*?)\n\[The End of Assistant A's "
                    r"Answer\].*?\[The Start of Assistant B's Answer\]\n(.*?)\n\[The End of "
                    r"Assistant B's Answer\]", re.DOTALL)
SUPPORT = "evaluate whether each statement is supported by its corresponding citations"
SUPPORT_ANSWERS = ("Full Support", "Partial Support", "No Support")
MENUS = {
    "assign": ("support", "partial_support", "not_support"),
    "importance": ("vital", "okay"),
    "assign2": ("support", "not_support"),  # castorini's two-grade assignment
}
FAULTS = ("429", "500", "timeout", "drop", "truncated", "offmenu", "count", "garbage")
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error"}
CONTEXT_LENGTH = 8192


@dataclass
class Settings:
    """What the emulated model does; every field can be changed through POST /_control."""

    seed: int = 0
    latency: float = 0.0
    jitter: float = 0.0
    fault_rate: float = 0.0
    fault_mix: dict[str, float] = field(default_factory=lambda: {k: 1.0 for k in FAULTS})
    retry_after: float = 1.0
    hang: float = 30.0
    poison: list[str] = field(default_factory=list)
    refuse: list[str] = field(default_factory=list)
    fail: list[str] = field(default_factory=list)
    api_key: str | None = None
    models: list[str] = field(default_factory=list)
    obey_injection: bool = False
    answer_limit: int | None = None
    persona: str = "plain"  # or "reasoning" (emulator_reasoning.py)
    reasoning_tokens: int = 256
    reasoning_format: str = "none"
    tool_rounds: int = 2  # rounds of tool calls before the answer (emulator_tools.py)


def parse_mix(text: str) -> dict[str, float]:
    """`429:2,500,drop` -> {"429": 2.0, "500": 1.0, "drop": 1.0}; unknown kinds are an error."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, weight = part.partition(":")
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
        mix[name] = float(weight or 1.0)
    return mix


def unit(*parts: object) -> float:
    """A number in [0, 1) that is a hash of `parts`."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def first_user(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def classify(prompt: str) -> tuple[str, int]:
    """(kind, n): the nuggetizer prompt this is and its label count (or max nuggets);
    ("grade", 0) for UMBRELA's relevance prompts (0-3, and 0-4 on sub-narratives), ("battle",
    0) and ("support", 0) for a battle and a citation's support."""
    if "##final score" in prompt:
        return "grade", 0
    if BATTLE.search(prompt):
        return "battle", 0
    if SUPPORT in prompt:
        return "support", 0
    if AUTHOR in prompt:
        return "author", 0
    for kind, pattern in (("assign", ASSIGN), ("assign2", ASSIGN2), ("importance", IMPORTANCE),
                          ("create", CREATE)):
        match = pattern.search(prompt)
        if match:
            return kind, int(match.group(1))
    return "other", 0


def good_answer(settings: Settings, kind: str, n: int, prompt: str) -> list[str]:
    """The well-formed answer: labels, or an updated nugget list, a hash of seed and prompt."""
    if kind in MENUS:
        menu = MENUS[kind]
        if settings.obey_injection:
            passage = prompt.split("Passage:", 1)[-1].rsplit("\nNugget List:", 1)[0]
            injected = INJECTED.findall(passage)
            if injected:
                try:
                    return [str(x) for x in json.loads(injected[-1])]
                except ValueError:
                    pass
        # unit(seed, prompt, i) for each i, hashing the long common prefix only once
        prefix = hashlib.blake2b(f"{settings.seed}\x1f{prompt}\x1f".encode(), digest_size=8)
        labels = []
        for i in range(n):
            h = prefix.copy()
            h.update(str(i).encode())
            labels.append(menu[int(int.from_bytes(h.digest(), "big") / 2**64 * len(menu))])
        return labels
    if kind == "grade":  # UMBRELA's answer format, a grade 0-3 (0-4) hashed from seed and prompt
        top = 4 if "integer scale of 0 to 4" in prompt else 3
        return [f"##final score: {int(unit(settings.seed, 'grade', prompt) * (top + 1))}"]
    if kind == "battle":
        return [json.dumps({"verdict": battle_verdict(settings.seed, prompt)})]
    if kind == "support":
        u = unit(settings.seed, "support", prompt)
        return [json.dumps({"label": SUPPORT_ANSWERS[int(u * len(SUPPORT_ANSWERS))]})]
    if kind == "author":
        return [authored(settings.seed, prompt)]
    if kind == "create":
        match = INITIAL.search(prompt)
        try:  # JSON, or a Python list as castorini's rendering writes it
            nuggets = [str(x) for x in ast.literal_eval(match.group(1))] if match else []
        except (ValueError, SyntaxError):
            nuggets = []
        for line in CONTEXT_LINE.findall(prompt):
            words = line.split()[:8]
            if words and len(nuggets) < n:
                nuggets.append(" ".join(words))
        return nuggets[:n] or ["nothing relevant found"]
    return []


def battle_verdict(seed: int, prompt: str) -> str:
    """A pairwise battle's verdict: the answer with clearly more words wins (a fifth more),
    else a hash of seed and prompt picks A, B or tie (so the order can flip it)."""
    match = BATTLE.search(prompt)
    a, b = (len(match.group(i).split()) for i in (1, 2)) if match else (0, 0)
    if a > 1.2 * b:
        return "A"
    if b > 1.2 * a:
        return "B"
    return ("A", "B", "tie")[int(unit(seed, "battle", prompt) * 3)]


def faulty_answer(fault: str, kind: str, good: list[str], u: float) -> tuple[str, str | None]:
    """(text, finish_reason) of a content fault."""
    text = json.dumps(good)
    if fault == "truncated":
        return text[: max(1, len(text) // 2)], "length"
    if fault == "offmenu" and kind in MENUS and good:
        bad = list(good)
        bad[int(u * len(bad))] = "maybe_supported" if kind == "assign" else "essential"
        return json.dumps(bad), "stop"
    if fault == "count" and kind in MENUS:
        bad = good + [good[0] if good else MENUS[kind][0]] if u < 0.5 or len(good) < 2 else good[1:]
        return json.dumps(bad), "stop"
    return "I have carefully read the passage and I believe it is quite good overall.", "stop"


class Emulator:
    """The server: state, decisions and the HTTP handling."""

    def __init__(self, settings: Settings, log_path: Path | None) -> None:
        self.settings = settings
        self.seen: dict[str, int] = {}
        self.answered = 0
        self.seq = 0
        self.counts: dict[str, int] = {}
        self.log = open(log_path, "a", encoding="utf-8", buffering=1) if log_path else None
        self.released = asyncio.Event()
        self.released.set()
        self.batches = Batches(self)

    def record(self, entry: dict[str, Any]) -> None:
        entry["t"] = round(time.time(), 4)
        self.counts[entry["outcome"]] = self.counts.get(entry["outcome"], 0) + 1
        if self.log is not None:
            self.log.write(json.dumps(entry) + "\n")

    def control(self, changes: dict[str, Any]) -> dict[str, Any]:
        for name, value in changes.items():
            if name.startswith("batch_"):
                self.batches.set(name, value)
                continue
            if not hasattr(self.settings, name):
                raise ValueError(f"unknown setting {name!r}")
            if name == "fault_mix" and isinstance(value, str):
                value = parse_mix(value)
            setattr(self.settings, name, value)
        self._update_gate()
        return self.stats()

    def stats(self) -> dict[str, Any]:
        return {"requests": self.seq, "answered": self.answered, "outcomes": self.counts,
                "settings": self.settings.__dict__, "batches": self.batches.stats()}

    def _open(self) -> bool:
        limit = self.settings.answer_limit
        return limit is None or self.answered < limit

    def _update_gate(self) -> None:
        if self._open():
            self.released.set()
        else:
            self.released.clear()

    def decide(self, messages: list[dict[str, Any]], digest: str) -> tuple[int, str | None]:
        """(k, fault or None) for a request with this messages digest."""
        k = self.seen.get(digest, 0)
        self.seen[digest] = k + 1
        s = self.settings
        prompt = first_user(messages)
        if any(p in prompt for p in s.poison):
            return k, "garbage"
        if s.fault_rate <= 0 or unit(s.seed, "fault", digest, k) >= s.fault_rate:
            return k, None
        total = sum(s.fault_mix.values())
        pick = unit(s.seed, "kind", digest, k) * total
        for name, weight in s.fault_mix.items():
            pick -= weight
            if pick < 0:
                return k, name
        return k, None

    def gate(self, body: dict[str, Any], headers: dict[str, str]
             ) -> tuple[int, dict[str, str], Any] | None:
        """HTTP 401 for a wrong API key, 404 for an unknown model (OpenAI's bodies), else None."""
        s = self.settings
        status, error = 0, {}
        if s.api_key is not None and headers.get("authorization") != f"Bearer {s.api_key}":
            status, error = 401, {"message": "Incorrect API key provided.",
                                  "type": "invalid_request_error", "code": "invalid_api_key"}
        elif s.models and body.get("model") not in s.models:
            status, error = 404, {"message": f"The model `{body.get('model')}` does not exist "
                                  "or you do not have access to it.",
                                  "type": "invalid_request_error", "code": "model_not_found"}
        if not status:
            return None
        self.seq += 1
        self.record({"t0": round(time.time(), 4), "seq": self.seq, "outcome": str(status),
                     "status": status})
        return status, {}, {"error": error}

    async def chat(self, body: dict[str, Any], via: str = "live"
                   ) -> tuple[int, dict[str, str], Any]:
        """Status, extra headers and JSON body of one chat completion; None body: drop.
        `via`: "live", or "batch" for a line of a batch (in the log)."""
        s = self.settings
        messages = body.get("messages") or []
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]
        self.seq += 1
        seq = self.seq
        k, fault = self.decide(messages, digest)
        prompt = first_user(messages)
        kind, n = classify(prompt)
        if body.get("tools"):
            kind = "agentic"
        query = QUERY.search(prompt)
        entry = {"t0": round(time.time(), 4), "seq": seq, "digest": digest, "k": k, "via": via,
                 "kind": kind, "n": n, "query": query.group(1)[:80] if query else None}
        delay = s.latency + s.jitter * unit(s.seed, "jitter", digest, k)
        if any(marker in str(m.get("content") or "") for m in messages for marker in s.refuse):
            self.record({**entry, "outcome": "refused", "status": 400})
            return 400, {}, refusal(messages, body.get("max_tokens"))
        if s.persona == "reasoning" and (rejected := rejection(body)) is not None:
            self.record({**entry, "outcome": "unsupported", "status": 400,
                         "param": rejected["error"]["param"]})
            return 400, {}, rejected
        if any(marker in str(m.get("content") or "") for m in messages for marker in s.fail):
            fault = "500"
        if fault == "timeout":
            self.record({**entry, "outcome": "timeout", "status": None})
            await asyncio.sleep(s.hang)
            return 0, {}, None
        if fault == "drop":
            await asyncio.sleep(delay / 2)
            self.record({**entry, "outcome": "drop", "status": None})
            return 0, {}, None
        await asyncio.sleep(delay)
        if fault in ("429", "500"):
            status = int(fault)
            headers = {}
            if status == 429:
                headers = {"retry-after-ms": str(int(s.retry_after * 1000)),
                           "retry-after": str(max(1, round(s.retry_after)))}
            self.record({**entry, "outcome": fault, "status": status})
            return status, headers, {"error": {"message": f"emulated {fault}", "type": fault}}
        while not self._open():
            self.released.clear()
            await self.released.wait()
        call = next_call(body, prompt, s.tool_rounds) if kind == "agentic" else None
        good = final_nuggets(body, prompt) if kind == "agentic" else good_answer(s, kind, n,
                                                                                  prompt)
        finish: str | None
        if call is not None and fault in (None, "offmenu", "count"):
            text, finish = "", "tool_calls"
        elif fault is None:
            text, finish = (good[0] if kind in ("grade", "battle", "support", "author")
                            else json.dumps(good)), "stop"
        else:
            text, finish = faulty_answer(fault, kind, good, unit(s.seed, "how", digest, k))
        text = wrap(text, body.get("response_format"), fault)
        self.answered += 1
        self._update_gate()
        words = prompt_tokens(messages)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        completion, usage, reasoning = len(text) // 4 + 1, {}, 0
        if finish == "tool_calls" and call is not None:
            message = call_message(seq, call)
            completion = len(json.dumps(call["arguments"])) // 4 + 1
            entry["tools"] = [call["name"]]
        if s.persona == "reasoning":
            thought = think(message, completion, finish, body, s.reasoning_tokens,
                            s.reasoning_format)
            message, finish, completion, reasoning = (
                thought.message, thought.finish_reason, thought.completion_tokens,
                thought.reasoning_tokens)
            usage = {"completion_tokens_details": {"reasoning_tokens": reasoning}}
        self.record({**entry, "outcome": fault or "ok", "status": 200, "prompt_tokens": words,
                     "completion_tokens": completion, "finish_reason": finish,
                     "reasoning_tokens": reasoning})
        return 200, {}, {
            "id": f"emu-{seq}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "emulated",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": words, "completion_tokens": completion,
                      "total_tokens": words + completion, **usage},
        }

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One keep-alive HTTP/1.1 connection."""
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                status, extra, payload = await self.route(method, path, raw, headers)
                if payload is None:  # drop or hang: close without an answer
                    return
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                head_out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
                            "content-type: application/json", f"content-length: {len(data)}"]
                head_out += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head_out) + "\r\n\r\n").encode() + data)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            return
        finally:
            writer.close()

    async def route(self, method: str, path: str, raw: bytes,
                    headers: dict[str, str]) -> tuple[int, dict, Any]:
        batched = await self.batches.route(method, path, raw, headers)  # query kept
        path = path.split("?", 1)[0].rstrip("/")
        if batched is not None:
            return batched
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return 400, {}, {"error": {"message": "invalid JSON body"}}
        if method == "POST" and path.endswith("/chat/completions"):
            refused = self.gate(body, headers)
            if refused is not None:
                return refused
            return await self.chat(body)
        if method == "GET" and path.endswith("/models"):
            return 200, {}, {"object": "list", "data": [{"id": "emulated", "object": "model"}]}
        if method == "GET" and path.endswith("/_stats"):
            return 200, {}, self.stats()
        if method == "POST" and path.endswith("/_control"):
            try:
                return 200, {}, self.control(body)
            except (ValueError, TypeError) as exc:
                return 400, {}, {"error": {"message": str(exc)}}
        return 404, {}, {"error": {"message": f"no route {method} {path}"}}


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The prompt tokens the emulator reports (`usage`): the characters of the messages' contents
    divided by 4, rounded down (the estimate `nuggetizer.run.tokens` calls `chars`)."""
    return sum(len(str(m.get("content") or "")) for m in messages) // 4


def refusal(messages: list[dict[str, Any]], max_tokens: Any) -> dict[str, Any]:
    """OpenAI's answer to a prompt longer than the model's context."""
    tokens = CONTEXT_LENGTH + sum(len(str(m.get("content") or "")) for m in messages) // 4
    wanted = int(max_tokens or 0)
    return {"error": {
        "message": f"This model's maximum context length is {CONTEXT_LENGTH} tokens. However, "
                   f"you requested {tokens + wanted} tokens ({tokens} in the messages, {wanted} "
                   "in the completion). Please reduce the length of the messages or completion.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}


def wrap(text: str, response_format: Any, fault: str | None) -> str:
    """OpenAI's json_schema mode answers an object: wrap the list as {"items": ...}."""
    if (fault is None and isinstance(response_format, dict)
            and response_format.get("type") == "json_schema"):
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        if schema.get("type") == "object" and "items" in (schema.get("properties") or {}):
            return '{"items": ' + text + "}"
        if schema.get("type") == "object" and "answer" in (schema.get("properties") or {}):
            return json.dumps({"answer": text})
    return text


def settings_from_args(args: argparse.Namespace) -> Settings:
    return Settings(
        seed=args.seed, latency=args.latency, jitter=args.jitter, fault_rate=args.fault_rate,
        fault_mix=parse_mix(args.fault_mix), retry_after=args.retry_after, hang=args.hang,
        poison=list(args.poison), refuse=list(args.refuse), fail=list(args.fail),
        obey_injection=args.obey_injection,
        api_key=args.api_key, models=list(args.model), persona=args.persona,
        reasoning_tokens=args.reasoning_tokens, reasoning_format=args.reasoning_format,
        tool_rounds=args.tool_rounds,
    )


async def serve(args: argparse.Namespace) -> None:
    emulator = Emulator(settings_from_args(args), args.log)
    server = await asyncio.start_server(emulator.handle, args.host, args.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = Path(str(args.port_file) + ".tmp")
        tmp.write_text(str(port))
        tmp.replace(args.port_file)
    print(f"emulator listening on http://{args.host}:{port}/v1", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--port-file", type=Path, help="write the bound port here (for --port 0)")
    parser.add_argument("--log", type=Path, help="append one JSON line per request here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--jitter", type=float, default=0.0, help="extra 0..JITTER seconds")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of faulty requests")
    parser.add_argument("--fault-mix", default=",".join(FAULTS), help="kinds[:weight], comma-sep")
    parser.add_argument("--retry-after", type=float, default=1.0, help="seconds, for 429s")
    parser.add_argument("--hang", type=float, default=30.0, help="seconds a timeout fault holds")
    parser.add_argument("--poison", action="append", default=[], help="never parse prompts "
                        "that contain this text (repeatable)")
    parser.add_argument("--refuse", action="append", default=[], help="answer HTTP 400 "
                        "(context length exceeded) to requests that contain this text "
                        "(repeatable)")
    parser.add_argument("--fail", action="append", default=[], help="answer HTTP 500 to "
                        "requests that contain this text, every time (repeatable)")
    parser.add_argument("--api-key", help="answer HTTP 401 without this bearer key")
    parser.add_argument("--model", action="append", default=[], help="answer HTTP 404 to "
                        "other models (repeatable)")
    parser.add_argument("--obey-injection", action="store_true")
    parser.add_argument("--tool-rounds", type=int, default=2, help="rounds of tool calls "
                        "before answering a request that offers tools")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
