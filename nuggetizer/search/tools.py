"""A searcher offered to a model as tools (OpenAI's tools API), as RAGDoll's agentic nugget
creator has them (its published system prompt names them: `search`, `read_search_results`,
`read_document`, each with a `reason` first); the definitions and answers are our own.

Every answer is a JSON object (the tool message's content); a call with bad arguments gets
`{"error": ...}` back, as a model is told of a mistake, and the conversation goes on. Word
limits bound what one call can put in front of the model (RAGDoll's defaults: 512 words per
hit's snippet, 4,096 per read, 200 lines per read page; at most 100 hits per page).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from nuggetizer.assessors.protocol import ToolCall
from nuggetizer.search.base import Hit, Searcher, passage_text, truncate_words


@dataclass(frozen=True)
class Limits:
    """What one tool call may return."""

    hits: int = 10  # hits per page when the model gives no limit
    max_hits: int = 100  # hits per page at most
    snippet_words: int = 512
    read_lines: int = 200  # lines per read page at most
    read_words: int = 4096


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]
          ) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


REASON = {"type": "string", "description": "why this call, at most 100 words (first)"}
OFFSET = {"type": "integer", "minimum": 1, "description": "1-based position to start from"}
LIMIT = {"type": "integer", "minimum": 1, "description": "how many to return"}

TOOLS = (
    _tool("search", "Search the corpus with a short lexical query; returns a search_id and "
          "the first page of ranked hits (docid, score, snippet).",
          {"reason": REASON, "query": {"type": "string"}, "offset": OFFSET, "limit": LIMIT},
          ["reason", "query"]),
    _tool("read_search_results", "Read further ranked hits of an earlier search by its "
          "search_id, a page at a time.",
          {"reason": REASON, "search_id": {"type": "string"}, "offset": OFFSET, "limit": LIMIT},
          ["reason", "search_id"]),
    _tool("read_document", "Read a document by its docid, a page of lines at a time.",
          {"reason": REASON, "docid": {"type": "string"}, "offset": OFFSET, "limit": LIMIT},
          ["reason", "docid"]),
)


def search_tools() -> tuple[dict[str, Any], ...]:
    """The tool definitions offered to the model."""
    return TOOLS


class _BadCall(ValueError):
    """A call the model got wrong: said back to it."""


@dataclass
class Toolbox:
    """The tools of one conversation over `searcher` (its searches remembered by id)."""

    searcher: Searcher
    limits: Limits = field(default_factory=Limits)
    searches: dict[str, str] = field(default_factory=dict)  # search_id -> query

    @property
    def tools(self) -> tuple[dict[str, Any], ...]:
        """The definitions offered to the model."""
        return TOOLS

    async def run(self, call: ToolCall) -> str:
        """What the call returns, as the tool message's text."""
        try:
            arguments = json.loads(call.arguments or "{}")
            if not isinstance(arguments, dict):
                raise _BadCall("the arguments must be a JSON object")
            if call.name == "search":
                answer = await self._search(arguments)
            elif call.name == "read_search_results":
                answer = await self._page(arguments)
            elif call.name == "read_document":
                answer = await self._read(arguments)
            else:
                raise _BadCall(f"no tool {call.name!r}; the tools are search, "
                               "read_search_results and read_document")
        except (_BadCall, ValueError) as exc:
            answer = {"error": str(exc)}
        return json.dumps(answer, ensure_ascii=False)

    def _window(self, arguments: dict[str, Any], default: int, most: int) -> tuple[int, int]:
        offset, limit = arguments.get("offset", 1), arguments.get("limit", default)
        if not isinstance(offset, int) or not isinstance(limit, int) or offset < 1 or limit < 1:
            raise _BadCall("offset and limit must be positive integers")
        return offset, min(limit, most)

    @staticmethod
    def _text(arguments: dict[str, Any], name: str) -> str:
        value = arguments.get(name)
        if not isinstance(value, str) or not value.strip():
            raise _BadCall(f"{name} must be a non-empty string")
        return value.strip()

    async def _search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        query = self._text(arguments, "query")
        search_id = "s" + hashlib.sha256(query.encode()).hexdigest()[:10]
        self.searches[search_id] = query
        return await self._hits(search_id, query, arguments)

    async def _page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        search_id = self._text(arguments, "search_id")
        if search_id not in self.searches:
            raise _BadCall(f"no search {search_id!r} in this conversation: search first")
        return await self._hits(search_id, self.searches[search_id], arguments)

    async def _hits(self, search_id: str, query: str, arguments: dict[str, Any]
                    ) -> dict[str, Any]:
        offset, limit = self._window(arguments, self.limits.hits, self.limits.max_hits)
        ranked = await self.searcher.search(query, offset + limit)  # one more: is there more?
        page = ranked[offset - 1: offset - 1 + limit]
        answer: dict[str, Any] = {"search_id": search_id, "query": query,
                                  "hits": [self._hit(offset + i, h) for i, h in enumerate(page)]}
        if len(ranked) > offset - 1 + limit:
            answer["nextOffset"] = offset + limit
        return answer

    def _hit(self, rank: int, hit: Hit) -> dict[str, Any]:
        snippet, cut = truncate_words(hit.text, self.limits.snippet_words)
        return {"rank": rank, "docid": hit.docid, "score": hit.score, "snippet": snippet,
                "snippetTruncated": cut}

    async def _read(self, arguments: dict[str, Any]) -> dict[str, Any]:
        docid = self._text(arguments, "docid")
        offset, limit = self._window(arguments, self.limits.read_lines, self.limits.read_lines)
        document = await self.searcher.document(docid)
        if document is None:
            return {"found": False, "docid": docid}
        lines = passage_text(document).splitlines() or [""]
        chosen = lines[offset - 1: offset - 1 + limit]
        text, cut = truncate_words("\n".join(chosen), self.limits.read_words)
        end = offset + len(chosen) - 1
        answer: dict[str, Any] = {"found": True, "docid": docid, "text": text, "offset": offset,
                                  "totalUnits": len(lines), "truncated": cut or end < len(lines)}
        if end < len(lines):
            answer["nextOffset"] = end + 1
        return answer
