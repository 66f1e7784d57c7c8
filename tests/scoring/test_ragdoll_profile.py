"""Issue 40: the `ragdoll` scoring profile gives castorini RAGDoll's numbers (the TREC RAG 2026
scorer, github castorini/RAGDoll at 1f06719) and the default profile stays the guideline's.

Judgments are written here (seeded, with the cases where the two readings part: repeated
passages, judge failures, answers with nothing judged, uncited objects, unanswered topics,
rubrics without a positive weight), scored by `score`, and compared with values this test
computes by its own short code from the published definitions:

- support (RAGDoll support/metrics.py `support_metric`): per answer object the mean weight
  (FS 1, PS 0.5, NS 0) of its judged citations ("-1" left out; an object whose every
  citation is "-1" leaves the recall denominator); precision the mean of those over the
  objects with a judged citation; recall their sum over the objects (an uncited one 0); first
  citation: the first alone. The guideline's reading: precision the mean weight over every
  judged (object, passage) pair, recall the mean of each object's best judged weight;
- nuggets (nuggetizer/metrics.py `calculate_scores`): a failed assignment counts as
  not_support in the denominator;
- rubrics (rubric/metrics.py `score_response`): sum of weight x value over the positive
  weights, a failed verdict 0, NaN without a positive weight (left out of the run's mean);
- every run mean over the topics the run has a row for (RAGDoll's `run_means`, NaN skipped);
  the guideline's: an unanswered topic scores 0;
- and RAGDoll's own test examples (tests/test_support.py, tests/test_rubric.py) as published.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ragdoll_judgments import RUNS, TOPICS, W, answered, support_judgments

from nuggetizer import api
from nuggetizer.cli import cli
from nuggetizer.interface import make_method
from nuggetizer.scoring import score_paths


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def topics_file(tmp: Path) -> Path:
    path = tmp / "topics.tsv"
    path.write_text("".join(f"{t}\tquestion {t}\n" for t in TOPICS), encoding="utf-8")
    return path


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def run_means(cells: dict[tuple[str, str], float], unanswered_zero: bool) -> dict[str, float]:
    """A run's mean over its cells (NaN skipped), or over every topic with 0 where none."""
    means = {}
    for run in RUNS:
        if unanswered_zero:
            values = [cells.get((run, t), 0.0) for t in TOPICS if not math.isnan(
                cells.get((run, t), 0.0))]
        else:
            values = [v for (r, _), v in cells.items() if r == run and not math.isnan(v)]
        means[run] = mean(values)
    return means


# --- support ---------------------------------------------------------------------------------

def ragdoll_support(record: dict[str, Any], first: bool) -> tuple[float, float]:
    """(precision, recall) by RAGDoll's definition: every citation as written, a repeated
    passage counted again with its passage's label."""
    total, judged, acc = len(record["sentences"]), 0, 0.0
    for s in record["sentences"]:
        if not s["citations"]:
            continue
        by_doc = {p["citation"]: p["label"] for p in s["pairs"]}
        labels = [by_doc[c] for c in s["citations"]][:1 if first else None]
        valid = [W[x] for x in labels if x in W]
        if not valid:
            total -= 1
            continue
        acc += sum(valid) / len(valid)
        judged += 1
    return (acc / judged if judged else 0.0), (acc / total if total else 0.0)


def guideline_support(record: dict[str, Any]) -> tuple[float, float] | None:
    """(precision, recall) by the guideline's reading; None: nothing judged (no score)."""
    pairs = [W[p["label"]] for s in record["sentences"] for p in s["pairs"]
             if p["label"] in W]
    if not pairs and any(s["pairs"] for s in record["sentences"]):
        return None
    best = []
    for s in record["sentences"]:
        judged = [W[p["label"]] for p in s["pairs"] if p["label"] in W]
        if judged:
            best.append(max(judged))
        elif not s["pairs"]:
            best.append(0.0)
    return mean(pairs), mean(best)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_support_under_both_profiles_is_the_definitions(tmp_path: Path, seed: int) -> None:
    records = support_judgments(seed)
    judged = write(tmp_path / "support.jsonl", records)
    for citations in ("all", "first"):
        ragdoll = score_paths(make_method("support", {"citations": citations}, "ragdoll"),
                              [judged], topics=list(TOPICS))
        cells = {}
        for r in records:
            cells[r["run_id"], r["qid"]] = ragdoll_support(r, citations == "first")
        for k, measure in enumerate(("support_precision", "support_recall")):
            one = {c: v[k] for c, v in cells.items()}
            for (run, topic), value in one.items():
                assert ragdoll.per_topic[run][topic][measure] == pytest.approx(value, abs=1e-12)
            assert "t6" not in ragdoll.per_topic["r3"]  # unanswered: no row
            assert {r: m[measure] for r, m in ragdoll.means.items()} == pytest.approx(
                run_means(one, unanswered_zero=False), abs=1e-12)
    guideline = score_paths(make_method("support", {"citations": "all"}), [judged],
                            topics=list(TOPICS))
    scored = {(r["run_id"], r["qid"]): guideline_support(r) for r in records}
    assert scored["r2", "t5"] is None and "t5" not in guideline.per_topic["r2"]
    for k, measure in enumerate(("support_precision", "support_recall")):
        one = {c: v[k] for c, v in scored.items() if v is not None}
        for (run, topic), value in one.items():
            assert guideline.per_topic[run][topic][measure] == pytest.approx(value, abs=1e-12)
        assert guideline.per_topic["r3"]["t6"][measure] == 0.0  # unanswered: 0
        expected = {run: mean([one.get((run, t), 0.0) for t in TOPICS
                               if (run, t) != ("r2", "t5")]) for run in RUNS}
        assert {r: m[measure] for r, m in guideline.means.items()} == pytest.approx(
            expected, abs=1e-12)


def test_ragdolls_own_support_example(tmp_path: Path) -> None:
    """RAGDoll's tests/test_support.py `test_support_metric_matches_reference_arithmetic`, its
    line as its metrics read it (a narrative_id, sentences without ids or texts) and its
    published values; beside it the guideline's reading of the same labels."""
    line = {"narrative_id": "14", "run_id": "r1", "sentences": [
        {"citations": [{"support": "2"}]}, {"citations": [{"support": "1"}]},
        {"citations": [{"support": "0"}, {"support": "2"}]},
        {"citations": [{"support": "-1"}]}, {"citations": []}]}
    for sentence in line["sentences"]:  # RAGDoll's assembled files name each passage
        for j, cite in enumerate(sentence["citations"]):
            cite["reference"] = f"doc-{j}"
    path = write(tmp_path / "support_assignments.jsonl", [line])
    expected = {("ragdoll", "first"): (0.5, 0.375), ("ragdoll", "all"): (2 / 3, 0.5),
                ("guideline", "first"): (0.5, 0.375), ("guideline", "all"): (0.625, 0.625)}
    for (profile, citations), (precision, recall) in expected.items():
        table = score_paths(make_method("support", {"citations": citations}, profile), [path])
        assert table.means["r1"] == pytest.approx({"support_precision": precision,
                                                   "support_recall": recall}, abs=1e-12)
        scores = api.score(api.method("support", citations=citations, profile=profile), path)
        assert scores.table.means == table.means  # the Python API's `profile`


# --- nuggets ---------------------------------------------------------------------------------

def nugget_judgments(seed: int) -> list[dict[str, Any]]:
    """Assessments with failed assignments ("unjudged"), r2's t5 with nothing assigned."""
    rng = random.Random(seed)
    records = []
    for run, topic in answered():
        nuggets = []
        for k in range(8):
            importance = "vital" if k % 3 == 0 else "okay"
            label = "unjudged" if (run, topic) == ("r2", "t5") else rng.choices(
                ["support", "partial_support", "not_support", "unjudged"], [3, 2, 3, 2])[0]
            nuggets.append({"text": f"{topic} nugget {k}", "importance": importance,
                            "assignment": label})
        records.append({"run_id": run, "qid": topic, "query": "q", "answer_text": "a b c",
                        "length": 3, "nuggets": nuggets})
    return records


def ragdoll_nuggets(record: dict[str, Any]) -> dict[str, float]:
    """V_strict, V, A_strict, A by RAGDoll's calculate_scores: a failure counts 0."""
    full = {"support": 1.0}
    half = {"support": 1.0, "partial_support": 0.5}
    vital = [n["assignment"] for n in record["nuggets"] if n["importance"] == "vital"]
    every = [n["assignment"] for n in record["nuggets"]]
    return {"V_strict": mean([full.get(x, 0.0) for x in vital]),
            "V": mean([half.get(x, 0.0) for x in vital]),
            "A_strict": mean([full.get(x, 0.0) for x in every]),
            "A": mean([half.get(x, 0.0) for x in every])}


def test_nuggets_under_the_ragdoll_profile_are_its_definitions(tmp_path: Path) -> None:
    records = nugget_judgments(7)
    judged = write(tmp_path / "assessments.jsonl", records)
    table = score_paths(make_method("nuggets", None, "ragdoll"), [judged],
                        topics=list(TOPICS))
    cells = {(r["run_id"], r["qid"]): ragdoll_nuggets(r) for r in records}
    for measure in ("V_strict", "V", "A_strict", "A"):
        one = {c: v[measure] for c, v in cells.items()}
        for (run, topic), value in one.items():
            assert table.per_topic[run][topic][measure] == pytest.approx(value, abs=1e-12)
        assert {r: m[measure] for r, m in table.means.items()} == pytest.approx(
            run_means(one, unanswered_zero=False), abs=1e-12)
    assert table.per_topic["r2"]["t5"]["A"] == 0.0  # nothing assigned: scored 0, kept
    guideline = score_paths(make_method("nuggets"), [judged], topics=list(TOPICS))
    assert "t5" not in guideline.per_topic["r2"]  # the guideline's: no score, counted
    assert guideline.left_out["answers with nothing judged"] == 1
    first = records[0]
    judged_only = [n for n in first["nuggets"] if n["assignment"] != "unjudged"]
    assert guideline.per_topic["r1"]["t1"]["A"] == pytest.approx(
        ragdoll_nuggets({"nuggets": judged_only})["A"], abs=1e-12)


# --- rubrics ---------------------------------------------------------------------------------

def rubric_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A key of three topics (t3: only a failure mode, no positive weight) and judgments,
    among them RAGDoll's own examples (tests/test_rubric.py)."""
    key = [{"qid": "t1", "rubrics": [{"criterion": "c1", "weight": 5, "axis": "x"},
                                     {"criterion": "c2", "weight": 2, "axis": "x"},
                                     {"criterion": "c3", "weight": 3, "axis": "x"}]},
           {"qid": "t2", "rubrics": [{"criterion": "c4", "weight": 4, "axis": "x"},
                                     {"criterion": "c5", "weight": 4, "axis": "x"},
                                     {"criterion": "c6", "weight": -2, "axis": "x"}]},
           {"qid": "t3", "rubrics": [{"criterion": "c7", "weight": -3, "axis": "x"}]}]
    labels = {("r1", "t1"): ["satisfied", "partially_satisfied", "not_satisfied"],
              ("r1", "t2"): ["satisfied", "partially_satisfied", "satisfied"],
              ("r1", "t3"): ["satisfied"],
              ("r2", "t1"): ["satisfied", "unjudged", "not_satisfied"],
              ("r2", "t2"): ["unjudged", "unjudged", "unjudged"],
              ("r2", "t3"): ["not_satisfied"]}
    judged = []
    for (run, topic), given in labels.items():
        criteria = next(k["rubrics"] for k in key if k["qid"] == topic)
        judged.append({"run_id": run, "qid": topic, "answer_text": "a", "unjudged": 0,
                       "criteria": [{**c, "label": x} for c, x in zip(criteria, given)]})
    return key, judged


def ragdoll_rubric(record: dict[str, Any], ternary: bool) -> float:
    """RAGDoll's score_response: failed 0, NaN without a positive weight."""
    value = {"satisfied": 1.0, "partially_satisfied": 0.5 if ternary else 0.0}
    positive = sum(c["weight"] for c in record["criteria"] if c["weight"] > 0)
    total = sum(c["weight"] * value.get(c["label"], 0.0) for c in record["criteria"])
    return total / positive if positive else math.nan


def test_rubrics_under_the_ragdoll_profile_are_its_definitions(tmp_path: Path) -> None:
    key, records = rubric_records()
    key_path, judged = write(tmp_path / "rubrics.jsonl", key), write(tmp_path / "j.jsonl",
                                                                      records)
    # RAGDoll's published examples: (5 + 1 + 0) / 10 ternary; (4 + 0) / 8 binary
    assert ragdoll_rubric(records[0], True) == 0.6
    for grading in ("ternary", "binary"):
        method = make_method("rubrics", {"grading": grading}, "ragdoll")
        table = score_paths(method, [judged], method.read_keys(key_path))
        cells = {(r["run_id"], r["qid"]): ragdoll_rubric(r, grading == "ternary")
                 for r in records}
        for (run, topic), value in cells.items():
            if math.isnan(value):  # no positive weight: no score, left out of the mean
                assert "compliance" not in table.per_topic[run].get(topic, {})
            else:
                assert table.per_topic[run][topic]["compliance"] == pytest.approx(value,
                                                                                  abs=1e-12)
        for run in ("r1", "r2"):
            expected = mean([v for (r, _), v in cells.items() if r == run and not math.isnan(v)])
            assert table.means[run]["compliance"] == pytest.approx(expected, abs=1e-12)
    assert table.per_topic["r2"]["t2"]["compliance"] == 0.0  # failures: 0, weights kept
    guideline = score_paths(make_method("rubrics", {"grading": "binary"}), [judged],
                            make_method("rubrics").read_keys(key_path))
    assert guideline.per_topic["r2"]["t1"]["compliance"] == pytest.approx(5 / 8)  # left out
    assert "t2" not in guideline.per_topic["r2"]  # nothing judged: no score
    assert guideline.per_topic["r1"]["t3"]["compliance"] == 0.0  # the release's `else 0.0`


# --- the command line, the default kept ------------------------------------------------------

def test_score_profiles_on_the_command_line(tmp_path: Path) -> None:
    """`score --profile ragdoll` is RAGDoll's; no --profile and --profile guideline write the
    same bytes; each table's provenance names its profile."""
    judged = write(tmp_path / "support.jsonl", support_judgments(5))
    topics = topics_file(tmp_path)
    written = {}
    for name, flags in (("default", []), ("guideline", ["--profile", "guideline"]),
                        ("ragdoll", ["--profile", "ragdoll"])):
        board, per_topic = tmp_path / f"{name}.tsv", tmp_path / f"{name}.pt.tsv"
        result = CliRunner().invoke(cli, ["score", "--method", "support", "--set",
                                          "citations=all", str(judged), "--topics", str(topics),
                                          "-o", str(board), "--per-topic", str(per_topic),
                                          *flags])
        assert result.exit_code == 0, result.output
        written[name] = board.read_bytes() + per_topic.read_bytes()
        sidecar = json.loads(board.with_name(board.name + ".provenance.json").read_text())
        assert sidecar["profile"] == ("ragdoll" if name == "ragdoll" else "guideline")
        if name == "ragdoll":
            assert "score --method support (profile ragdoll):" in result.output
            assert "1 unanswered (left out)" in result.output
        else:
            assert "1 unanswered (scored 0)" in result.output
    assert written["default"] == written["guideline"] != written["ragdoll"]
    assert b"r3\tt6\t" in written["default"] and b"r3\tt6\t" not in written["ragdoll"]


def test_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    judged = write(tmp_path / "support.jsonl", support_judgments(5))
    result = CliRunner().invoke(cli, ["score", "--method", "support", str(judged), "--profile",
                                      "nist"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'nist' is not one of 'guideline', 'ragdoll'" in result.output
