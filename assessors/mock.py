"""`mock` / `mock:NAME`: a backend that needs no model, for trying a pipeline or a method of
your own end to end, and for tests. Every answer is deterministic (a hash of the prompt) and
fits the request's JSON schema: labels from its enums, numbers in its bounds, arrays of the
lengths it allows, strings made of the prompt's own words within its lengths. A request with
top_logprobs gets first-token log-probabilities of "Yes" and "No". Nothing it answers means
anything: it exercises the steps, never the judgments. Checks that a schema cannot express
(KPR's merge must cite every point once) fail to parse, and those items end unjudged.
A request that offers tools gets TOOL_ROUNDS rounds of calls first, each of a tool picked by
the hash with arguments that fit its parameters (a `docid` one of those the results so far
name, when there is one), then its answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from .protocol import Completion, Request

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_DOCID = re.compile(r'"docid": "([^"]+)"')
TOOL_ROUNDS = 2


class MockBackend:
    """Answers every request at once from its schema (see the module doc)."""

    max_concurrency = 8
    calls_tools = True

    def __init__(self, model: str = "") -> None:
        self.model = model or "mock"
        self.spec = f"mock:{model}" if model else "mock"
        self.endpoint = "mock://"
        self.calls = 0

    async def complete(self, request: Request) -> Completion:
        self.calls += 1
        prompt = request.messages[-1][1] if request.messages else ""
        answer = _Answer(prompt)
        if request.tools and request.tool_choice != "none" and \
                len(request.turns) < TOOL_ROUNDS:
            return self._call(request, _Answer(f"{prompt}\x1f{len(request.turns)}"))
        if request.schema is not None:
            text = json.dumps(answer.value(request.schema, "$"))
        else:
            text = answer.words("$", 1, 12)
        logprobs = None
        if request.top_logprobs > 0:
            yes = 0.05 + 0.9 * answer.unit("logprob")
            logprobs = {"Yes": math.log(yes), "No": math.log(1 - yes)}
        return Completion(text=text, model=self.model, prompt_tokens=len(prompt) // 4 + 1,
                          completion_tokens=len(text) // 4 + 1, finish_reason="stop",
                          first_token_logprobs=logprobs)

    def _call(self, request: Request, answer: _Answer) -> Completion:
        """A round of the tools: one call of a tool the hash picks (see the module's doc)."""
        tool = request.tools[answer.pick("tool", len(request.tools))]["function"]
        parameters = tool.get("parameters") or {"type": "object", "properties": {}}
        arguments = answer.value(parameters, "$" + tool["name"])
        seen = [d for turn in request.turns for result in turn.results
                for d in _DOCID.findall(result)]
        if "docid" in arguments and seen:
            arguments["docid"] = seen[answer.pick("docid", len(seen))]
        text = json.dumps(arguments)
        call = {"id": f"mock_{len(request.turns)}", "name": tool["name"], "arguments": text}
        return Completion(text="", model=self.model, prompt_tokens=len(answer.prompt) // 4 + 1,
                          completion_tokens=len(text) // 4 + 1, finish_reason="tool_calls",
                          tool_calls=[call])

    async def aclose(self) -> None:
        """Nothing to release."""


class _Answer:
    """The values of one prompt's answer: each a hash of the prompt and its place."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.vocabulary = _WORD.findall(prompt)[-400:] or ["mock", "answer"]

    def unit(self, where: str) -> float:
        """A number in [0, 1) hashed from the prompt and `where`."""
        digest = hashlib.blake2b(f"{where}\x1f{self.prompt}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def pick(self, where: str, count: int) -> int:
        return int(self.unit(where) * count)

    def words(self, where: str, low: int, high: int) -> str:
        """A few of the prompt's words, `low`..`high` characters long."""
        count = 3 + self.pick(where + "#", 6)
        picked = [self.vocabulary[self.pick(f"{where}#{i}", len(self.vocabulary))]
                  for i in range(count)]
        text = " ".join(picked)
        while len(text) < low:
            text += " mock"
        return text[:high].strip() or "mock"[:high]

    def value(self, schema: dict[str, Any], where: str) -> Any:
        """A value that fits `schema` (enum, const, anyOf, object, array, scalars)."""
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][self.pick(where, len(schema["enum"]))]
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                return self.value(schema[key][0], where)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            properties = schema.get("properties") or {}
            return {name: self.value(sub, f"{where}.{name}")
                    for name, sub in properties.items()}
        if kind == "array":
            low = int(schema.get("minItems", 1))
            high = int(schema.get("maxItems", max(low, 3)))
            count = low + self.pick(where + "[]", high - low + 1)
            return [self.value(schema.get("items") or {}, f"{where}[{i}]")
                    for i in range(count)]
        if kind in ("integer", "number"):
            low = schema.get("minimum", 0)
            high = schema.get("maximum", low + 3)
            number = low + self.unit(where) * (high - low)
            return round(number) if kind == "integer" else number
        if kind == "boolean":
            return self.unit(where) < 0.5
        if kind == "null":
            return None
        return self.words(where, int(schema.get("minLength", 1)),
                          int(schema.get("maxLength", 80)))


def make_backend(model: str, **_: Any) -> MockBackend:
    """The `mock` kind's factory (registered in nuggetizer.assessors)."""
    return MockBackend(model)
