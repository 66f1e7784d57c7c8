"""CRUX on the DUC data: human coverage, alpha-nDCG against ir_measures, oracle and density,
the TREC run reader, the CLI scoring path, and (slow) the LLM flow with the embedded model."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import ir_measures
import pytest
from scripted import ScriptedBackend
from shared_data import CRUX_DUC

from nuggetizer.errors import InputError
from nuggetizer.formats import read_trec_run
from nuggetizer.measures import crux as mc
from nuggetizer.methods import CruxConfig, CruxMethod, parse_questions, parse_rating
from nuggetizer.parsing import ParseFailure

RUNS = ("bm25", "dr_rankfirst", "oracle")


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def human_pool(annotator: int = 1) -> dict[str, dict[str, list[int | None]]]:
    """{topic: {passage: ratings}} from one annotator's 0-5 ratings (-1: not rated)."""
    pool: dict[str, dict[str, list[int | None]]] = {}
    for rec in jsonl(CRUX_DUC / "human" / f"annotator{annotator}.ratings.jsonl"):
        row = sorted(rec["relevances"].items(), key=lambda kv: int(kv[0]))
        pool.setdefault(rec["id"], {})[rec["document"]] = [None if v == -1 else v for _, v in row]
    return pool


def test_human_coverage_both_denominators() -> None:
    """88 of 90 stored coverages count filtered questions (-2) as unanswered; the other two
    leave them out of the denominator (the paper's definition, our default)."""
    counted, left_out, neither = [], [], []
    for annotator in (1, 2, 3):
        for rec in jsonl(CRUX_DUC / "human" / f"annotator{annotator}.answerability.jsonl"):
            labels = rec["answerability"]
            with_filtered = mc.binary_coverage(labels, filtered_in_denominator=True)
            paper = mc.binary_coverage(labels)
            name = (annotator, rec["id"])
            if math.isclose(with_filtered, rec["coverage"], abs_tol=1e-9):
                counted.append(name)
            elif math.isclose(paper, rec["coverage"], abs_tol=1e-9):
                left_out.append(name)
            else:
                neither.append(name)
    assert len(counted) + len(left_out) + len(neither) == 90
    assert len(counted) == 88
    assert sorted(left_out) == [(1, "bm25_duc04-testb-7"), (1, "bm25_duc04-testb-9")]
    assert neither == []
    # the two forms differ exactly where questions were filtered
    assert mc.binary_coverage([1, 0, -2, 1]) == 2 / 3
    assert mc.binary_coverage([1, 0, -2, 1], filtered_in_denominator=True) == 0.5


def test_alpha_ndcg_agrees_with_ir_measures(tmp_path: Path) -> None:
    """Diversity qrels written from the human ratings; our alpha-nDCG@5 equals ndeval's."""
    qrels_path = tmp_path / "diversity.qrels"
    pools = human_pool()
    lines = [line for qid, pool in pools.items() for line in mc.diversity_qrels(qid, pool)]
    qrels_path.write_text("\n".join(lines) + "\n")
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    assert {q.iteration for q in qrels} == {str(i) for i in range(15)}
    compared, nonzero = 0, 0
    for name in RUNS:
        path = CRUX_DUC / "runs" / f"{name}.run"
        run = read_trec_run(path)
        ours = {q: mc.alpha_ndcg(run.ranking(q), pools[q], 5) for q in run.topics}
        theirs = {
            m.query_id: m.value
            for m in ir_measures.iter_calc(
                [ir_measures.alpha_nDCG @ 5], qrels, ir_measures.read_trec_run(str(path))
            )
        }
        assert set(theirs) == set(ours)
        for qid, value in ours.items():
            assert value == pytest.approx(theirs[qid], abs=1e-9), (name, qid)
            compared += 1
            nonzero += value > 0
    assert compared == 30 and nonzero >= 15


def test_oracle_context_and_density_on_human_ratings() -> None:
    for pool in human_pool().values():
        oracle = mc.oracle_context(pool)
        every = mc.coverage(pool.values())
        assert mc.coverage([pool[d] for d in oracle]) == every
        # greedy: no passage of the oracle can be dropped without losing coverage
        for d in oracle:
            rest = [pool[x] for x in oracle if x != d]
            assert mc.coverage(rest) < every
        if every > 0:
            assert mc.density(every, 100, every, 100) == 1.0


def test_measures_hand_computed() -> None:
    pool = {"a": [5, 0, 0], "b": [3, 3, 0], "c": [0, 0, 4], "d": [1, 1, 1]}
    assert mc.oracle_context(pool) == ["b", "c"]
    assert mc.coverage([pool["a"]]) == pytest.approx(1 / 3)
    assert mc.coverage([pool["a"]], answerable=[True, False, False]) == 1.0
    # alpha-DCG of [a, b]: a gains 1; b gains 0.5 (q0 seen once) + 1 (q1) over log2(3)
    assert mc.alpha_dcg([pool["a"], pool["b"]], [0, 1, 2], 2) == pytest.approx(
        1 + 1.5 / math.log2(3))
    # ideal: b (2), then c (1)
    ideal = 2 + 1 / math.log2(3)
    assert mc.alpha_ndcg(["a", "b"], pool, 2) == pytest.approx((1 + 1.5 / math.log2(3)) / ideal)
    assert mc.alpha_ndcg(["d"], pool, 2) == 0.0
    # density: Cov 1/3 in 50 tokens against the oracle's 1.0 in 100 tokens
    assert mc.density(1 / 3, 50, 1.0, 100) == pytest.approx(math.sqrt(2 / 3))
    assert mc.density(0.5, 0, 1.0, 10) == 0.0
    assert mc.diversity_qrels("t", {"x": [3, None]}) == ["t 0 x 1", "t 1 x 0"]


def test_parsers() -> None:
    assert parse_questions("Who?</q>\n<q>What?</q><q>Why?</q>", 2) == ["Who?", "What?"]
    assert parse_questions('["Who?", "When?"]', 5) == ["Who?", "When?"]
    with pytest.raises(ParseFailure):
        parse_questions("no questions here", 3)
    assert parse_rating("4") == 4 and parse_rating('{"rating": 0}') == 0
    assert parse_rating("Rating: 5 (complete)") == 5
    for bad in ("", "seven", "10", "3.5"):
        with pytest.raises(ParseFailure):
            parse_rating(bad)


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("q1 Q0 d1 1 0.5", "expected 6 columns"),
        ("q1 Q0 d1 one 0.5 tag", "rank must be an integer"),
        ("q1 Q0 d1 1 nan tag", "score must be a finite number"),
        ("q1 Q0 d1 1 0.5 tag\nq1 Q0 d1 2 0.4 tag", "retrieves 'd1' twice"),
        ("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.4 other", "one run per file"),
    ],
)
def test_trec_run_reader_rejects(tmp_path: Path, line: str, what: str) -> None:
    path = tmp_path / "bad.run"
    path.write_text(line + "\n")
    with pytest.raises(InputError) as err:
        read_trec_run(path)
    assert str(err.value).startswith(f"{path}:") and what in str(err.value)
    assert err.value.line == len(line.splitlines())


def test_trec_run_order_ties_by_docid() -> None:
    run = read_trec_run(CRUX_DUC / "runs" / "bm25.run")
    assert run.tag == "human_eval_bm25" and len(run.topics) == 10
    ranking = run.ranking("duc04-testb-3")
    assert ranking == sorted(ranking) and len(ranking) == 5
    assert run.ranking("duc04-testb-3", 2) == ranking[:2]


def _key_and_judgments(tmp_path: Path) -> tuple[Path, Path]:
    """A CRUX key and context judgments built from the human ratings (no LLM)."""
    topics = {t["topic_id"]: t for t in jsonl(CRUX_DUC / "topics.jsonl")}
    pools = human_pool()
    keys, judged = [], tmp_path / "judged"
    judged.mkdir()
    texts = {p["id"]: p["contents"] for p in jsonl(CRUX_DUC / "passages.jsonl")}
    for qid, pool in pools.items():  # the judged pool: every passage the annotator rated
        keys.append({"qid": qid, "query": topics[qid]["request"],
                     "questions": [{"text": q, "answerable": None}
                                   for q in topics[qid]["questions"]],
                     "ratings": pool, "tokens": {d: mc.tokens(texts[d]) for d in pool}})
    for name in RUNS:
        run = read_trec_run(CRUX_DUC / "runs" / f"{name}.run")
        lines = []
        for qid in run.topics:
            docids = run.ranking(qid, 5)
            lines.append({"run_id": run.tag, "qid": qid, "target": "context", "docids": docids,
                          "ratings": {d: pools[qid].get(d, [None] * 15) for d in docids},
                          "tokens": {d: mc.tokens(texts.get(d, "")) for d in docids}})
        (judged / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    key = tmp_path / "key.jsonl"
    key.write_text("".join(json.dumps(x) + "\n" for x in keys))
    return key, judged


def test_score_command_on_human_judgments(tmp_path: Path) -> None:
    key, judged = _key_and_judgments(tmp_path)
    board, per_topic = tmp_path / "board.tsv", tmp_path / "per_topic.tsv"
    result = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "score", "--method", "crux", "--key", str(key),
         str(judged), "-o", str(board), "--per-topic", str(per_topic),
         "--diversity-qrels", str(tmp_path / "div.qrels")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in board.read_text().splitlines()]
    assert rows[0] == ["run_id", "alpha_nDCG", "Cov", "Den", "Cov_answer"]
    by_run = {r[0]: r for r in rows[1:]}
    assert rows[1][0] == "human_eval_oracle"  # the oracle contexts rank first
    assert by_run["human_eval_bm25"][4] == "-"  # no answers judged: no Cov_answer
    # the per-topic alpha-nDCG is the one checked against ir_measures above; the key covers
    # 10 topics, each run 10: means are over those 10
    method = CruxMethod(CruxConfig())
    pools = human_pool()
    run = read_trec_run(CRUX_DUC / "runs" / "oracle.run")
    expected = sum(mc.alpha_ndcg(run.ranking(q, 5), pools[q], 5) for q in run.topics) / 10
    assert float(by_run["human_eval_oracle"][1]) == pytest.approx(expected, abs=5e-5)
    assert method.primary == "alpha_nDCG"
    assert "human_eval_oracle\tall\tDen\t" in per_topic.read_text()
    assert (tmp_path / "board.tsv.provenance.json").is_file()
    # the diversity qrels the command wrote give ir_measures the same alpha-nDCG@5
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "div.qrels")))
    ours = {line.split("\t")[1]: float(line.split("\t")[3])
            for line in per_topic.read_text().splitlines()
            if line.startswith("human_eval_oracle\t") and "\talpha_nDCG\t" in line}
    runfile = str(CRUX_DUC / "runs" / "oracle.run")
    for m in ir_measures.iter_calc([ir_measures.alpha_nDCG @ 5], qrels,
                                   ir_measures.read_trec_run(runfile)):
        assert ours[m.query_id] == pytest.approx(m.value, abs=5e-5)
    assert len(ours) == 11  # 10 topics and "all"


def nuggetizer_cli(*args: str | Path, cache: Path | None) -> subprocess.CompletedProcess[str]:
    tail = ["--cache", str(cache)] if cache is not None else []
    command = [sys.executable, "-m", "nuggetizer", *map(str, args), *tail]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_crux_flow_embedded_model(gguf_path: Path, tmp_path: Path) -> None:
    """2 DUC topics, 3 questions, 2 relevant passages: questions -> ratings -> Cov(Z), Cov(y),
    alpha-nDCG, Den through the CLI with the embedded model (about 30 calls)."""
    cache = tmp_path / "cache.sqlite"
    chosen = [t for t in jsonl(CRUX_DUC / "topics.jsonl")
              if t["topic_id"] in ("duc04-testb-3", "duc04-testb-7")]
    topics = tmp_path / "topics.jsonl"
    topics.write_text("".join(json.dumps(t) + "\n" for t in chosen))
    qrels = tmp_path / "relevant.qrels"
    qrels.write_text("".join(f"{t['topic_id']} 0 {d} 1\n"
                             for t in chosen for d in t["oracle_passages"][:2]))
    key, judged = tmp_path / "key.jsonl", tmp_path / "judged"
    settings = ["--method", "crux", "--set", "n_questions=3", "--set", "k=2"]
    started = time.monotonic()
    made = nuggetizer_cli("nuggetize", *settings, "--topics", topics, "--qrels", qrels,
                          "--corpus", CRUX_DUC / "passages.jsonl", "-o", key, cache=cache)
    assert made.returncode == 0, made.stderr
    records = jsonl(key)
    assert [r["qid"] for r in records] == ["duc04-testb-3", "duc04-testb-7"]
    for record in records:
        assert len(record["questions"]) == 3
        assert all(isinstance(q["answerable"], bool) for q in record["questions"])
        assert len(record["ratings"]) == 2
        assert record["provenance"]["config"]["method"] == "crux"
    judge = nuggetizer_cli("assign", *settings, "--key", key, "--retrieval-run",
                           CRUX_DUC / "runs" / "oracle.run", "--corpus",
                           CRUX_DUC / "passages.jsonl", "--run", CRUX_DUC / "runs" / "bm25.jsonl",
                           "-o", judged, cache=cache)
    assert judge.returncode == 0, judge.stderr
    # 16 contexts of 8 topics outside the key: five topics named, the other three counted
    assert re.search(r"16 skipped \(topic not in the answer key: topic \S+, topic \S+, topic "
                     r"\S+, topic \S+, topic \S+ and 3 more\)", judge.stderr), judge.stderr
    contexts = jsonl(judged / "human_eval_oracle.jsonl")
    assert [len(c["docids"]) for c in contexts] == [2, 2]
    answers = jsonl(judged / "bm25.jsonl")
    assert all(a["target"] == "answer" and len(a["ratings"]) == 3 for a in answers)
    board = tmp_path / "board.tsv"
    scored = nuggetizer_cli("score", *settings, "--key", key, judged, "-o", board, cache=None)
    assert scored.returncode == 0, scored.stderr
    rows = {r.split("\t")[0]: r.split("\t") for r in board.read_text().splitlines()[1:]}
    assert rows["human_eval_oracle"][4] == "-" and rows["bm25"][1:4] == ["-", "-", "-"]
    values = [float(v) for v in rows["human_eval_oracle"][1:4] + rows["bm25"][4:]]
    assert all(0.0 <= v <= 1.0 or i == 2 for i, v in enumerate(values))
    calls = sum(int(line.split(" calls")[0].rsplit(" ", 1)[1])
                for out in (made.stderr, judge.stderr) for line in out.splitlines()
                if " calls" in line)
    assert calls <= 60
    again = nuggetizer_cli("nuggetize", *settings, "--topics", topics, "--qrels", qrels,
                           "--corpus", CRUX_DUC / "passages.jsonl", "-o", tmp_path / "k2.jsonl",
                           cache=cache)
    assert " 0 calls" in again.stderr  # replayed from the cache
    print(f"\nCRUX embedded: {calls} calls, {time.monotonic() - started:.1f} s\n"
          + board.read_text())


def test_key_without_questions_judges_and_scores_zero() -> None:
    """A topic whose question generation never parsed: nothing to ask, everything scores 0."""
    import asyncio

    from nuggetizer.assessors import Assessor
    from nuggetizer.interface import Target
    from nuggetizer.types import Segment

    method = CruxMethod(CruxConfig(k=2))
    key = {"qid": "t", "query": "q", "questions": [], "ratings": {}, "tokens": {}}
    context = Target(run_id="r", qid="t", passages=[Segment(id="a", text="x y"),
                                                     Segment(id="b", text="")])
    answer = Target(run_id="s", qid="t", answer="z")
    backend = ScriptedBackend([], max_concurrency=1)  # an empty script: any call would fail
    assessor = Assessor(backend, None)
    ctx = asyncio.run(method.judge(assessor, key, context)).record
    ans = asyncio.run(method.judge(assessor, key, answer)).record
    # "b" has no text (not in the corpus): unjudged, and said so
    assert ctx["ratings"] == {"a": [], "b": []} and ctx["unjudged"] == 1
    assert method.score(key, ctx, [ctx]) == {"alpha_nDCG": 0.0, "Cov": 0.0, "Den": 0.0}
    assert method.score(key, ans, [ans]) == {"Cov_answer": 0.0}
    assert backend.calls == 0
