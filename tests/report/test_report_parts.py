"""A method's part of `nuggetizer report` (interface/report_part.py): the battles method's
figures, measures drawn and first line come from its part, through the one report path every
method takes, so its page records how the battles were judged as any method's does."""

from __future__ import annotations

import re
from pathlib import Path

import scripted
from browser import drawn, drawn_dom, playwright_page
from click.testing import CliRunner
from test_battles import baselines, battles_args

from nuggetizer.cli import cli
from nuggetizer.interface import make_method, method_holding
from nuggetizer.methods.battles import BattlesPart
from nuggetizer.report.drill import file_names
from nuggetizer.templates import load_prompt


def judged(tmp_path: Path) -> Path:
    paths = baselines(tmp_path, topics=3)
    scripted.SCRIPTS["report-part"] = lambda request: '{"verdict": "B"}'
    out = tmp_path / "battles"
    made = CliRunner().invoke(cli, battles_args(paths, out, "--no-cache", "--assessor",
                                                "scripted:report-part"))
    assert made.exit_code == 0, made.output
    return out


def page(report: Path) -> str:
    """index.html without the dates it was made and written on."""
    text = (report / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "DATE", text)


def test_a_battles_folder_is_reported_through_its_part_with_its_provenance(
        tmp_path: Path) -> None:
    out = judged(tmp_path)
    assert method_holding([out]) == "battles"
    assert method_holding([out, tmp_path]) is None  # not every input is battles
    assert isinstance(make_method("battles").report_part(None), BattlesPart)
    found = CliRunner().invoke(cli, ["report", str(out), "-o", str(tmp_path / "found")])
    named = CliRunner().invoke(cli, ["report", str(out), "--method", "battles",
                                     "-o", str(tmp_path / "named")])
    assert found.exit_code == 0 and named.exit_code == 0, found.output + named.output
    text = page(tmp_path / "found")
    assert text == page(tmp_path / "named")
    # the part's first line, plots and measure drawn
    assert "3 runs, 3 topics, 9 battles with a result" in text
    for plot in BattlesPart.plots:
        assert f"src='{plot.name}'" in text and plot.caption in text
        assert (tmp_path / "found" / plot.name).read_bytes().startswith(b"\x89PNG")
    assert "win_rate: run x topic" in text
    # how the battles were judged, read from their files as for any method
    assert "scripted:report-part" in text
    assert load_prompt("battle_judge").sha256 in text
    assert "battles --method battles" in text  # the usage of the step
    assert "carry no provenance block" not in text


def test_a_topics_page_holds_its_battles_and_each_runs_page_its_own(tmp_path: Path) -> None:
    import html
    import json

    out = judged(tmp_path)
    report = tmp_path / "report"
    done = CliRunner().invoke(cli, ["report", str(out), "-o", str(report)])
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in (out / "battles.jsonl").read_text().splitlines()]
    assert records
    pages = file_names(sorted({run for r in records for run in (r["run_a"], r["run_b"])}))
    said = {"a": ("won", "lost"), "b": ("lost", "won"), "tie": ("tie", "tie")}
    with playwright_page() as browser:  # the pages as their renderer draws them
        shown_pages = {path: drawn(browser, path) for path in
                       [*(report / "topics").glob("*.html"), *(report / "runs").glob("*.html")]}
    for r in records:
        topic = shown_pages[report / "topics" / f"{r['qid']}.html"]
        mine, theirs = said.get(r["result"], ("unjudged", "unjudged"))
        for run, other, result in ((r["run_a"], r["run_b"], mine),
                                   (r["run_b"], r["run_a"], theirs)):
            line = f"Battle against {html.escape(other, quote=False)}: <b>{result}</b>"
            assert line in topic
            run_page = shown_pages[report / "runs" / pages[run]]
            assert line in run_page
            # each order's verdict as the judge gave it (the scripted judge says B)
            assert f"{html.escape(r['run_a'], quote=False)} shown first: B" in run_page
    # --runs: the run shown has its battles on its page (a battle's id is its pair's)
    shown = records[0]["run_a"]
    only = tmp_path / "only"
    done = CliRunner().invoke(cli, ["report", str(out), "-o", str(only), "--runs", shown])
    assert done.exit_code == 0, done.output
    text = drawn_dom(only / "runs" / pages[shown])
    assert all("Battle against " + html.escape(r["run_b"] if r["run_a"] == shown
                                               else r["run_a"], quote=False)
               in text for r in records if shown in (r["run_a"], r["run_b"]))
