"""A measure with nothing judged for it is no score: a topic whose vital nuggets all stayed
unjudged has no V or V_strict (left out of the run's mean and counted), never a 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.formats import assessment_record, write_jsonl_atomic
from nuggetizer.measures import label_scores, unjudged_measures
from nuggetizer.types import AssessedNugget, Assessment


def assessment(qid: str, labels: list[tuple[str, str]]) -> dict:
    return assessment_record(Assessment(
        run_id="r1", qid=qid, query=f"query {qid}", answer_text="an answer", length=10,
        nuggets=[AssessedNugget(text=f"{qid} nugget {k}", importance=imp, assignment=lab)
                 for k, (imp, lab) in enumerate(labels)]))


def scores(importance: list[str], assignment: list[str]) -> dict[str, float]:
    return {**label_scores(importance, assignment),
            **unjudged_measures(importance, assignment)}


def test_vital_nuggets_all_unjudged_give_no_v() -> None:
    found = scores(["vital", "vital", "okay"], ["unjudged", "unjudged", "support"])
    assert found["V"] != found["V"] and found["V_strict"] != found["V_strict"]  # NaN
    assert found["A"] == 1.0 and found["W"] == 1.0  # the okay nugget was judged
    assert scores(["okay", "okay"], ["support", "not_support"])["V"] == 0.0  # no vital
    every = scores(["vital", "okay"], ["unjudged", "unjudged"])
    assert all(every[m] != every[m] for m in ("V", "V_strict", "W", "W_strict"))
    assert unjudged_measures(["vital", "okay"], ["support", "unjudged"]) == {}


def test_the_score_engine_leaves_it_out_and_counts_it(tmp_path: Path) -> None:
    judged = tmp_path / "judged"
    judged.mkdir()
    write_jsonl_atomic(judged / "r1.jsonl", [
        assessment("t1", [("vital", "unjudged"), ("vital", "unjudged"), ("okay", "support")]),
        assessment("t2", [("vital", "support"), ("vital", "partial_support"),
                          ("okay", "not_support")]),
    ])
    board, per_topic = tmp_path / "board.tsv", tmp_path / "pt.tsv"
    result = CliRunner().invoke(cli, ["score", str(judged), "-o", str(board),
                                      "--per-topic", str(per_topic)])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in per_topic.read_text().splitlines()[1:]]
    t1 = {m: float(v) for run, q, m, v in rows if q == "t1"}
    assert "V" not in t1 and "V_strict" not in t1 and t1["A"] == 1.0
    means = {m: float(v) for run, q, m, v in rows if q == "all"}
    assert means["V"] == pytest.approx(0.75)  # t2's alone: (1 + 0.5) / 2
    assert means["V_strict"] == pytest.approx(0.5)
    assert means["A"] == pytest.approx((1.0 + 0.5) / 2)  # both topics
    sidecar = json.loads(board.with_name(board.name + ".provenance.json").read_text())
    counted = {"V of topics with nothing judged for it": 1,
               "V_strict of topics with nothing judged for it": 1}
    assert {k: sidecar["left_out"][k] for k in counted} == counted
    assert "V of topics with nothing judged for it" in result.output


def test_the_shared_scorer_agrees_with_the_engine() -> None:
    """`nugget_scores` (what ir_measures' runtime measures call) gives the NaN too, not 0."""
    from nuggetizer.measures import nugget_scores

    found = nugget_scores([("vital", "unjudged"), ("okay", "support")])
    assert found["V"] != found["V"] and found["A"] == 1.0
