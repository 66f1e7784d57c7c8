"""A method registered through the public API (`import nuggetizer` only: register, Measure,
setting, ReportPart), with its settings, measures, sheets and report part declared
(tests/plugins/checklist_method.py), runs every command through the CLI on the mock backend:
nuggetize, assign (live, and dry: the calls counted are those the live run makes), score,
report, agreement, significance, and export-sheets/import-sheets back to the same scores."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
SAMPLE = REPO / "tracks" / "sample"
RUNS = [REPO / "runs" / "sample" / f"{name}.jsonl" for name in ("good", "middling", "poor")]
RUN_IDS = ["sample-good", "sample-middling", "sample-poor"]
METHOD = ["--method", "checklist", "--set", "items=3"]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`nuggetizer ARGS` with the plugin loaded."""
    path = os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "nuggetizer", *map(str, args)],
                            capture_output=True, text=True, timeout=300, cwd=REPO,
                            env={**os.environ, "NUGGETIZER_METHODS": "checklist_method",
                                 "PYTHONPATH": path})
    assert "Traceback" not in result.stderr, result.stderr
    return result


def ok(*args: str | Path) -> subprocess.CompletedProcess[str]:
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    return result


def calls(text: str, pattern: str) -> int:
    found = re.search(pattern, text)
    assert found, text
    return int(found.group(1))


def board(path: Path) -> dict[str, dict[str, float]]:
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return {r[0]: {m: float(v) for m, v in zip(rows[0][1:], r[1:])} for r in rows[1:]}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Keys for three sample topics and the three sample runs judged, each step first dry
    then live; what each said."""
    tmp = tmp_path_factory.mktemp("checklist")
    topics = tmp / "topics.tsv"
    topics.write_text("".join((SAMPLE / "topics.tsv").read_text().splitlines(True)[:3]))
    key, out = tmp / "key.jsonl", tmp / "judged"
    cache = ["--assessor", "mock", "--cache", tmp / "cache.sqlite"]
    runs = [a for run in RUNS for a in ("--run", run)]
    steps = {
        "nuggetize": ["nuggetize", *METHOD, "--topics", topics, "-o", key, *cache],
        "assign": ["assign", *METHOD, "--key", key, *runs, "-o", out, *cache],
    }
    said: dict[str, str] = {}
    for name, args in steps.items():
        said[f"{name}-dry"] = ok(*args, "--dry-run").stderr
        assert not (out if name == "assign" else key).exists()  # a dry run writes nothing
        said[name] = ok(*args).stderr
        said[f"{name}-again"] = ok(*args, "--dry-run").stderr
    (tmp / "said.json").write_text(json.dumps(said))
    return {"tmp": tmp, "key": key, "judged": out, "said": tmp / "said.json"}


def test_the_dry_runs_count_the_calls_the_live_runs_make(judged: dict[str, Path]) -> None:
    said = json.loads(judged["said"].read_text())
    assert calls(said["nuggetize-dry"], r"\((\d+) topics\): (?:\d+) calls") == 3
    made = calls(said["nuggetize"], r"nuggetize --method checklist: 3 topics, (\d+) calls")
    assert calls(said["nuggetize-dry"], r"(\d+) calls to make") == made == 3
    assert calls(said["nuggetize-again"], r"(\d+) calls the cache holds") == made
    assert calls(said["nuggetize-again"], r"(\d+) calls to make") == 0
    answers = sum(1 for run in RUNS for line in run.read_text().splitlines()
                  if json.loads(line)["topic_id"] in ("sample-1", "sample-2", "sample-3"))
    made = calls(said["assign"], rf"assign --method checklist: {answers} answers, .*?(\d+) calls")
    assert made == answers  # one call per answer, all parsed at once
    assert calls(said["assign-dry"], r"(\d+) calls to make") == made
    assert calls(said["assign-again"], r"(\d+) calls the cache holds") == made
    assert calls(said["assign-again"], r"(\d+) calls to make") == 0


def test_keys_and_judgments_follow_the_declared_settings(judged: dict[str, Path]) -> None:
    keys = [json.loads(line) for line in judged["key"].read_text().splitlines()]
    assert [k["qid"] for k in keys] == ["sample-1", "sample-2", "sample-3"]
    assert all(1 <= len(k["items"]) <= 3 for k in keys)
    assert keys[0]["provenance"]["config"] == {"method": "checklist", "items": 3,
                                               "pass_share": 0.5}
    files = sorted(judged["judged"].glob("*.jsonl"))
    assert [p.stem for p in files] == RUN_IDS
    for path in files:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            key = next(k for k in keys if k["qid"] == record["qid"])
            assert record["items"] == key["items"]
            assert len(record["labels"]) == len(key["items"])
            assert set(record["labels"]) <= {"yes", "no"}


def test_score_gives_the_declared_measures(judged: dict[str, Path]) -> None:
    out = judged["tmp"] / "board.tsv"
    ok("score", *METHOD, "--key", judged["key"], judged["judged"], "-o", out)
    scores = board(out)
    assert sorted(scores) == RUN_IDS
    for run_id, means in scores.items():
        assert list(means) == ["checked", "passed", "words"]
        assert 0 <= means["checked"] <= 1
        assert means["passed"] * 3 == pytest.approx(round(means["passed"] * 3), abs=1e-3)
        answered = [json.loads(line) for line in
                    (judged["judged"] / f"{run_id}.jsonl").read_text().splitlines()]
        assert means["words"] == pytest.approx(
            sum(len(r["answer"].split()) for r in answered) / len(answered), abs=5e-5)


def test_report_names_the_plugins_measures_and_draws_its_part(judged: dict[str, Path]
                                                              ) -> None:
    html = judged["tmp"] / "report"
    ok("report", *METHOD, "--key", judged["key"], judged["judged"], "-o", html)
    page = (html / "index.html").read_text()
    assert "<dt>checked</dt><dd>share of the topic&#x27;s checklist points the answer " \
           "covers" in page
    assert "<dt>words</dt><dd>words in the answer <small>(mean over the topics a run " \
           "answered; lower is better)</small>" in page
    assert "Per-topic checked of each run" in page  # the primary measure by default
    assert re.search(r"<h2 id='section-\d+'>Checklist points no answer covered \(\d+\)</h2>", page)
    assert (html / "checklist.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "src='checklist.png'" in page
    bad = cli("report", *METHOD, judged["judged"], "-o", html, "--measure", "V_strict")
    assert bad.returncode == 2 and "'V_strict' is not one of checked, passed, words" in \
        bad.stderr


def test_agreement_of_two_identical_scorings(judged: dict[str, Path]) -> None:
    table = judged["tmp"] / "agreement.tsv"
    result = ok("agreement", *METHOD, "--key", judged["key"], judged["judged"],
                judged["judged"], "--measure", "words", "-o", table)
    assert "Agreement on words over 3 runs and 3 topics" in result.stdout
    rows = {r.split("\t")[0]: r.split("\t") for r in table.read_text().splitlines()[1:]}
    assert rows["run"][2:] == ["3", "1.0000", "1.0000"]
    assert rows["pairs"][2:] == ["9", "1.0000", "1.0000"]
    default = ok("agreement", *METHOD, judged["judged"], judged["judged"])
    assert "Agreement on checked over 3 runs" in default.stdout  # the primary by default
    tests = ok("significance", *METHOD, "--key", judged["key"], judged["judged"])
    assert "Paired tests on checked over 3 topics" in tests.stdout
    pairs = [line for line in tests.stdout.splitlines() if line.startswith("| sample-")]
    assert len(pairs) == 3  # every pair of the three runs


def test_sheets_round_trip_to_the_same_scores(judged: dict[str, Path]) -> None:
    tmp = judged["tmp"]
    sheets, back = tmp / "sheets", tmp / "back"
    ok("export-sheets", *METHOD, "--assessments", judged["judged"], "-o", sheets)
    assert sorted(p.name for p in sheets.glob("*.tsv")) == [f"sample-{q}.tsv" for q in "123"]
    first = (sheets / "sample-1.tsv").read_text().splitlines()
    assert first[0] == "# fill label with yes or no"
    assert first[1].split("\t") == ["kind", "run_id", "qid", "n", "text", "label"]
    ok("import-sheets", *METHOD, "--key", judged["key"], sheets, "-o", back)
    original, again = tmp / "original.tsv", tmp / "again.tsv"
    ok("score", *METHOD, "--key", judged["key"], judged["judged"], "--per-topic", original)
    ok("score", *METHOD, "--key", judged["key"], back, "--per-topic", again)
    assert again.read_text() == original.read_text()
    record = json.loads((back / "sample-good.jsonl").read_text().splitlines()[0])
    assert record["provenance"]["assessor"] == "manual"

    blank = tmp / "blank"
    ok("export-sheets", *METHOD, "--run", RUNS[0], "--key", judged["key"], "-o", blank)
    labels = [line.split("\t")[-1] for line in (blank / "sample-2.tsv").read_text()
              .splitlines() if line.startswith("point")]
    assert labels and set(labels) == {""}
    refused = cli("import-sheets", *METHOD, "--key", judged["key"], blank, "-o", tmp / "no")
    assert refused.returncode == 2 and not (tmp / "no").exists()
    assert re.search(r"blank.sample-1\.tsv:\d+: label '' is not one of yes, no", refused.stderr)
