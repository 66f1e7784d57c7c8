"""Assessments and the key they are scored against agree, or `score` says so: a nugget of the
key dropped from an assessment, one the key does not have, and one re-worded are errors naming
file and line (strict) or counted unjudged items (--lenient); an importance re-labelled after
assessment is scored with the key's label and reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

KEY = [("Slepian was shot in his home", "vital"), ("Kopp is sought by the FBI", "vital"),
       ("clinics hired guards", "okay")]


def write_key(path: Path, nuggets: list[tuple[str, str]] = KEY) -> Path:
    record = {"qid": "q1", "query": "violence at abortion clinics",
              "nuggets": [{"text": t, "importance": i} for t, i in nuggets]}
    path.write_text(json.dumps(record) + "\n")
    return path


def assessment(run_id: str, nuggets: list[tuple[str, str, str]]) -> str:
    return json.dumps({"run_id": run_id, "qid": "q1", "query": "violence at abortion clinics",
                       "answer_text": "Dr. Slepian was shot; Kopp is sought.", "length": 6,
                       "nuggets": [{"text": t, "importance": i, "assignment": a}
                                   for t, i, a in nuggets]})


def labelled(*assignments: str) -> list[tuple[str, str, str]]:
    return [(t, i, a) for (t, i), a in zip(KEY, assignments)]


def score(tmp_path: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "assessed"
    folder.mkdir(exist_ok=True)
    (folder / "runs.jsonl").write_text("".join(line + "\n" for line in lines))
    command = [sys.executable, "-m", "nuggetizer", "score", str(folder), "--nuggets",
               str(write_key(tmp_path / "key.jsonl")), "-o", str(tmp_path / "board.tsv"),
               *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def board(tmp_path: Path) -> dict[str, list[str]]:
    rows = [line.split("\t") for line in (tmp_path / "board.tsv").read_text().splitlines()]
    return {r[0]: r[1:] for r in rows[1:]}


CLEAN = assessment("clean", labelled("support", "support", "not_support"))
DROPPED = assessment("dropped", labelled("support", "support")[:2])
EXTRA = assessment("extra", [*labelled("support", "support", "support"),
                             ("a nugget nobody wrote", "okay", "support")])
REWORDED = assessment("reworded", [(KEY[0][0], "vital", "support"),
                                   ("Kopp is wanted by the FBI", "vital", "support"),
                                   (KEY[2][0], "okay", "support")])


@pytest.mark.parametrize(("line", "problem"), [
    (DROPPED, "nugget 'clinics hired guards' of the key is missing from this assessment "
              "(1 missing, 0 not in the key)"),
    (EXTRA, "nugget 'a nugget nobody wrote' is not in the key (0 missing, 1 not in the key)"),
    (REWORDED, "nugget 'Kopp is sought by the FBI' of the key reads 'Kopp is wanted by the FBI' "
               "here (re-worded?)"),
])
def test_a_mismatch_is_an_error_naming_file_and_line(tmp_path: Path, line: str,
                                                     problem: str) -> None:
    result = score(tmp_path, [CLEAN, line])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (error,) = result.stderr.splitlines()
    run_id = json.loads(line)["run_id"]
    assert error.startswith(f"error: {tmp_path / 'assessed' / 'runs.jsonl'}:2: run {run_id!r} "
                            f"topic 'q1': {problem}"), error
    assert "--lenient" in error
    assert not (tmp_path / "board.tsv").exists()


def test_lenient_scores_the_key_and_counts_what_is_missing(tmp_path: Path) -> None:
    result = score(tmp_path, [CLEAN, DROPPED, EXTRA, REWORDED], "--lenient")
    assert result.returncode == 0, result.stderr
    scores = board(tmp_path)
    # columns V_strict V W_strict W A_strict A L; unjudged nuggets are left out of the means
    assert scores["clean"][:2] == ["1.0000", "1.0000"] and scores["clean"][4] == "0.6667"
    assert scores["dropped"][4] == "1.0000"  # 2 judged of 3, the missing one left out
    assert scores["extra"][4] == "1.0000"  # the extra nugget is not scored
    assert scores["reworded"][:2] == ["1.0000", "1.0000"]  # the key's Kopp nugget unjudged
    summary = result.stderr.splitlines()[-1]
    assert "2 unjudged (left out: 2 missing)" in summary, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith("note: 4 differences")


def test_the_keys_importance_wins_and_is_reported(tmp_path: Path) -> None:
    relabelled = assessment("relabelled", [(KEY[0][0], "vital", "support"),
                                           (KEY[1][0], "okay", "not_support"),
                                           (KEY[2][0], "vital", "support")])
    result = score(tmp_path, [relabelled])
    assert result.returncode == 0, result.stderr
    # with the key's labels: vital = support, not_support -> V 0.5; with the record's: V 1.0
    assert board(tmp_path)["relabelled"][:2] == ["0.5000", "0.5000"]
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith("note: 2 differences")
    assert (f"{tmp_path / 'assessed' / 'runs.jsonl'}:1: run 'relabelled' topic 'q1': nugget "
            "'Kopp is sought by the FBI' is okay here but vital in the key") in notes[0]


def test_unjudged_importance_is_counted_by_kind(tmp_path: Path) -> None:
    key = write_key(tmp_path / "failed.jsonl", [(KEY[0][0], "vital"), (KEY[1][0], "failed")])
    line = assessment("r", [(KEY[0][0], "vital", "support"), (KEY[1][0], "failed", "failed")])
    (tmp_path / "a.jsonl").write_text(line + "\n")
    result = subprocess.run([sys.executable, "-m", "nuggetizer", "score", str(tmp_path / "a.jsonl"),
                             "--nuggets", str(key), "--lenient"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "2 unjudged (left out: 1 assignment, 1 importance)" in result.stderr.splitlines()[-1]


def test_evaluate_starts_from_an_existing_key(tmp_path: Path) -> None:
    """A track config that names its answer key (the usual case with real data): evaluate
    judges and scores with it, and builds nothing."""
    from emulated import emulator, small_track

    runs, nuggets = small_track(tmp_path, runs=2, topics=3)
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{json.loads(line)['qid']}\t{json.loads(line)['query']}\n"
                              for line in nuggets.read_text().splitlines()))
    track = tmp_path / "track.toml"
    track.write_text(f'name = "rag24-cut"\ntopics = "{topics.name}"\nkey = "{nuggets.name}"\n'
                     f'runs = [{", ".join(json.dumps(p.name) for p in runs)}]\n')
    out = tmp_path / "out"
    with emulator(tmp_path) as server:
        result = subprocess.run(
            [sys.executable, "-m", "nuggetizer", "evaluate", "--track", str(track), "-o",
             str(out), "--assessor", "openai:emulated", "--base-url", server.url, "--no-cache"],
            capture_output=True, text=True, timeout=300)
        asked = {r["kind"] for r in server.requests()}
    assert result.returncode == 0, result.stderr
    assert asked == {"assign"}  # no nugget was created or labelled
    assert not (out / "nuggets.jsonl").exists()
    rows = (out / "leaderboard.tsv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("run_id\tV_strict")
    assert sorted(p.name for p in (out / "assessments").glob("*.jsonl")) == sorted(
        p.name for p in runs)
    assert "evaluate: 3 topics, 6 answers" in result.stderr
