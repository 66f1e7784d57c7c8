"""No score without a judgment, for every registered method: a server that answers nothing
usable (the emulator, every prompt poisoned) leaves every item unjudged; the score engine then
leaves the answer or context out and counts it, never scores it 0; `score` writes no
leaderboard of 0.0000 and exits non-zero when nothing at all was judged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import scripted
from click.testing import CliRunner
from emulated import NUGGETS, emulator
from shared_data import CRUX_DUC, RAG24, RAG26_DEV

from nuggetizer.assessors import Assessor, make_assessor
from nuggetizer.cli import cli
from nuggetizer.interface import (
    AnswerKeyMethod,
    KeyInput,
    Outcome,
    Target,
    make_method,
    method_names,
)
from nuggetizer.scoring import score_judged
from nuggetizer.types import Segment, Sentence

REPO = Path(__file__).resolve().parents[2]
SAMPLE_RUN = REPO / "runs" / "sample" / "good.jsonl"
CORPUS = REPO / "tracks" / "sample" / "corpus.jsonl"


def first_line(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def gpt4o_answer() -> tuple[str, str]:
    """(topic, answer text) of the gpt-4o baseline's first answer."""
    run = first_line(RAG24 / "runs" / "baseline_rag24.test_gpt-4o_top20.jsonl")
    return run["topic_id"], " ".join(s["text"].strip() for s in run["answer"])


async def nuggets_inputs(assessor: Assessor) -> tuple[Any, Target]:
    key = first_line(NUGGETS)
    _, text = gpt4o_answer()
    record = make_method("nuggets").key_record(key, NUGGETS, 1, False)
    return record, Target(run_id="r", qid=record.qid, answer=text, length=10)


async def support_inputs(assessor: Assessor) -> tuple[Any, Target]:
    run = first_line(SAMPLE_RUN)
    passages = {json.loads(x)["id"]: json.loads(x) for x in CORPUS.read_text().splitlines()}
    cited = {d: Segment(id=d, text=passages[d]["contents"]) for d in run["references"]}
    return None, Target(run_id="r", qid=run["topic_id"], answer="a",
                        sentences=[Sentence(**s) for s in run["answer"]],
                        references=run["references"], cited=cited)


async def crux_inputs(assessor: Assessor) -> tuple[Any, Target]:
    topic = first_line(CRUX_DUC / "topics.jsonl")
    key = {"qid": topic["topic_id"], "query": topic["request"], "ratings": {}, "tokens": {},
           "questions": [{"text": q, "answerable": True} for q in topic["questions"][:3]]}
    return key, Target(run_id="r", qid=key["qid"], answer=topic["summary"][:600])


async def kpr_inputs(assessor: Assessor) -> tuple[Any, Target]:
    key = first_line(NUGGETS)
    points = [{"text": n["text"], "sources": []} for n in key["nuggets"][:4]]
    _, text = gpt4o_answer()
    return ({"qid": key["qid"], "query": key["query"], "key_points": points},
            Target(run_id="r", qid=key["qid"], answer=text))


async def udcg_inputs(assessor: Assessor) -> tuple[Any, Target]:
    """UDCG's LLM calls make the key (p_NR per passage); judging reads it."""
    sample = json.loads((RAG24.parent / "udcg-sample" / "sample_dataset.json").read_text())[0]
    docs = [Segment(id=p["doc_id"], text=p["text"]) for p in sample["passages"]]
    item = KeyInput(qid=sample["example_id"], query=sample["question"], documents=docs,
                    grades={p["doc_id"]: int(p["is_relevant"]) for p in sample["passages"]})
    key = (await make_method("udcg").build_key(assessor, item)).record
    return key, Target(run_id="r", qid=item.qid, passages=docs)


async def rubrics_inputs(assessor: Assessor) -> tuple[Any, Target]:
    """The first dev topic's rubrics (negative weights among them) and a gpt-4o answer."""
    path = RAG26_DEV / "research-rubrics-dev-rubrics.jsonl"
    key = make_method("rubrics").key_record(first_line(path), path, 1, False)
    _, text = gpt4o_answer()
    return key, Target(run_id="r", qid=key["qid"], answer=text)


async def battles_inputs(assessor: Assessor) -> tuple[Any, Target]:
    """A battle: the gpt-4o baseline's first answer against a shorter one to the same topic
    (a pair target: the answer and its opponent); the narrative is the key."""
    qid, text = gpt4o_answer()
    opponent = Target(run_id="s", qid=qid, answer=text[: len(text) // 2])
    return "the topic's narrative", Target(run_id="r", qid=qid, answer=text, opponent=opponent)


# What each registered method is judged on; a method added to the registry without an entry
# here fails the audit until it has one.
INPUTS: dict[str, Callable[[Assessor], Awaitable[tuple[Any, Target]]]] = {
    "nuggets": nuggets_inputs, "support": support_inputs, "crux": crux_inputs,
    "kpr": kpr_inputs, "udcg": udcg_inputs, "rubrics": rubrics_inputs,
    "battles": battles_inputs,
}


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The emulator answering garbage to every prompt (every prompt contains "")."""
    with emulator(tmp_path_factory.mktemp("poisoned"), "--poison", "") as server:
        yield server


def judged_by(method: AnswerKeyMethod, url: str) -> tuple[Any, Outcome]:
    """The method's key and its judgment of its audit target by a server answering garbage."""
    assessor = make_assessor("openai:emulated", base_url=url, cache=None)

    async def go() -> tuple[Any, Outcome]:
        try:
            key, target = await INPUTS[method.name](assessor)
            return key, await method.judge(assessor, key, target)
        finally:
            await assessor.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("name", method_names())
def test_no_method_scores_what_it_could_not_judge(name: str, poisoned: Any,
                                                  tmp_path: Path) -> None:
    assert name in INPUTS, f"method {name!r} has no audit inputs: add them to INPUTS"
    method = make_method(name, {"reasks": 0})
    key, outcome = judged_by(method, poisoned.url)
    assert outcome.unjudged > 0
    path = tmp_path / "judged.jsonl"  # read back at the file edge, as `score` reads it
    path.write_text(json.dumps(outcome.record) + "\n")
    (judged,) = method.read_judged(path)
    assert method.nothing_judged(judged.record) in method.targets
    table = score_judged(method, [judged], None if key is None else {judged.qid: key})
    assert table.means == {} and table.per_topic == {}  # no score at all, not a 0
    assert table.judged_nothing
    kind = f"{method.nothing_judged(judged.record)}s with nothing judged"
    assert table.left_out == {kind: 1, "runs with nothing judged": 1,
                              "topics with nothing judged": 1}


def test_support_server_that_never_answers_writes_no_leaderboard(tmp_path: Path,
                                                                  poisoned: Any) -> None:
    """The issue's case through the CLI: every pair unjudged -> no 0.0000 row, exit 1."""
    judged, board = tmp_path / "judged", tmp_path / "board.tsv"
    made = CliRunner().invoke(cli, [
        "assign", "--method", "support", "--set", "reasks=0", "--run", str(SAMPLE_RUN),
        "--corpus", str(CORPUS), "-o", str(judged), "--no-cache", "--assessor",
        "openai:emulated", "--base-url", poisoned.url])
    assert made.exit_code == 0, made.output
    records = [json.loads(x) for x in (judged / "sample-good.jsonl").read_text().splitlines()]
    assert all(p["label"] == "unjudged" for r in records for s in r["sentences"]
               for p in s["pairs"])
    scored = CliRunner().invoke(cli, ["score", "--method", "support", str(judged), "-o",
                                      str(board), "--per-topic", str(tmp_path / "pt.tsv")])
    assert scored.exit_code == 1, scored.output
    assert f"nothing was judged in 1 judgment files ({len(records)} answers with nothing " \
           "judged, 1 runs with nothing judged" in scored.output
    assert "0.0000" not in scored.output
    assert not board.exists() and not (tmp_path / "pt.tsv").exists()


def test_an_answer_with_nothing_judged_is_left_out_and_counted(tmp_path: Path) -> None:
    """A model that cannot answer about one topic's passages: that answer's every pair is
    unjudged, so its topic has no row for the run (not a 0), the run's mean is over the other
    topics, and the summary and both sidecars count it."""
    run = first_line(SAMPLE_RUN)
    passages = {json.loads(x)["id"]: json.loads(x) for x in CORPUS.read_text().splitlines()}
    poison = [passages[d]["contents"][:50] for d in run["references"]]
    scripted.SCRIPTS["one-topic-unanswered"] = lambda request: (
        "I cannot say." if any(p in request.messages[-1][1] for p in poison)
        else '{"label": "partial_support"}')
    judged, board, per_topic = tmp_path / "judged", tmp_path / "board.tsv", tmp_path / "pt.tsv"
    made = CliRunner().invoke(cli, [
        "assign", "--method", "support", "--set", "reasks=0", "--run", str(SAMPLE_RUN),
        "--corpus", str(CORPUS), "-o", str(judged), "--no-cache", "--assessor",
        "scripted:one-topic-unanswered"])
    assert made.exit_code == 0, made.output
    records = {r["qid"]: r for r in map(json.loads, (judged / "sample-good.jsonl").read_text()
                                        .splitlines())}
    labels = {q: [p["label"] for s in r["sentences"] for p in s["pairs"]]
              for q, r in records.items()}
    assert labels[run["topic_id"]] and set(labels[run["topic_id"]]) == {"unjudged"}
    assert all("unjudged" not in ls for q, ls in labels.items() if q != run["topic_id"])
    scored = CliRunner().invoke(cli, ["score", "--method", "support", str(judged), "-o",
                                      str(board), "--per-topic", str(per_topic)])
    assert scored.exit_code == 0, scored.output
    rows = {(r[1], r[2]): float(r[3]) for r in
            (x.split("\t") for x in per_topic.read_text().splitlines()[1:])}
    assert (run["topic_id"], "support_recall") not in rows  # left out, not 0
    kept = [v for (q, m), v in rows.items() if m == "support_recall" and q != "all"]
    assert len(kept) == len(records) - 1 and all(v > 0 for v in kept)
    assert rows[("all", "support_recall")] == pytest.approx(sum(kept) / len(kept), abs=1e-4)
    for path in (board, per_topic):
        sidecar = json.loads(path.with_name(path.name + ".provenance.json").read_text())
        # the only run: its topic has nothing judged at all
        assert sidecar["left_out"] == {"answers with nothing judged": 1,
                                       "topics with nothing judged": 1}
    assert ("1 answers with nothing judged, 1 topics with nothing judged (left out, no score)"
            in scored.output)
