"""The report an organizer publishes: how the results were made (assessor, model, prompt
hashes, dates, tokens), each topic's query text and every run's full name, rendered in headless
Chromium; a `--runs` subset; the heat map's geometry at track scale (150 runs x 300 topics)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import matplotlib.image
import pytest
from browser import colours, rendered_dom, shoot
from click.testing import CliRunner
from emulated import load_module
from scripted import SCRIPTS, by_prompt
from test_report_board import bootstrap, table_rows

from nuggetizer.cli import cli
from nuggetizer.formats import read_topics
from nuggetizer.report import DPI, LABEL_PT, heatmap_geometry

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
MODEL = "publish-model"
RUN_IDS = ["sample-good", "sample-middling", "sample-poor"]


def answer(prompt: str) -> str:
    """Two nuggets for every topic, labelled vital and okay; the first supported."""
    if "Updated Nugget List:" in prompt:
        return '["the answer names the cause", "the answer gives an example"]'
    found = re.search(r"label each of the (\d+) nuggets", prompt)
    n = int(found.group(1)) if found else 2
    if "vital or okay" in prompt:
        return json.dumps(["vital", "okay"][:n] + ["okay"] * (n - 2))
    return json.dumps(["support"] + ["not_support"] * (n - 1))


SCRIPTS[MODEL] = by_prompt(answer)


def invoke(*args: str | Path) -> object:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def text_of(page: str) -> str:
    """The visible text of an HTML page, tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample track evaluated by the scripted backend (keys, assessments, scores, usage)."""
    out = tmp_path_factory.mktemp("publish") / "sample"
    done = invoke("evaluate", "--track", "sample", "-o", out, "--assessor", f"scripted:{MODEL}",
                  "--no-cache", "--price-in", "2.5", "--price-out", "10")
    assert done.exit_code == 0, done.output
    return out


def templates(evaluated: Path) -> dict[str, str]:
    first = json.loads((evaluated / "nuggets.jsonl").read_text().splitlines()[0])
    return first["provenance"]["templates"]


def usage_total(evaluated: Path, field: str) -> int:
    files = [evaluated / "nuggets.jsonl.usage.json", evaluated / "assessments" / "usage.json"]
    return sum(json.loads(p.read_text())["usage"][field] for p in files)


def test_the_report_renders_in_headless_chromium_with_model_and_query_texts(
        evaluated: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", evaluated / "assessments", "-o", out)
    assert done.exit_code == 0, done.output
    text = text_of(rendered_dom(out / "index.html", tmp_path))
    assert MODEL in text and f"scripted:{MODEL}" in text
    hashes = templates(evaluated)
    assert set(hashes) == {"nuggets_create", "nuggets_importance", "nuggets_assign"}
    for name, digest in hashes.items():
        assert re.search(rf"{name} {digest}", text), name
    for topic in read_topics(SAMPLE / "topics.tsv").values():
        assert topic.text in text, topic.text
    for run_id in RUN_IDS:
        assert run_id in text
    assert "..." not in text
    created = json.loads((evaluated / "nuggets.jsonl").read_text().splitlines()[0])
    assert created["provenance"]["created"] in text  # when the key and assessments were made
    assert "Report written" in text
    total = usage_total(evaluated, "prompt_tokens")
    completion = usage_total(evaluated, "completion_tokens")
    cost = (total * 2.5 + completion * 10) / 1e6  # the prices the evaluation was given
    assert total > 0 and re.search(rf"total {usage_total(evaluated, 'calls')} 0 {total} "
                                   rf"{completion} 0 0 {cost:.4f}", text)
    assert "answer key found beside the assessments" in text


def test_a_per_topic_table_reports_what_its_sidecar_records(evaluated: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", evaluated / "per_topic.tsv", "-o", out)
    assert done.exit_code == 0, done.output
    text = text_of((out / "index.html").read_text(encoding="utf-8"))
    assert f"scripted:{MODEL}" in text and "answer key" in text and "assessments" in text
    assert all(digest in text for digest in templates(evaluated).values())
    for topic in read_topics(SAMPLE / "topics.tsv").values():
        assert topic.text in text
    assert f"total {usage_total(evaluated, 'calls')} " in text


def test_what_no_file_records_is_said_not_recorded(evaluated: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for path in (evaluated / "assessments").glob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        (bare / path.name).write_text("".join(
            json.dumps({k: v for k, v in r.items() if k != "provenance"}) + "\n"
            for r in records))
    done = invoke("report", bare, "-o", tmp_path / "report")
    assert done.exit_code == 0, done.output
    text = text_of((tmp_path / "report" / "index.html").read_text(encoding="utf-8"))
    assert MODEL not in text
    assert "Assessor and model: not recorded" in text and "Token usage not recorded" in text
    assert "How do volcanoes form?" in text  # the assessments' own query texts
    table = tmp_path / "per_topic.tsv"  # a table without its sidecar: no query texts known
    shutil.copy(evaluated / "per_topic.tsv", table)
    alone = invoke("report", table, "-o", tmp_path / "alone")
    assert alone.exit_code == 0, alone.output
    text = text_of((tmp_path / "alone" / "index.html").read_text(encoding="utf-8"))
    assert "sample-1 not recorded" in text and "no readable per_topic.tsv.provenance.json" in text
    given = invoke("report", table, "-o", tmp_path / "given", "--topics", SAMPLE / "topics.tsv")
    assert given.exit_code == 0, given.output
    page = (tmp_path / "given" / "index.html").read_text(encoding="utf-8")
    assert "sample-2 How do volcanoes form?" in text_of(page)


def test_runs_shows_a_subset_with_ranks_among_all(evaluated: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", evaluated / "assessments", "-o", out, "--runs",
                  "sample-poor,sample-good")
    assert done.exit_code == 0, done.output
    text = text_of((out / "index.html").read_text(encoding="utf-8"))
    assert "sample-middling" not in text.split("inputs:")[0]  # the inputs list names files
    board = (evaluated / "leaderboard.tsv").read_text().splitlines()[1:]
    ranks = {line.split("\t")[0]: k for k, line in enumerate(board, 1)}
    for run_id in ("sample-good", "sample-poor"):
        assert re.search(rf"{ranks[run_id]} {run_id} ([a-z]+ )?\d", text)  # group letters
    assert "Shown: 2 of the 3 runs; ranks are among all 3." in text
    listed = tmp_path / "runs.txt"
    listed.write_text("# the finalists\nsample-middling\n")
    only = invoke("report", evaluated / "assessments", "-o", tmp_path / "one", "--runs-file",
                  listed)
    assert only.exit_code == 0, only.output
    page = text_of((tmp_path / "one" / "index.html").read_text(encoding="utf-8"))
    assert "sample-good" not in page.split("inputs:")[0] and "Shown: 1 of the 3" in page


def test_an_unknown_run_is_an_error_naming_it_and_writes_nothing(evaluated: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", evaluated / "assessments", "-o", out, "--runs",
                  "sample-good,sample-goood,nobody")
    assert done.exit_code == 2
    message = " ".join(done.output.split())
    assert "unknown run ids: 'sample-goood' (did you mean 'sample-good'" in message
    assert "'nobody'. The scores hold: sample-good, sample-middling, sample-poor" in message
    assert "--runs" in message and "run_id column" in message
    assert not out.exists()


def test_heatmap_geometry_keeps_labels_readable_at_track_scale() -> None:
    geometry = heatmap_geometry(150, 300, label_chars=11)
    assert geometry.label_pt >= 7 and geometry.label_pt == LABEL_PT
    # labels thinned so that two never overlap: a labelled cell every step holds one
    assert geometry.column_step * geometry.column_in * 72 >= 1.2 * geometry.label_pt
    assert geometry.row_step * geometry.row_in * 72 >= 1.2 * geometry.label_pt
    assert geometry.column_step > 1 and geometry.row_step > 1
    width, height = geometry.pixels
    assert width >= 150 * geometry.column_in * DPI and height >= 300 * geometry.row_in * DPI
    assert max(width, height) < 2000  # the whole map on a screen or two, not 4000 px of it
    small = heatmap_geometry(3, 12)
    assert small.column_step == small.row_step == 1  # at 3 runs every label is written
    assert small.cell_in * 72 >= 1.2 * small.label_pt


@pytest.mark.slow
def test_a_track_size_report_reads_in_chromium(tmp_path: Path) -> None:
    """150 runs x 300 topics x 20 nuggets (the scale benchmark's synthetic assessments, long
    run names), rendered in headless Chromium: every run named in full, the heat map shown
    unscaled at its geometry, the intervals those of a bootstrap computed apart, the groups
    said; screenshots of the leaderboard, the figures and a run's page kept and printed."""
    bench = load_module(REPO / "benchmarks" / "bench_score.py")
    name = "team{:03d}-bm25-monot5-rerank-gpt4o-listwise-citations-long-run-name"
    bench.synthesize(tmp_path, 150, 300, 20, 0, name=name)
    out = tmp_path / "report"
    done = invoke("report", tmp_path / "assessments", "-o", out)
    assert done.exit_code == 0, done.output
    page = (out / "index.html").read_text(encoding="utf-8")
    for r in range(150):
        assert name.format(r) in page
    assert "..." not in text_of(page).split("inputs:")[0]
    topics = list(json.loads(line)["qid"] for line in (tmp_path / "nuggets.jsonl")
                  .read_text().splitlines())
    geometry = heatmap_geometry(150, 300, label_chars=max(map(len, topics)))
    image = matplotlib.image.imread(out / "heatmap.png")
    assert abs(image.shape[1] - geometry.pixels[0]) <= 2
    assert abs(image.shape[0] - geometry.pixels[1]) <= 2
    assert "<div class='scroll'><img src='heatmap.png'" in page  # shown 1:1, never shrunk
    # the intervals of the first, a middle and the last run, computed apart from the files
    rows = table_rows(page)
    for row in (rows[1], rows[75], rows[150]):
        values: dict[str, float] = {}
        for line in (tmp_path / "assessments" / f"{row[1]}.jsonl").read_text().splitlines():
            record = json.loads(line)
            vital = [n for n in record["nuggets"] if n["importance"] == "vital"]
            values[record["qid"]] = sum(n["assignment"] == "support" for n in vital) / \
                len(vital) if vital else 0.0
        low, high = bootstrap(values, topics)
        assert row[4] == f"[{low:.4f}, {high:.4f}]", row[1]
    # 11175 pairs: 10000 sign flips cannot go below Holm's threshold, and the page says so
    words = text_of(page.split("<div class='groups'>", 1)[1].split("</div>", 1)[0])
    assert "runs ranked 1-150 cannot be told apart" in words
    assert "With 11175 pairs no pair can be told apart" in words and "223500 flips" in words
    shots = tmp_path / "screenshots"
    shots.mkdir()
    assert colours(shoot(out / "index.html", shots / "leaderboard.png", tmp_path)) > 50
    for figure in ("heatmap", "distributions", "length"):
        assert colours(shoot(out / f"{figure}.png", shots / f"{figure}.png", tmp_path)) > 20
    run_page = out / "runs" / f"{name.format(0)}.html"
    assert colours(shoot(run_page, shots / "run.png", tmp_path)) > 20
