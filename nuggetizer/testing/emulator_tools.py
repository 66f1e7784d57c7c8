"""The emulator's answers to a request that offers tools (OpenAI's tools API), for testing
agentic nugget creation (methods/nuggets/agentic.py) without a model.

Its agent is simple and deterministic: the first round searches the topic's query (the
prompt's `Search Query:` line), the rounds after it read the first document of the last search
it has not read yet (or search again for a further page when none is left), until
`tool_rounds` rounds of calls are done; then it answers the nugget list, made of the first
words of each passage it read or saw (at most the prompt's `at most N nuggets`). A request
with `tool_choice` "none" is answered at once. A prompt that names no tool it knows gets a
call of the first tool with empty arguments.
"""

from __future__ import annotations

import json
import re
from typing import Any

SEARCH_QUERY = re.compile(r"^Search Query: (.*)$", re.MULTILINE)
AT_MOST = re.compile(r"at most (\d+) nuggets")
WORDS_PER_NUGGET = 8


def offered(body: dict[str, Any]) -> list[str]:
    """The names of the tools a request offers."""
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.append(str(function["name"]))
    return names


def _results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool messages' contents that are JSON objects, in order."""
    found = []
    for message in messages:
        if message.get("role") != "tool":
            continue
        try:
            value = json.loads(str(message.get("content") or ""))
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _rounds(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))


def next_call(body: dict[str, Any], prompt: str, rounds_wanted: int) -> dict[str, Any] | None:
    """The tool call of this round (`{"name", "arguments"}`), or None to answer now."""
    names = offered(body)
    messages = body.get("messages") or []
    done = _rounds(messages)
    if not names or body.get("tool_choice") == "none" or done >= rounds_wanted:
        return None
    match = SEARCH_QUERY.search(prompt)
    query = " ".join((match.group(1) if match else prompt).split()[:12])
    if "search" not in names:
        return {"name": names[0], "arguments": {}}
    results = _results(messages)
    read = {r.get("docid") for r in results if "text" in r}
    hits = [h.get("docid") for r in results for h in r.get("hits") or []
            if isinstance(h, dict)]
    unread = [d for d in hits if d and d not in read]
    if done == 0 or not unread or "read_document" not in names:
        searches = sum(1 for r in results if "hits" in r)
        return {"name": "search", "arguments": {
            "reason": "find evidence for the query", "query": query,
            "offset": 1 + 5 * searches, "limit": 5}}
    return {"name": "read_document", "arguments": {
        "reason": "verify the top hit", "docid": unread[0], "offset": 1, "limit": 50}}


def final_nuggets(body: dict[str, Any], prompt: str) -> list[str]:
    """The answer after the tool rounds: the first words of each passage read (else of each
    search hit), at most the prompt's limit."""
    limit_match = AT_MOST.search(prompt)
    limit = int(limit_match.group(1)) if limit_match else 30
    results = _results(body.get("messages") or [])
    texts = [str(r["text"]) for r in results if isinstance(r.get("text"), str)]
    texts += [str(h.get("snippet") or "") for r in results for h in r.get("hits") or []
              if isinstance(h, dict)]
    nuggets: list[str] = []
    for text in texts:
        words = text.split()[:WORDS_PER_NUGGET]
        nugget = " ".join(words)
        if words and nugget not in nuggets:
            nuggets.append(nugget)
    return nuggets[:limit] or ["nothing relevant found"]


def call_message(seq: int, call: dict[str, Any]) -> dict[str, Any]:
    """The assistant message that makes `call`."""
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_{seq}", "type": "function",
        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
