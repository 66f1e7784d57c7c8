"""Humans in the loop: nugget post-editing sheets, assignment sheets, castorini interop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from flows import score
from shared_data import RAG24
from sheet_rows import read_rows, write_rows

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import (
    nugget_sheet,
    read_assessments,
    read_assignment_sheet,
    read_nugget_sheet,
    read_nuggets,
)
from nuggetizer.scoring import per_topic_tsv

NUGGETS = RAG24 / "nuggets.mistral.jsonl"
RUNS = sorted((RAG24 / "runs").glob("*.jsonl"))


@pytest.fixture(scope="module")
def keys():
    return read_nuggets(NUGGETS, lenient=True)




def test_nugget_sheet_round_trip_on_real_nuggets(keys, tmp_path):
    sheet = tmp_path / "nuggets.tsv"
    result = CliRunner().invoke(cli, ["export-nuggets", str(NUGGETS), "-o", str(sheet),
                                      "--lenient"])
    assert result.exit_code == 0, result.output
    rows = read_rows(sheet)
    assert rows[0] == ["qid", "query", "n", "nugget", "importance"]
    assert len(rows) - 1 == sum(len(k.nuggets) for k in keys.values())
    # the 40 off-menu labels were read as unjudged: they come out blank, to be filled in
    assert sum(1 for r in rows[1:] if r[4] == "") == 40
    err = pytest.raises(InputError, read_nugget_sheet, sheet).value
    first_blank = next(k for k, r in enumerate(rows[1:], 3) if r[4] == "")  # comment + header
    assert err.line == first_blank and "importance is empty" in err.message
    assert read_nugget_sheet(sheet, allow_blank=True) == keys
    out = tmp_path / "imported.jsonl"
    result = CliRunner().invoke(cli, ["import-nuggets", str(sheet), "-o", str(out),
                                      "--allow-blank"])
    assert result.exit_code == 0, result.output
    assert read_nuggets(out) == keys  # strict now
    assert json.loads(out.read_text().splitlines()[0])["provenance"]["assessor"] == "manual"


def test_post_edits_are_applied_and_checked(keys, tmp_path):
    subset = {q: keys[q] for q in list(keys)[:2]}
    sheet = tmp_path / "two.tsv"
    sheet.write_text(nugget_sheet(subset, "test"), encoding="utf-8")
    rows = read_rows(sheet)
    q1, q2 = list(subset)
    rows = [r for r in rows if not (r[0] == q1 and r[2] == "2")]  # delete nugget 2 of topic 1
    rows[1][4] = "okay" if rows[1][4] == "vital" else "vital"  # flip one importance
    rows.append([q2, "", "", "an added\tnugget with a tab", "Vital"])
    write_rows(sheet, rows)
    edited = read_nugget_sheet(sheet)
    assert len(edited[q1].nuggets) == len(subset[q1].nuggets) - 1
    assert edited[q1].nuggets[0].importance != subset[q1].nuggets[0].importance
    assert edited[q2].nuggets[-1].text == "an added\tnugget with a tab"
    assert edited[q2].nuggets[-1].importance == "vital"
    rows[2][4] = "essential"
    write_rows(sheet, rows)
    err = pytest.raises(InputError, read_nugget_sheet, sheet).value
    assert err.line == 3 and "'essential'" in err.message and "vital, okay" in err.message
    result = CliRunner().invoke(cli, ["import-nuggets", str(sheet), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and f"{sheet}:3:" in result.stderr
    assert not (tmp_path / "x").exists()


def _nuggets_subset(keys, qids, path: Path) -> Path:
    path.write_text("".join(json.dumps({"qid": q, "query": keys[q].query, "nuggets": [
        {"text": n.text, "importance": n.importance} for n in keys[q].nuggets]}) + "\n"
        for q in qids), encoding="utf-8")
    return path


def test_blank_sheets_from_runs_filled_by_hand(keys, tmp_path):
    qids = ["2024-105741", "2024-121840"]
    nuggets = _nuggets_subset(keys, qids, tmp_path / "n.jsonl")
    sheets = tmp_path / "sheets"
    args = ["export-sheets", "--nuggets", str(nuggets), "-o", str(sheets)]
    for run in RUNS:
        args += ["--run", str(run)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    files = sorted(sheets.glob("*.tsv"))
    assert [f.stem for f in files] == sorted(qids)
    queries = {q: keys[q].query for q in qids}
    err = pytest.raises(InputError, read_assignment_sheet, files[0], queries).value
    assert err.line == 4 and "assignment is empty" in err.message  # comment, header, answer
    # an assessor fills in every label: support for odd nuggets, not_support for even ones
    for f in files:
        rows = read_rows(f)
        for r in rows[1:]:
            if r[0] == "nugget":
                r[6] = "support" if int(r[3]) % 2 else "not_support"
        write_rows(f, rows)
    out = tmp_path / "manual"
    result = CliRunner().invoke(cli, ["import-sheets", str(sheets), "--nuggets", str(nuggets),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    manual = [a for p in sorted(out.glob("*.jsonl")) for a in read_assessments(p)]
    assert {a.run_id for a in manual} == {p.stem for p in RUNS} and len(manual) == 6
    for a in manual:
        assert [n.text for n in a.nuggets] == [n.text for n in keys[a.qid].nuggets]
        assert [n.assignment for n in a.nuggets] == [
            "support" if k % 2 else "not_support" for k in range(1, len(a.nuggets) + 1)]
    table = score(manual)
    vital = [k for k, n in enumerate(keys[qids[0]].nuggets, 1) if n.importance == "vital"]
    expected = sum(1 for k in vital if k % 2) / len(vital)
    assert all(table.per_topic[r][qids[0]]["V_strict"] == expected for r in table.per_topic)


def test_castorini_assignment_file_reads_and_scores(tmp_path):
    # castorini's older assignment files have no run_id (file named after the run) and
    # write "failed" when the LLM call failed
    path = tmp_path / "my-run.jsonl"
    record = {"query": "q", "qid": "t1", "answer_text": "a", "response_length": 5, "nuggets": [
        {"text": "a", "importance": "vital", "assignment": "support"},
        {"text": "b", "importance": "vital", "assignment": "failed"},
        {"text": "c", "importance": "okay", "assignment": "not_support"}]}
    path.write_text(json.dumps(record) + "\n")
    (a,) = read_assessments(path)
    assert a.run_id == "my-run" and a.length == 5
    assert [n.assignment for n in a.nuggets] == ["support", "unjudged", "not_support"]
    table = score([a])
    assert table.unjudged["my-run"] == 1 and table.per_topic["my-run"]["t1"]["V_strict"] == 1.0
    record["nuggets"][2]["assignment"] = "supported?"
    path.write_text(json.dumps(record) + "\n")
    err = pytest.raises(InputError, read_assessments, path).value
    assert err.line == 1 and "'supported?'" in err.message
    assert read_assessments(path, lenient=True)[0].nuggets[2].assignment == "unjudged"


def castorini_metrics(record: dict) -> dict[str, float]:
    """castorini's per-answer metrics, as its calculate_nugget_scores reads a JSONL record."""
    vital = [n for n in record["nuggets"] if n["importance"] == "vital"]
    every = record["nuggets"]

    def credit(ns, partial):
        return sum(1.0 if n["assignment"] == "support" else
                   partial if n["assignment"] == "partial_support" else 0.0 for n in ns)

    return {"strict_vital_score": credit(vital, 0) / len(vital) if vital else 0.0,
            "vital_score": credit(vital, 0.5) / len(vital) if vital else 0.0,
            "strict_all_score": credit(every, 0) / len(every) if every else 0.0,
            "all_score": credit(every, 0.5) / len(every) if every else 0.0}


def castorini_readable(assessment_file: Path, nuggets_file: Path) -> dict[tuple[str, str], dict]:
    """Read our files with the keys castorini's scripts read; returns its metrics per answer."""
    for line in nuggets_file.read_text().splitlines():
        obj = json.loads(line)
        assert isinstance(obj["qid"], str) and isinstance(obj["query"], str)
        assert all({"text", "importance"} <= set(n) for n in obj["nuggets"])
    out = {}
    for line in assessment_file.read_text().splitlines():
        obj = json.loads(line)
        assert {"qid", "query", "answer_text", "run_id"} <= set(obj)
        out[(obj["run_id"], obj["qid"])] = castorini_metrics(obj)
    return out


@pytest.mark.slow
def test_real_runs_assigned_scored_and_sheets_round_trip(keys, tmp_path):
    """The three real runs x two topics assigned by the embedded model, scored, exported to
    sheets, re-imported and scored identically; castorini's formulas read our files."""
    qids = ["2024-121840", "2024-126056"]  # 12 and 13 nuggets, all labelled: 2 calls an answer
    nuggets = _nuggets_subset(keys, qids, tmp_path / "nuggets.jsonl")
    runner = CliRunner()
    args = ["assign", "--nuggets", str(nuggets), "-o", str(tmp_path / "auto"), "--lenient",
            "--cache", str(tmp_path / "cache.sqlite")]
    for run in RUNS:
        args += ["--run", str(run)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    score_args = ["score", "--nuggets", str(nuggets)]
    result = runner.invoke(cli, [*score_args, str(tmp_path / "auto"), "-o",
                                 str(tmp_path / "lb.tsv"), "--per-topic", str(tmp_path / "pt.tsv")])
    assert result.exit_code == 0, result.output
    leaderboard = (tmp_path / "lb.tsv").read_text().splitlines()
    assert len(leaderboard) == 4 and {r.split("\t")[0] for r in leaderboard[1:]} == {
        p.stem for p in RUNS}
    result = runner.invoke(cli, ["export-sheets", "--assessments", str(tmp_path / "auto"), "-o",
                                 str(tmp_path / "sheets")])
    assert result.exit_code == 0, result.output
    auto = [a for p in sorted((tmp_path / "auto").glob("*.jsonl")) for a in read_assessments(p)]
    unjudged = sum(n.assignment == "unjudged" for a in auto for n in a.nuggets)
    result = runner.invoke(cli, ["import-sheets", str(tmp_path / "sheets"), "--nuggets",
                                 str(nuggets), "-o", str(tmp_path / "manual"),
                                 *(["--allow-blank"] if unjudged else [])])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, [*score_args, str(tmp_path / "manual"), "-o",
                                 str(tmp_path / "lb2.tsv"), "--per-topic",
                                 str(tmp_path / "pt2.tsv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "lb2.tsv").read_text() == (tmp_path / "lb.tsv").read_text()
    assert (tmp_path / "pt2.tsv").read_text() == (tmp_path / "pt.tsv").read_text()
    table = score(auto, qids)
    assert per_topic_tsv(table) == (tmp_path / "pt.tsv").read_text()
    for path in sorted((tmp_path / "auto").glob("*.jsonl")):
        theirs = castorini_readable(path, nuggets)
        for (run_id, qid), metrics in theirs.items():
            mine = table.per_topic[run_id][qid]
            if not any(n.assignment == "unjudged" for a in auto for n in a.nuggets
                       if (a.run_id, a.qid) == (run_id, qid)):
                assert metrics["strict_vital_score"] == pytest.approx(mine["V_strict"])
                assert metrics["all_score"] == pytest.approx(mine["A"])


@pytest.mark.parametrize(("rows", "line", "message"), [
    ([["nuggett", "q", "r", "1", "x", "vital", "", ""]], 2,
     "column kind is 'nuggett': write answer or nugget"),
    ([["nugget", "q", "r", "1", "x", "vital", "", ""]], 2,
     "nugget row for run r topic q does not follow that answer's answer row"),
    ([["answer", "q", "r", "", "a", "", "", ""], ["answer", "q", "r", "", "a", "", "", ""]], 3,
     "run r topic q appears twice (also on line 2)"),
    ([["answer", "q", "", "", "a", "", "", ""]], 2, "columns qid and run_id must both be filled"),
])
def test_the_answer_rows_of_a_sheet_are_checked(tmp_path: Path, rows: list[list[str]],
                                                line: int, message: str) -> None:
    sheet = tmp_path / "sheet.tsv"
    write_rows(sheet, [["kind", "qid", "run_id", "n", "text", "importance", "assignment",
                        "length"], *rows])
    err = pytest.raises(InputError, read_assignment_sheet, sheet, {"q": "the query"}).value
    assert (err.line, err.message) == (line, message)
