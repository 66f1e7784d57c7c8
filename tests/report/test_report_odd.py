"""The report on odd inputs: a table holding nan or inf is refused naming file and line;
judgments of which nothing was judged (support, battles) exit 1 as `score` does, in one line,
writing nothing; a write the file system refuses names the file and leaves no temporary
file; no library warning reaches stderr."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from browser import drawn, playwright_page
from click.testing import CliRunner
from scripted import SCRIPTS

from nuggetizer.cli import cli

REPO = Path(__file__).resolve().parents[2]
RUNS = [REPO / "runs" / "sample" / f"{name}.jsonl" for name in ("good", "middling", "poor")]
CORPUS = REPO / "tracks" / "sample" / "corpus.jsonl"
SCRIPTS["never-says"] = lambda request: "I would rather not say."


def nuggetizer(*args: str | Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a fresh process (its stderr as a user sees it); `limit`: the largest
    file it may write, in bytes (RLIMIT_FSIZE)."""
    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "nuggetizer", *map(str, args)],
                          capture_output=True, text=True, timeout=300, preexec_fn=limited,
                          env={**os.environ, "PYTHONWARNINGS": "default"})


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_table_holding_nan_or_inf_is_refused_naming_file_and_line(tmp_path: Path,
                                                                    value: str) -> None:
    table = tmp_path / "per_topic.tsv"
    table.write_text("run_id\ttopic_id\tmeasure\tvalue\nr1\tq1\tV_strict\t0.5\n"
                     f"r2\tq1\tV_strict\t{value}\nr2\tq2\tV_strict\t0.25\n")
    done = nuggetizer("report", table, "-o", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {table}:3: value {value!r} is not a finite number: a score table holds "
        "finite scores (leave out the row of a run without one)"]
    assert not (tmp_path / "out").exists()


def test_support_with_nothing_judged_exits_1_as_score_does(tmp_path: Path) -> None:
    judged = tmp_path / "judged"
    made = CliRunner().invoke(cli, [
        "assign", "--method", "support", "--set", "reasks=0", "--run", str(RUNS[0]),
        "--corpus", str(CORPUS), "-o", str(judged), "--no-cache", "--assessor",
        "scripted:never-says"])
    assert made.exit_code == 0, made.output
    done = nuggetizer("report", "--method", "support", judged, "-o", tmp_path / "out")
    scored = nuggetizer("score", "--method", "support", judged)
    assert done.returncode == scored.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "report --method support: nothing was judged in 1 judgment " \
        "files" in lines[0] and "no report written" in lines[0]
    assert not (tmp_path / "out").exists()


def test_every_battle_unjudged_is_one_line_and_no_figures(tmp_path: Path) -> None:
    battles = tmp_path / "battles"
    args = ["battles", "-o", str(battles), "--no-cache", "--assessor", "scripted:never-says",
            "--set", "reasks=0"]
    for run in RUNS:
        args += ["--run", str(run)]
    made = CliRunner().invoke(cli, args)
    assert made.exit_code == 0, made.output
    done = nuggetizer("report", battles, "-o", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing was judged" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr
    assert not (tmp_path / "out").exists()  # no PNG without its page


def test_a_refused_write_names_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    judged = tmp_path / "judged"
    args = ["assign", "--run", str(RUNS[0]), "--run", str(RUNS[1]), "-o", str(judged),
            "--nuggets", str(write_key(tmp_path)), "--no-cache", "--assessor", "mock"]
    made = CliRunner().invoke(cli, args)
    assert made.exit_code == 0, made.output
    out = tmp_path / "out"
    done = nuggetizer("report", judged, "-o", out, limit=12_000)  # smaller than any figure
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot write {out}/"), lines
    assert "File too large" in lines[0] and ".tmp" not in lines[0]
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_no_library_warning_reaches_stderr(tmp_path: Path) -> None:
    """Odd but valid tables (one topic; a run with only its mean; constant scores): the page
    is written and stderr holds its one line."""
    table = tmp_path / "per_topic.tsv"
    table.write_text("run_id\ttopic_id\tmeasure\tvalue\nr1\tq1\tV_strict\t0.5\n"
                     "r1\tq1\tL\t100\nr2\tall\tV_strict\t0.5\nr3\tq1\tV_strict\t0.5\n"
                     "r3\tq1\tL\t100\n")
    done = nuggetizer("report", table, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert [line.split(" (")[0] for line in done.stderr.strip().splitlines()] == [
        f"report: {tmp_path / 'out' / 'index.html'}"]


def write_key(tmp_path: Path) -> Path:
    """The sample track's answer key, built by the mock assessor."""
    key = tmp_path / "nuggets.jsonl"
    made = CliRunner().invoke(cli, [
        "nuggetize", "--topics", str(REPO / "tracks" / "sample" / "topics.tsv"), "--qrels",
        str(REPO / "qrels" / "sample.qrels"), "--corpus", str(CORPUS), "-o", str(key),
        "--no-cache", "--assessor", "mock"])
    assert made.exit_code == 0, made.output
    return key


def test_a_published_page_names_no_install_folder_of_this_machine() -> None:
    import nuggetizer
    from nuggetizer.report.html import public_path

    installed = Path(nuggetizer.__file__).resolve().parent / "tracks" / "rag26" / "topics.tsv"
    assert public_path(f"answer key found beside the assessments: {installed}") == \
        "answer key found beside the assessments: <nuggetizer>/tracks/rag26/topics.tsv"
    assert public_path(str(Path.home() / "runs" / "a.jsonl")) == "~/runs/a.jsonl"


def test_hostile_run_ids_and_answers_stay_text_in_every_published_file(tmp_path: Path) -> None:
    """A run id and an answer holding HTML (a script, an image with onerror, a javascript: link)
    are text on the page, the drill-down pages and in the Markdown table; the LaTeX table
    escapes its special characters."""
    key = write_key(tmp_path)
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>_&%'
    run = json.loads(RUNS[0].read_text().splitlines()[0])
    run["run_id"] = hostile
    run["answer"][0]["text"] = ("<script>alert(3)</script> [x](javascript:alert(4)) "
                                + run["answer"][0]["text"])
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(run) + "\n")
    judged = tmp_path / "judged"
    assert nuggetizer("assign", "--nuggets", key, "--run", path, "--no-cache", "--assessor",
                      "mock", "-o", judged).returncode == 0
    out = tmp_path / "report"
    made = nuggetizer("report", judged, "--nuggets", key, "-o", out)
    assert made.returncode == 0, made.stderr
    pages = [out / "index.html", *(out / "runs").glob("*.html"), *(out / "topics").glob("*.html")]
    assert len(pages) >= 3
    for page in [*pages, out / "leaderboard.md"]:
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text, page
        assert 'href="javascript:' not in text and "href='javascript:" not in text, page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "leaderboard.md").read_text()
    assert r"\_\&\%" in (out / "leaderboard.tex").read_text()
    # the drill-down pages as their renderer draws them from their data: text, never markup
    with playwright_page() as page:
        dialogs: list[str] = []
        texts = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        for path in pages[1:]:
            drawn(page, path)
            found = page.evaluate("""() => ({
              images: document.querySelectorAll('img').length,
              links: document.querySelectorAll('a[href^="javascript:"]').length,
              scripts: Array.from(document.scripts).filter(s => !s.src && !s.text
                .startsWith('window.PAGE=')).length,
              text: document.body.innerText})""")
            assert found["images"] == found["links"] == found["scripts"] == 0, path
            assert hostile in found["text"], path
            texts.append(found["text"])
        assert not dialogs
        answer = "<script>alert(3)</script> [x](javascript:alert(4))"
        assert answer in texts[0]  # the run's page, every judgment open
        assert sum(answer in text for text in texts[1:]) == 1  # the topic's page
