"""A folder of judgments that lists those nobody has judged yet (not-judged-yet.tsv, as the
workbench's export of a campaign in progress writes it): `score` leaves them out and counts
them ("1 of 4 answers not judged yet"), never scores them 0; the same judgment left out of the
files altogether is an unanswered topic, scored 0. Battles, scored per run, the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nuggetizer.interface.registry import make_method
from nuggetizer.methods.battles.method import outcome
from nuggetizer.scoring.engine import NOT_JUDGED_YET
from nuggetizer.scoring.files import ScoreFiles, ScoreScope, left_out_text, score_files

NUGGETS = [{"text": "the first fact", "importance": "vital"},
           {"text": "the second fact", "importance": "okay"}]


def _write(folder: Path, pending: bool, drop: bool = False) -> tuple[Path, Path]:
    """Runs a and b on topics 1 and 2; b's answer to 2 nobody judged (every label unjudged,
    and listed when `pending`; left out of the files when `drop`)."""
    folder.mkdir(parents=True)
    key = folder.parent / f"{folder.name}-key.jsonl"
    key.write_text("".join(json.dumps({"qid": q, "query": f"topic {q}", "nuggets": NUGGETS})
                           + "\n" for q in ("1", "2")))
    for run in ("a", "b"):
        lines = []
        for qid in ("1", "2"):
            waiting = run == "b" and qid == "2"
            if waiting and drop:
                continue
            labels = ["unjudged", "unjudged"] if waiting else ["support", "not_support"]
            lines.append(json.dumps({
                "run_id": run, "qid": qid, "query": f"topic {qid}", "answer_text": "an answer",
                "length": 2, "nuggets": [{**n, "assignment": a}
                                         for n, a in zip(NUGGETS, labels)]}))
        (folder / f"{run}.jsonl").write_text("\n".join(lines) + "\n")
    if pending:
        (folder / NOT_JUDGED_YET).write_text("run_id\tqid\tassigned to (progress)\n"
                                             "b\t2\tann (not opened)\n")
    return folder, key


def test_answers_not_judged_yet_are_left_out_and_counted_never_scored_0(tmp_path: Path
                                                                          ) -> None:
    method = make_method("nuggets")
    tables = {}
    for name, pending, drop in (("listed", True, False), ("unlisted", False, False),
                                ("dropped", False, True)):
        folder, key = _write(tmp_path / name, pending, drop)
        tables[name] = score_files(method, [folder], ScoreScope(key=key), ScoreFiles())
    listed = tables["listed"]
    assert left_out_text(listed) == "1 of 4 answers not judged yet"
    assert listed.per_topic["b"] == {"1": listed.per_topic["a"]["1"]}  # no row for topic 2
    assert listed.means["b"]["V_strict"] == 1.0 == listed.means["a"]["V_strict"]
    # the same judgment, not listed: left out as well, counted as judged with nothing
    assert left_out_text(tables["unlisted"]) == "1 answers with nothing judged"
    assert tables["unlisted"].means["b"] == listed.means["b"]
    # left out of the files: an unanswered topic, scored 0 (what the old export made of it)
    assert tables["dropped"].means["b"]["V_strict"] == 0.5
    assert tables["dropped"].missing["b"] == 1


def test_score_says_how_many_are_not_judged_yet_and_battles_count_them_too(tmp_path: Path
                                                                             ) -> None:
    folder, key = _write(tmp_path / "assign", True)
    done = subprocess.run([sys.executable, "-m", "nuggetizer", "score", str(folder),
                           "--nuggets", str(key)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "0 unanswered (scored 0)" in done.stderr
    assert "1 of 4 answers not judged yet (left out, no score)" in done.stderr
    battles = tmp_path / "battles"
    battles.mkdir()
    rows = []
    for qid, verdicts in (("1", ("A", "B")), ("2", ("A", "A")), ("3", ("unjudged", "A"))):
        rows.append({"qid": qid, "run_a": "a", "run_b": "b", "narrative": f"topic {qid}",
                     "orders": [{"first": "a", "verdict": verdicts[0]},
                                {"first": "b", "verdict": verdicts[1]}]})
    (battles / "battles.jsonl").write_text("".join(
        json.dumps({**r, **outcome(r)}) + "\n" for r in rows))
    (battles / NOT_JUDGED_YET).write_text("run_id\tqid\tassigned to (progress)\n"
                                          "a vs b\t3\tann (1 of 1 questions)\n")
    table = score_files(make_method("battles"), [battles], ScoreScope(), ScoreFiles())
    assert left_out_text(table).startswith("1 of 3 answers not judged yet")
