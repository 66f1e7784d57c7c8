"""castorini's search API over HTTP (the service RAGDoll's tools and reference resolving use):

    GET {base}/v1/{index}/search?query=...&hits=N  -> {"candidates": [{"docid", "score", "doc"}]}
    GET {base}/v1/{index}/doc/{docid}              -> {"docid", "doc"}  (doc null: not found)

where `doc` is a segment `{"title", "segment"}` (shown `title: segment`) or an object with
`contents` / `content` / `text` / `body`, or a string. A bearer token is read from the
environment variable `token_env` (CASTORINI_API_TOKEN, as RAGDoll reads it), never from a flag.

Every answer is kept in the LLM call cache (when one is given) under the URL's parts, so a rerun
reads the same hits and texts without the service, and a resumed run sends the model the same
tool results (its calls then hit the cache). Timeouts, dropped connections, 429 and 5xx are
tried again (RETRIES times, backing off); anything else is a SearchError naming the URL.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import quote

import aiohttp

from nuggetizer.cache import Cache, cache_key
from nuggetizer.errors import ConfigError
from nuggetizer.search.base import Hit
from nuggetizer.types import Segment

RETRIES = 3
TIMEOUT = 30.0
TOKEN_ENV = "CASTORINI_API_TOKEN"


class SearchError(ConfigError):
    """The search service could not answer."""


def doc_text(payload: Any) -> tuple[str, str]:
    """(text, title) of a `doc` as the service gives it (see the module's doc)."""
    if payload is None:
        return "", ""
    if isinstance(payload, str):
        return payload, ""
    if isinstance(payload, dict):
        title, segment = payload.get("title"), payload.get("segment")
        if isinstance(segment, str):
            return segment, title if isinstance(title, str) else ""
        for name in ("contents", "content", "text", "body"):
            if isinstance(payload.get(name), str):
                return payload[name], title if isinstance(title, str) else ""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True), ""


class CastoriniSearch:
    """Search and read an index of castorini's search API (see the module's doc)."""

    def __init__(self, base_url: str, index: str, *, cache: Cache | None = None,
                 token_env: str = TOKEN_ENV, timeout: float = TIMEOUT) -> None:
        if not index:
            raise ConfigError("castorini's search API needs the index to search: "
                              "--search-index NAME (e.g. msmarco-v2.1-doc-segmented)")
        self.base_url = base_url.rstrip("/")
        self.index = index
        self.cache = cache
        self.token_env = token_env
        self.timeout = timeout
        self.spec = f"castorini:{self.base_url}/v1/{index}"
        self.requests = 0  # sent to the service (the cache's answers not counted)

    def _headers(self) -> dict[str, str]:
        token = os.environ.get(self.token_env, "").strip()
        return {"Authorization": f"Bearer {token}"} if token else {}

    async def _get(self, path: str, params: dict[str, str] | None = None
                   ) -> dict[str, Any] | None:
        """The JSON object at `path` (None for HTTP 404), cached; SearchError after retries."""
        key = cache_key({"search_api": self.base_url, "path": path, "params": params or {}})
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit.get("body")
        url = f"{self.base_url}{path}"
        problem = ""
        for attempt in range(RETRIES + 1):
            if attempt:
                await asyncio.sleep(min(8.0, 0.5 * 2 ** attempt))
            try:
                body = await self._fetch(url, params)
            except _Retry as exc:
                problem = str(exc)
                continue
            if self.cache is not None:
                self.cache.put(key, {"body": body})
            return body
        raise SearchError(f"search API {url}: {problem} (tried {RETRIES + 1} times)")

    async def _fetch(self, url: str, params: dict[str, str] | None) -> dict[str, Any] | None:
        self.requests += 1
        try:  # a session per request: few requests, and no event loop to outlive
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)
                                             ) as session, \
                    session.get(url, params=params, headers=self._headers()) as answer:
                status, raw = answer.status, await answer.read()
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _Retry(f"no answer ({type(exc).__name__}: {exc})") from exc
        if status == 404:
            return None
        if status == 429 or status >= 500:
            raise _Retry(f"HTTP {status}")
        if status != 200:
            raise SearchError(f"search API {url}: HTTP {status}: {raw[:200]!r}")
        try:
            body = json.loads(raw)
        except ValueError:
            raise SearchError(f"search API {url}: the answer is not JSON: {raw[:200]!r}") \
                from None
        if not isinstance(body, dict):
            raise SearchError(f"search API {url}: the answer is not a JSON object")
        return body

    async def search(self, query: str, k: int) -> list[Hit]:
        body = await self._get(f"/v1/{quote(self.index, safe='')}/search",
                               {"query": query, "hits": str(k)})
        hits = []
        for item in (body or {}).get("candidates") or []:
            if not isinstance(item, dict) or item.get("docid") is None:
                continue
            text, title = doc_text(item.get("doc"))
            score = item.get("score")
            hits.append(Hit(str(item["docid"]), float(score) if score is not None else 0.0,
                            f"{title}: {text}" if title else text, title))
        return hits[:k]

    async def document(self, docid: str) -> Segment | None:
        body = await self._get(f"/v1/{quote(self.index, safe='')}/doc/{quote(docid, safe='')}")
        if body is None or body.get("doc") is None:
            return None
        text, title = doc_text(body["doc"])
        return Segment(id=str(body.get("docid") or docid), text=text, title=title)

    def provenance(self) -> dict[str, Any]:
        return {"backend": "castorini", "url": self.base_url, "index": self.index}

    async def aclose(self) -> None:
        """Nothing held between requests."""


class _Retry(Exception):
    """A failure worth trying again."""
