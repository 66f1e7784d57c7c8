"""Long2RAG KPR: the metric by hand, the parsers, the de-duplication check with its re-ask and
its report, and (slow) extraction, de-duplication and entailment on DUC with the embedded model."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from scripted import Script, ScriptedBackend
from shared_data import CRUX_DUC

from nuggetizer.assessors import Assessor
from nuggetizer.interface import KeyInput, Target
from nuggetizer.measures import kpr as mk
from nuggetizer.methods import (
    KprConfig,
    KprMethod,
    check_dedup,
    dumps_points,
    parse_dedup,
    parse_entailment,
    parse_points,
)
from nuggetizer.parsing import ParseFailure
from nuggetizer.types import Segment


def test_kpr_hand_computed() -> None:
    assert mk.kpr(["yes", "no", "neutral", "yes"]) == 0.5
    assert mk.kpr(["yes", "unjudged", "no"]) == 0.5  # unjudged left out, never scored no
    assert mk.kpr(["neutral", "neutral"]) == 0.0  # only yes counts
    assert mk.kpr([]) == 0.0
    assert mk.run_kpr([0.5, 1.0]) == 0.75
    assert mk.run_kpr([0.5, 1.0], questions=3) == 0.5  # an unanswered question scores 0


def test_parsers() -> None:
    points = [("Kopp is wanted.", ["FBI is looking for Kopp"]), ("Clinics face threats.", [])]
    assert parse_points(dumps_points(points), 10) == points
    assert parse_points("Point 1: A\nPoint [2]: B", 10) == [("A", []), ("B", [])]
    assert parse_points('[{"point": "A", "spans": ["x"]}]', 10) == [("A", ["x"])]
    assert len(parse_points(dumps_points(points), 1)) == 1
    with pytest.raises(ParseFailure):
        parse_points("nothing useful", 5)
    assert parse_dedup("Point 1: A [1, 3]\nPoint 2: B [2]", 3) == [("A", [1, 3]), ("B", [2])]
    assert parse_dedup('[{"point": "A", "sources": [2, 1]}]', 2) == [("A", [2, 1])]
    assert parse_entailment("[Yes] the document says so") == "yes"
    assert parse_entailment('{"answer": "[neutral]"}') == "neutral"
    assert parse_entailment("no") == "no"
    with pytest.raises(ParseFailure):
        parse_entailment("it is not clear")


@pytest.mark.parametrize(
    ("groups", "message"),
    [([[1], [3]], "points [2] are missing"), ([[1, 2], [2, 3]], "[2] appear more than once"),
     ([[1, 2, 3, 4]], "[4] do not exist")],
)
def test_dedup_check_rejects(groups: list[list[int]], message: str) -> None:
    with pytest.raises(ParseFailure, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_dedup(groups, 3)


def numbered(answer: Callable[[str, int], str]) -> Script:
    """A script answering from the prompt and the call's number (1-based)."""
    count = iter(range(1, 10**6))
    return lambda request: answer(request.messages[-1][1], next(count))


def _run_key(answer: Callable[[str, int], str]) -> tuple[dict, ScriptedBackend, int]:
    backend = ScriptedBackend(numbered(answer), max_concurrency=1)
    assessor = Assessor(backend, None)
    docs = [Segment(id="d1", text="Alpha beta. Gamma delta."), Segment(id="d2", text="Beta.")]
    item = KeyInput(qid="t", query="q?", documents=docs)
    outcome = asyncio.run(KprMethod(KprConfig(reasks=1)).build_key(assessor, item))
    return outcome.record, backend, outcome.unjudged


def _extraction(prompt: str) -> str:
    if "Gamma delta" in prompt:
        return dumps_points([("A", ["Alpha beta."]), ("B", ["not in the text"])])
    return dumps_points([("A again", ["Beta."])])


def test_dedup_reasked_then_merged() -> None:
    def answer(prompt: str, n: int) -> str:
        if "identify key points" in prompt:
            return _extraction(prompt)
        if "remove any duplicate" in prompt:
            return "Point 1: A [1]\nPoint 2: B [2]"  # drops point 3: re-asked
        return "Point 1: A [1, 3]\nPoint 2: B [2]"  # the correction turn's answer

    record, backend, unjudged = _run_key(answer)
    assert [kp["text"] for kp in record["key_points"]] == ["A", "B"]
    assert record["key_points"][0]["sources"] == [["d1", 1], ["d2", 1]]
    assert record["extracted"][0]["points"][1]["spans"] == [
        {"text": "not in the text", "verbatim": False}]
    assert record["extracted"][0]["points"][0]["spans"][0]["verbatim"] is True
    assert unjudged == 0 and "unparsed" not in record
    assert len(backend.requests) == 4  # 2 extractions, dedup, one re-ask
    assert "points [3] are missing" in backend.requests[-1].messages[-1][1]


def test_dedup_that_never_passes_is_reported_and_points_kept() -> None:
    def answer(prompt: str, n: int) -> str:
        if "identify key points" in prompt:
            return _extraction(prompt)
        return "Point 1: A [1, 3]\nPoint 2: B [2, 3]"  # repeats point 3, every time

    record, backend, unjudged = _run_key(answer)
    assert [kp["text"] for kp in record["key_points"]] == ["A", "B", "A again"]
    assert [kp["sources"] for kp in record["key_points"]] == [[["d1", 1]], [["d1", 2]],
                                                              [["d2", 1]]]
    assert unjudged == 1 and record["unparsed"][0]["step"] == "dedup"
    assert "more than once" in record["unparsed"][0]["error"]


def test_entailment_only_yes_counts_and_unparsed_is_unjudged() -> None:
    labels = iter(["[yes] it says so", "[neutral]", "maybe", "still unsure", "[no]"])
    backend = ScriptedBackend(lambda request: next(labels), max_concurrency=1)
    method = KprMethod(KprConfig(reasks=1))
    key = {"qid": "t", "query": "q", "key_points": [{"text": t} for t in "ABCD"]}
    outcome = asyncio.run(method.judge(Assessor(backend, None), key,
                                       Target(run_id="r", qid="t", answer="text")))
    got = [kp["label"] for kp in outcome.record["key_points"]]
    assert sorted(got) == ["neutral", "no", "unjudged", "yes"]
    assert outcome.unjudged == 1
    assert method.score(key, outcome.record, [])["KPR"] == pytest.approx(1 / 3)


@pytest.mark.slow
def test_kpr_flow_embedded_model(gguf_path: Path, tmp_path: Path) -> None:
    """2 DUC topics x 2 oracle passages, at most 3 points each, judged on the bm25 reports."""
    from nuggetizer.assessors import make_assessor
    from nuggetizer.cache import Cache

    topics = [json.loads(x) for x in (CRUX_DUC / "topics.jsonl").read_text().splitlines()]
    reports = {json.loads(x)["qid"]: json.loads(x)["response"]
               for x in (CRUX_DUC / "runs" / "bm25.jsonl").read_text().splitlines()}
    texts = {json.loads(x)["id"]: json.loads(x)["contents"]
             for x in (CRUX_DUC / "passages.jsonl").read_text().splitlines()}
    chosen = [t for t in topics if t["topic_id"] in reports][:2]
    method = KprMethod(KprConfig(max_points=3, reasks=1))
    assessor = make_assessor("local", cache=Cache(tmp_path / "cache.sqlite"))

    async def work() -> list[tuple[dict, dict, float]]:
        out = []
        for topic in chosen:
            docs = [Segment(id=d, text=texts[d]) for d in topic["oracle_passages"][:2]]
            item = KeyInput(qid=topic["topic_id"], query=topic["request"], documents=docs)
            key = (await method.build_key(assessor, item)).record
            target = Target(run_id="bm25", qid=item.qid, answer=reports[item.qid])
            judged = (await method.judge(assessor, key, target)).record
            out.append((key, judged, method.score(key, judged, [judged])["KPR"]))
        await assessor.aclose()
        return out

    started = time.monotonic()
    results = asyncio.run(work())
    elapsed = time.monotonic() - started
    assert assessor.stats.calls <= 60
    for key, judged, score in results:
        extracted = [(e["docid"], n) for e in key["extracted"]
                     for n in range(1, len(e["points"]) + 1)]
        sources = [tuple(s) for kp in key["key_points"] for s in kp["sources"]]
        assert sorted(sources) == sorted(extracted)  # every point exactly once
        assert len(judged["key_points"]) == len(key["key_points"])
        assert all(kp["label"] in ("yes", "no", "neutral", "unjudged")
                   for kp in judged["key_points"])
        assert 0.0 <= score <= 1.0
    print(f"\nKPR embedded: {assessor.stats.calls} calls ({assessor.stats.reasks} re-asks), "
          f"{elapsed:.1f} s, " + ", ".join(
              f"{k['qid']}: {len(k['key_points'])} points, KPR={s:.4f}"
              + (" (dedup failed)" if any(u['step'] == 'dedup' for u in k.get('unparsed', []))
                 else "") for k, _, s in results))
