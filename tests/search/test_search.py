"""Search over a corpus (nuggetizer/search/): the BM25 index kept on disk and rebuilt when its
corpus changes, the tools a model is offered over it (pages, word limits, mistakes said back),
castorini's search API over HTTP (a real server on 127.0.0.1 of that shape: tests/search_api.py)
with its answers cached, reference resolving into a corpus file that support's `assign` reads,
and agentic creation searching through the API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from emulated import emulator
from search_api import dev_corpus, run_2026, search_api

from nuggetizer.assessors.protocol import ToolCall
from nuggetizer.cache import Cache
from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.search.bm25 import Bm25Index
from nuggetizer.search.castorini import CastoriniSearch
from nuggetizer.search.tools import Limits, Toolbox

PASSAGES = [
    {"id": "d1", "title": "Reactors", "contents": "Nuclear reactors split uranium atoms.\n"
     "The heat boils water.\nSteam turns a turbine."},
    {"id": "d2", "contents": "Chernobyl and Fukushima were nuclear accidents."},
    {"id": "d3", "contents": "Football clubs pay their athletes large salaries."},
]


def write_corpus(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli_ok(*argv: str) -> Any:
    done = CliRunner().invoke(cli, list(argv))
    assert done.exit_code == 0, done.output + repr(done.exception)
    return done


def test_the_index_is_built_once_kept_and_rebuilt_when_its_corpus_changes(tmp_path: Path
                                                                          ) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", PASSAGES)
    index = Bm25Index.open(corpus, tmp_path / "idx")
    assert index.how.built and index.manifest["documents"] == 3
    assert [h.docid for h in index.search_now("nuclear accidents", 5)][0] == "d2"
    assert index.search_now("reactor uranium", 5)[0].text.startswith("Reactors: Nuclear")
    assert index.search_now("zebra", 5) == [] and index.search_now("the", 5) == []
    assert index.size_bytes() > 0
    again = Bm25Index.open(corpus, tmp_path / "idx")
    assert not again.how.built
    assert Bm25Index.open(None, tmp_path / "idx").manifest == again.manifest
    write_corpus(corpus, [*PASSAGES, {"id": "d4", "contents": "Zebras graze."}])
    changed = Bm25Index.open(corpus, tmp_path / "idx")
    assert changed.how.built and [h.docid for h in changed.search_now("zebras", 2)] == ["d4"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a BM25 index"):
        Bm25Index.open(corpus, tmp_path / "other")
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def run_tool(toolbox: Toolbox, name: str, **arguments: Any) -> dict[str, Any]:
    answer = asyncio.run(toolbox.run(ToolCall("c1", name, json.dumps(arguments))))
    return json.loads(answer)


def test_the_tools_page_search_results_and_documents_within_word_limits(tmp_path: Path
                                                                        ) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", PASSAGES)
    toolbox = Toolbox(Bm25Index.open(corpus, tmp_path / "idx"),
                      Limits(hits=1, snippet_words=3, read_lines=2, read_words=5))
    first = run_tool(toolbox, "search", reason="r", query="nuclear reactors")
    assert [h["docid"] for h in first["hits"]] == ["d1"] and first["nextOffset"] == 2
    assert first["hits"][0]["snippet"] == "Reactors: Nuclear reactors" and \
        first["hits"][0]["snippetTruncated"]
    more = run_tool(toolbox, "read_search_results", reason="r", search_id=first["search_id"],
                    offset=2, limit=5)
    assert [h["docid"] for h in more["hits"]] == ["d2"] and "nextOffset" not in more
    read = run_tool(toolbox, "read_document", reason="r", docid="d1")
    assert read["text"] == "Reactors: Nuclear reactors split uranium" and read["truncated"]
    assert read["totalUnits"] == 3 and read["nextOffset"] == 3
    rest = run_tool(toolbox, "read_document", reason="r", docid="d1", offset=3)
    assert rest["text"] == "Steam turns a turbine." and "nextOffset" not in rest
    assert run_tool(toolbox, "read_document", reason="r", docid="nope") == \
        {"found": False, "docid": "nope"}
    assert "search first" in run_tool(toolbox, "read_search_results", search_id="s0")["error"]
    assert "positive" in run_tool(toolbox, "search", query="x", limit=0)["error"]
    assert "no tool" in run_tool(toolbox, "browse")["error"]
    assert "JSON object" in json.loads(asyncio.run(toolbox.run(ToolCall("c", "search", "[1]"
                                                                         ))))["error"]


def test_the_search_api_is_read_with_its_token_and_its_answers_are_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", PASSAGES)
    monkeypatch.setenv("CASTORINI_API_TOKEN", "sesame")
    with search_api(corpus, tmp_path / "idx", token="sesame") as api:
        cache = Cache(tmp_path / "cache.sqlite")
        searcher = CastoriniSearch(api.url, api.index, cache=cache)

        async def go() -> tuple[Any, Any, Any]:
            return (await searcher.search("nuclear accidents", 2),
                    await searcher.document("d3"), await searcher.document("nope"))

        hits, doc, missing = asyncio.run(go())
        assert [h.docid for h in hits][0] == "d2" and len(hits) == 2
        assert doc is not None and doc.text.startswith("Football") and missing is None
        assert set(api.tokens) == {"Bearer sesame"} and len(api.paths) == 3
        assert asyncio.run(go()) == (hits, doc, missing)
        assert len(api.paths) == 3  # the second time, all from the cache
        monkeypatch.setenv("CASTORINI_API_TOKEN", "wrong")
        with pytest.raises(ConfigError, match="HTTP 401"):
            asyncio.run(CastoriniSearch(api.url, api.index).search("x", 1))


def test_references_resolved_from_the_search_api_feed_support_on_2026_data(tmp_path: Path
                                                                          ) -> None:
    topics, corpus = dev_corpus(tmp_path, topics=3)
    run = run_2026(tmp_path / "run.jsonl", "r1", {
        "14": ["rag25-14-000", "rag25-14-001"], "31": ["rag25-31-002", "gone-404"],
        "37": ["rag25-37-000"]})
    with search_api(corpus, tmp_path / "idx") as api:
        out = tmp_path / "resolved.jsonl"
        done = cli_ok("resolve-references", "--run", str(run), "--search", api.url, "--index",
                      api.index, "--read-words", "4", "-o", str(out), "--cache",
                      str(tmp_path / "cache.sqlite"))
        assert "1 references not found (gone-404)" in done.output
        before = len(api.paths)
        cli_ok("resolve-references", "--run", str(run), "--search", api.url, "--index",
               api.index, "--read-words", "4", "-o", str(tmp_path / "again.jsonl"), "--cache",
               str(tmp_path / "cache.sqlite"))
        assert len(api.paths) == before
    texts = {json.loads(x)["id"]: json.loads(x)["contents"] for x in
             corpus.read_text().splitlines()}
    resolved = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in resolved] == ["rag25-14-000", "rag25-14-001", "rag25-31-002",
                                          "rag25-37-000"]
    for r in resolved:  # each cut to its first 4 words
        assert r["contents"] == " ".join(texts[r["id"]].split()[:4])
        assert r["provenance"]["config"]["search"] == {"backend": "castorini", "url": api.url,
                                                       "index": "dev26"}
        assert r["provenance"]["config"]["words"] == 4
    assert [{k: v for k, v in json.loads(x).items() if k != "provenance"}
            for x in (tmp_path / "again.jsonl").read_text().splitlines()] == \
        [{k: v for k, v in r.items() if k != "provenance"} for r in resolved]
    judged = tmp_path / "judged"
    cli_ok("assign", "--method", "support", "--run", str(run), "--corpus", str(out),
           "--allow-missing", "--assessor", "mock", "--no-cache", "-o", str(judged))
    lines = [json.loads(x) for x in (judged / "r1.jsonl").read_text().splitlines()]
    assert len(lines) == 3


def test_references_resolved_from_a_bm25_index_built_before(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", PASSAGES)
    Bm25Index.open(corpus, tmp_path / "idx")
    (tmp_path / "topics.tsv").write_text("14\tnarrative\n")
    run = run_2026(tmp_path / "run.jsonl", "r1", {"14": ["d1", "d3"]})
    out = tmp_path / "resolved.jsonl"
    cli_ok("resolve-references", "--run", str(run), "--search", "bm25", "--index",
           str(tmp_path / "idx"), "--read-lines", "1", "-o", str(out))
    passages = [json.loads(x) for x in out.read_text().splitlines()]
    assert [{k: v for k, v in p.items() if k != "provenance"} for p in passages] == [
        {"id": "d1", "contents": "Nuclear reactors split uranium atoms.", "title": "Reactors"},
        {"id": "d3", "contents": "Football clubs pay their athletes large salaries."}]
    assert passages[0]["provenance"]["config"]["search"]["backend"] == "bm25"


def test_agentic_creation_searches_through_the_search_api(tmp_path: Path) -> None:
    topics, corpus = dev_corpus(tmp_path, topics=2)
    with search_api(corpus, tmp_path / "idx") as api, emulator(tmp_path) as server:
        argv = ["nuggetize", "--agentic", "--topics", str(topics), "--search", api.url,
                "--index", api.index, "--assessor", "openai:emulated", "--base-url",
                server.url, "--cache", str(tmp_path / "cache.sqlite")]
        cli_ok(*argv, "-o", str(tmp_path / "key.jsonl"))
        searched = [p for p in api.paths if "/search?" in p]
        assert len(searched) == 2 and len([p for p in api.paths if "/doc/" in p]) == 2
        asked = len(server.requests())
        cli_ok(*argv, "-o", str(tmp_path / "again.jsonl"))
        assert len(api.paths) == 4 and len(server.requests()) == asked
    for line in (tmp_path / "key.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert record["provenance"]["config"]["creation"]["search"] == {
            "backend": "castorini", "url": api.url, "index": "dev26"}
        assert record["nuggets"]


def test_the_python_api_builds_agentic_keys_rubrics_and_resolves(tmp_path: Path) -> None:
    from nuggetizer import api

    topics, corpus = dev_corpus(tmp_path, topics=2)
    found = api.searcher("bm25", corpus=corpus, index=str(tmp_path / "idx"), cache=False)
    with api.assessor("mock", cache=tmp_path / "cache.sqlite") as judge:
        summary = api.agentic_keys(topics, found, judge, tmp_path / "key.jsonl", max_turns=2,
                                   keep=5)
        assert summary.done == 2
        keys = [json.loads(x) for x in (tmp_path / "key.jsonl").read_text().splitlines()]
        assert all(k["agentic"]["model_calls"] == 2 and len(k["nuggets"]) <= 5 for k in keys)
        authored = api.author_rubrics(tmp_path / "key.jsonl", judge, tmp_path / "rubrics.jsonl")
        assert authored.done == 2
    run = run_2026(tmp_path / "run.jsonl", "r1", {"14": ["rag25-14-000", "nope"]})
    resolved = api.resolve_references(run, found, tmp_path / "refs.jsonl", words=3)
    assert resolved.missing == ["nope"] and list(resolved.passages) == ["rag25-14-000"]
