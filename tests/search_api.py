"""A search service of castorini's shape on 127.0.0.1 for tests (nuggetizer/search/castorini.py
is its client): `GET /v1/{index}/search?query=&hits=` ranks a corpus file with a BM25 index of
it, `GET /v1/{index}/doc/{docid}` reads a document (`doc` null when there is none); it counts
the requests and the bearer tokens it was sent, and answers 401 without the token it is given."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from shared_data import RAG26_DEV

from nuggetizer.search.bm25 import Bm25Index


@dataclass
class SearchApi:
    url: str
    index: str
    paths: list[str] = field(default_factory=list)
    tokens: list[str | None] = field(default_factory=list)


@contextmanager
def search_api(corpus: Path, folder: Path, index: str = "dev26",
               token: str | None = None) -> Iterator[SearchApi]:
    """Serve `corpus` (indexed into `folder`) as the index `index`."""
    bm25 = Bm25Index.open(corpus, folder)
    state = SearchApi("", index)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parsed = urlparse(self.path)
            state.paths.append(self.path)
            given = self.headers.get("Authorization")
            state.tokens.append(given)
            if token is not None and given != f"Bearer {token}":
                return self.answer(401, {"error": "unauthorized"})
            parts = parsed.path.split("/")
            if len(parts) < 4 or parts[1] != "v1" or parts[2] != index:
                return self.answer(404, {"error": "no such index"})
            if parts[3] == "search":
                query = parse_qs(parsed.query)
                hits = bm25.search_now(query["query"][0], int(query["hits"][0]))
                return self.answer(200, {"query": {"text": query["query"][0]}, "candidates": [
                    {"docid": h.docid, "score": h.score,
                     "doc": {"segment": bm25.by_id[h.docid].text}} for h in hits]})
            if parts[3] == "doc" and len(parts) == 5:
                doc = bm25.by_id.get(unquote(parts[4]))
                return self.answer(200, {"docid": unquote(parts[4]),
                                         "doc": {"segment": doc.text} if doc else None})
            return self.answer(404, {"error": "no route"})

        def answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def dev_corpus(tmp: Path, topics: int) -> tuple[Path, Path]:
    """(topics TSV, corpus JSONL): the first `topics` 2026 development narratives, and one
    passage per nugget of every development topic (1,255 passages, ids rag25-QID-NNN)."""
    lines = (RAG26_DEV / "rag25-topics-dev.tsv").read_text(encoding="utf-8").splitlines()
    topic_file = tmp / "topics.tsv"
    topic_file.write_text("\n".join(lines[:topics]) + "\n", encoding="utf-8")
    corpus = tmp / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as out:
        for line in (RAG26_DEV / "rag25-dev-nuggets.jsonl").read_text().splitlines():
            record = json.loads(line)
            for k, nugget in enumerate(record["nuggets"]):
                out.write(json.dumps({"id": f"rag25-{record['qid']}-{k:03d}",
                                      "contents": nugget["text"]}) + "\n")
    return topic_file, corpus


def run_2026(path: Path, run_id: str, answers: dict[str, list[str]]) -> Path:
    """A run in the TREC RAG 2026 format, one answer per narrative, citing its references."""
    narratives = dict(line.split("\t", 1) for line in
                      (path.parent / "topics.tsv").read_text().splitlines())
    with path.open("w", encoding="utf-8") as out:
        for qid, refs in answers.items():
            out.write(json.dumps({
                "metadata": {"team_id": "t", "run_id": run_id, "narrative_id": qid,
                             "narrative": narratives[qid], "run_desc": "test"},
                "references": refs,
                "answer": [{"text": f"Sentence {k}.", "citations": [k]}
                           for k in range(len(refs))]}) + "\n")
    return path
