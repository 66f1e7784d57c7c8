"""The files of the TREC AutoJudge framework: what we write loads with autojudge-base's own
readers, and what it writes loads with ours."""

from __future__ import annotations

from pathlib import Path

import pytest
from autojudge_offline import import_autojudge_base
from click.testing import CliRunner
from test_agreement import RUNS, A, write

from nuggetizer.cli import cli
from nuggetizer.compare import load_scores
from nuggetizer.formats import (
    bank_records,
    is_autojudge_leaderboard,
    iter_leaderboard,
    qrels_text,
    read_nuggets,
    read_qrels,
    write_jsonl_atomic,
    write_text_atomic,
)
from nuggetizer.types import Nugget, NuggetList, Qrel

autojudge_base = import_autojudge_base()


def scored(tmp_path: Path) -> Path:
    """`score --autojudge-leaderboard` of the assessments of test_agreement's grid A."""
    folder = write(A, tmp_path / "a")
    out = tmp_path / "lb.txt"
    result = CliRunner().invoke(cli, ["score", str(folder), "--autojudge-leaderboard", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_leaderboard_loads_with_the_framework(tmp_path):
    from autojudge_base import Leaderboard

    path = scored(tmp_path)
    assert is_autojudge_leaderboard(path)
    board = Leaderboard.load(path, format="tot")
    assert "V_strict" in board.measures and "A" in board.measures
    values = {(e.run_id, e.topic_id): e.values for e in board.entries}
    # grid A: run k (1-based) supports k of 4 vital nuggets on every topic
    for k, run in enumerate(RUNS, 1):
        for topic in ("t1", "t2", "t3", "all"):
            assert float(values[(run, topic)]["V_strict"]) == pytest.approx(k / 4)


def test_leaderboard_passes_autojudge_evaluate_verification(tmp_path):
    eval_results = pytest.importorskip("autojudge_evaluate.eval_results")
    result = eval_results.load(scored(tmp_path), format="tot", has_header=False,
                               drop_aggregates=False, recompute_aggregates=False, verify=True,
                               on_missing="error")
    ranking = result.get_aggregate_ranking("V_strict")
    assert ranking == pytest.approx({run: k / 4 for k, run in enumerate(RUNS, 1)})


def test_leaderboard_reads_back(tmp_path):
    path = scored(tmp_path)
    rows = list(iter_leaderboard(path))
    assert ("r2", "all", "V_strict", 0.5) in rows
    scores = load_scores([path], "V_strict")
    assert scores.means == pytest.approx({run: k / 4 for k, run in enumerate(RUNS, 1)})
    assert scores.per_topic["r3"] == pytest.approx({"t1": 0.75, "t2": 0.75, "t3": 0.75})


def test_a_framework_leaderboard_is_an_agreement_input(tmp_path):
    from autojudge_base import LeaderboardBuilder, LeaderboardSpec, MeasureSpec

    builder = LeaderboardBuilder(LeaderboardSpec(measures=(MeasureSpec("SCORE"),)))
    for k, run in enumerate(RUNS):
        for topic in ("t1", "t2"):
            builder.add(run_id=run, topic_id=topic, values={"SCORE": k + (topic == "t2")})
    path = tmp_path / "framework.txt"
    builder.build().write(path, format="tot")
    ours = scored(tmp_path)
    result = CliRunner().invoke(cli, ["agreement", str(ours), str(path), "--measure-a",
                                      "V_strict", "--measure-b", "SCORE"])
    assert result.exit_code == 0, result.output
    assert "| run | run means | 4 | 1.0000 | 1.0000 |" in result.output
    assert "| tau_ap | 1.0000 |" in result.output


def test_qrels_load_with_the_framework(tmp_path):
    from autojudge_base.qrels.qrels import read_qrel_file

    rows = [Qrel(qid="28", docid="d1", grade=3), Qrel(qid="28", docid="d2", grade=0),
            Qrel(qid="5", docid="d1", grade=1)]
    path = tmp_path / "relevance.qrels"
    write_text_atomic(path, qrels_text(rows))
    theirs = read_qrel_file(path)
    assert [(r.topic_id, r.doc_id, r.grade) for r in theirs.rows] == \
        [(q.qid, q.docid, q.grade) for q in rows]
    assert [(q.qid, q.docid, q.grade) for q in read_qrels(path)] == \
        [(q.qid, q.docid, q.grade) for q in rows]


KEYS = [NuggetList(qid="28", query="what is the flow", nuggets=[
            Nugget(text="laminar", importance="vital"), Nugget(text="turbulent",
                                                               importance="okay"),
            Nugget(text="unrated")]),
        NuggetList(qid="5", query="why", nuggets=[Nugget(text="because", importance="vital")])]


def test_nugget_bank_loads_with_the_framework(tmp_path):
    from autojudge_base.nugget_data import NuggetizerNuggetBanks, load_nugget_banks_generic

    path = tmp_path / "nuggets.jsonl"
    write_jsonl_atomic(path, bank_records(KEYS))
    banks = load_nugget_banks_generic(path, NuggetizerNuggetBanks)
    assert sorted(banks.banks) == ["28", "5"]
    bank = banks.banks["28"]
    assert bank.query == "what is the flow"
    assert [(n.text, n.importance) for n in bank.nuggets] == \
        [("laminar", "vital"), ("turbulent", "okay"), ("unrated", None)]
    banks.verify(expected_topic_ids=["28", "5"])
    back = read_nuggets(path)
    assert [n.model_dump() for n in back["28"].nuggets] == [n.model_dump() for n in KEYS[0].nuggets]


def test_a_framework_nugget_bank_reads_as_an_answer_key(tmp_path):
    from autojudge_base.nugget_data import NuggetizerNuggetBanks, write_nugget_banks_generic
    from autojudge_base.nugget_data.nuggetizer import NuggetizerNugget, NuggetizerNuggetBank

    banks = NuggetizerNuggetBanks.from_banks_list([NuggetizerNuggetBank(
        qid="28", query="q", nuggets=[NuggetizerNugget(text="a", importance="vital"),
                                      NuggetizerNugget(text="b", importance="okay",
                                                       reasoning="why")])])
    path = tmp_path / "theirs.jsonl"
    write_nugget_banks_generic(banks, path)
    keys = read_nuggets(path)
    assert [(n.text, n.importance) for n in keys["28"].nuggets] == [("a", "vital"),
                                                                     ("b", "okay")]
