"""The report an organizer publishes: how the results were made (assessor, model, prompt
hashes, dates, tokens), each topic's query text and every run's full name, rendered in headless
Chromium; a `--runs` subset; the heat map's geometry at track scale (150 runs x 300 topics)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest
from browser import colours, drawn, playwright_page, rendered_dom
from click.testing import CliRunner
from emulated import load_module
from scripted import SCRIPTS, by_prompt
from test_report_board import bootstrap, table_rows

from nuggetizer.cli import cli
from nuggetizer.formats import read_topics
from nuggetizer.report import DPI, LABEL_PT, heatmap_geometry
from nuggetizer.report.figures import short_labels

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
        # rank, the score and its interval, the run, its group letters
        assert re.search(rf"{ranks[run_id]} \d\.\d{{4}} \[[\d., ]+\] {run_id} [a-z]+ \d", text)
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
    # 300 topics across, 150 runs down, a run's label "150 team149" (11 characters)
    geometry = heatmap_geometry(300, 150, label_chars=11)
    assert geometry.label_pt >= 7 and geometry.label_pt == LABEL_PT
    # labels thinned so that two never overlap: a labelled cell every step holds one
    assert geometry.column_step * geometry.column_in * 72 >= 1.2 * geometry.label_pt
    assert geometry.row_step * geometry.row_in * 72 >= 1.2 * geometry.label_pt
    assert geometry.row_step == 1 and geometry.column_step > 1  # every run named
    width, height = geometry.pixels
    assert width >= 300 * geometry.column_in * DPI and height >= 150 * geometry.row_in * DPI
    assert width <= 1180  # the page's width at 1280 px: shown whole, never in a scroll box
    small = heatmap_geometry(12, 3)
    assert small.column_step == small.row_step == 1  # at 3 runs every label is written
    assert small.cell_in * 72 >= 1.2 * small.label_pt


def test_short_labels_keep_what_tells_runs_apart() -> None:
    name = "team{:03d}-bm25-monot5-rerank-gpt4o-listwise-citations-long-run-name"
    assert short_labels([name.format(k) for k in (0, 1, 149)]) == {
        name.format(0): "team000", name.format(1): "team001", name.format(149): "team149"}
    assert short_labels(["bm25.v1", "bm25.v2", "dense.v1"]) == {
        "bm25.v1": "bm25.v1", "bm25.v2": "bm25.v2", "dense.v1": "dense.v1"}
    assert short_labels(["uwaterloo-rag-gpt4o-listwise-run-a", "uwaterloo-rag-llama-run-a"]) \
        == {"uwaterloo-rag-gpt4o-listwise-run-a": "gpt4o-listwise",
            "uwaterloo-rag-llama-run-a": "llama"}
    assert list(short_labels(["a-" + "x" * 30 + "-1", "a-" + "x" * 30 + "-2"]).values()) \
        == ["1", "2"]
    cut = short_labels(["run-" + "y" * 20 + "1", "run-" + "y" * 20 + "2"])
    assert list(cut.values()) == ["y" * 15 + "\u2026", "y" * 15 + "\u2026#2"]
    assert short_labels(["only-one"]) == {"only-one": "only-one"}


TRACK_NAME = "team{:03d}-bm25-monot5-rerank-gpt4o-listwise-citations-long-run-name"


@pytest.fixture(scope="module")
def track(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The scale benchmark's synthetic assessments (150 runs x 300 topics x 20 nuggets, long
    run names) and their report: (the folder of the inputs, the report's folder)."""
    folder = tmp_path_factory.mktemp("track")
    bench = load_module(REPO / "benchmarks" / "bench_score.py")
    bench.synthesize(folder, 150, 300, 20, 0, name=TRACK_NAME)
    out = folder / "report"
    done = invoke("report", folder / "assessments", "-o", out)
    assert done.exit_code == 0, done.output
    return folder, out


@pytest.mark.slow
def test_a_track_size_report_is_light_and_its_groups_tell_runs_apart(
        track: tuple[Path, Path]) -> None:
    """150 runs x 300 topics: the main page under 1 MiB, the whole folder under 40 MiB (the
    sizes are deterministic; the times are the benchmark's); every run named in full; the
    intervals those of a bootstrap computed apart; the groups those of Tukey HSD."""
    folder, out = track
    files = [p for p in out.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(f"150 x 300: {size / 2**20:.1f} MiB in {len(files)} files; index.html "
          f"{(out / 'index.html').stat().st_size / 2**20:.2f} MiB")
    assert (out / "index.html").stat().st_size < 2**20
    assert size < 40 * 2**20
    page = (out / "index.html").read_text(encoding="utf-8")
    for r in range(150):
        assert TRACK_NAME.format(r) in page
    assert "..." not in text_of(page).split("inputs:")[0]
    topics = list(json.loads(line)["qid"] for line in (folder / "nuggets.jsonl")
                  .read_text().splitlines())
    image = matplotlib.image.imread(out / "heatmap.png")
    assert image.shape[1] <= 1180  # whole within the page at 1280 px
    # the length figure labels its 150 points by rank; hovering one gives the run's full
    # name, at the point's very pixels
    length = matplotlib.image.imread(out / "length.png")
    areas = re.findall(r"<area shape='circle' coords='(\d+),(\d+),5' title='(\d+)\. ([^']+)'",
                       page)
    assert sorted(name for _, _, _, name in areas) == [TRACK_NAME.format(r) for r in range(150)]
    for x, y, _, _ in areas:
        window = length[int(y) - 3:int(y) + 4, int(x) - 3:int(x) + 4, :3]
        assert ((window[..., 2] > 0.5) & (window[..., 0] < 0.5)).any(), (x, y)
    rows = table_rows(page)
    assert rows[0][:4] == ["rank", "V_strict", "V_strict 95% CI", "run_id"]
    for row in (rows[1], rows[75], rows[150]):
        values: dict[str, float] = {}
        for line in (folder / "assessments" / f"{row[3]}.jsonl").read_text().splitlines():
            record = json.loads(line)
            vital = [n for n in record["nuggets"] if n["importance"] == "vital"]
            values[record["qid"]] = sum(n["assignment"] == "support" for n in vital) / \
                len(vital) if vital else 0.0
        low, high = bootstrap(values, topics)
        assert row[2] == f"[{low:.4f}, {high:.4f}]", row[3]
    words = text_of(page.split("<div class='groups'>", 1)[1].split("</div>", 1)[0])
    assert "randomised Tukey HSD over 300 topics, B = 10,000 permutations" in words
    told = re.search(r"([\d,]+) of 11,175 pairs told apart", words)
    assert told is not None
    letters = [row[4] for row in rows[1:]]
    assert all(letters)  # every run has its group letters
    unstable = re.search(r"([\d,]+) of the 11,175 decisions lie within", words)
    assert unstable is not None


def visible_scores(page: Any) -> dict[str, Any]:
    """Where the leaderboard's first rows put the ranking measure and its interval, and
    whether the page scrolls sideways."""
    return page.evaluate("""() => {
      const table = document.querySelector('.wide table');
      const rows = Array.from(table.tBodies[0].rows).slice(0, 5);
      const right = Math.max(...rows.flatMap(r => [1, 2].map(
        i => r.cells[i].getBoundingClientRect().right)));
      const text = rows.map(r => r.cells[1].textContent + ' ' + r.cells[2].textContent);
      return {right: right, text: text, page: document.documentElement.scrollWidth,
              view: document.documentElement.clientWidth};
    }""")


@pytest.mark.slow
def test_a_track_size_report_reads_in_chromium_at_1280_and_400_px(
        track: tuple[Path, Path], tmp_path: Path) -> None:
    """The main page, a topic page and a run page at 150 x 300, screenshots at 1280 and 400
    px kept (their paths printed): at 1280 no figure in a scroll box and no page wider than
    the window; at 400 the leaderboard's scores in view without scrolling sideways (checked
    from the DOM); the topic page with its key and answers, the run page with its verdicts."""
    _, out = track
    shots = tmp_path / "screenshots"
    shots.mkdir()
    topic_page = next(iter(sorted((out / "topics").glob("*.html"))))
    run_page = out / "runs" / f"{TRACK_NAME.format(0)}.html"
    with playwright_page(1280, 900) as page:
        dom = drawn(page, out / "index.html", open_all=False)
        images = page.evaluate("""() => Array.from(document.images).map(
          i => [i.naturalWidth, i.getBoundingClientRect().width])""")
        assert images and all(natural <= shown + 1 for natural, shown in images)
        assert "class='scroll'" not in dom and "class=\"scroll\"" not in dom
        wide = page.evaluate("""() => Array.from(document.querySelectorAll('.wide')).map(
          w => [w.scrollWidth, w.clientWidth])""")
        assert all(inner <= outer for inner, outer in wide)  # the leaderboard fits as it is
        layout = visible_scores(page)
        assert layout["page"] <= layout["view"]
        page.screenshot(path=str(shots / "main-1280.png"))
        text = drawn(page, topic_page)
        assert "The answer key (20 nuggets)" in text and "The answers, best first" in text
        assert re.search(r"class=\"(support|partial_support|not_support)\"", text)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.screenshot(path=str(shots / "topic-1280.png"))
        page.goto(run_page.resolve().as_uri() + "#t0")
        page.wait_for_selector("#t0 .judgment")
        assert page.locator("#t0 .nuggets li").count() == 20
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.screenshot(path=str(shots / "run-1280.png"))
    with playwright_page(400, 800) as page:
        drawn(page, out / "index.html", open_all=False)
        page.locator("#leaderboard").scroll_into_view_if_needed()
        layout = visible_scores(page)
        assert layout["page"] <= layout["view"] == 400, layout  # nothing scrolls sideways
        assert layout["right"] <= 400, layout  # the scores and intervals in view
        assert all(re.fullmatch(r"0\.\d{4} \[0\.\d{4}, 0\.\d{4}\]", t) for t in layout["text"])
        page.evaluate("document.querySelector('#leaderboard').scrollIntoView()")
        page.screenshot(path=str(shots / "main-400.png"))
        drawn(page, topic_page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        page.screenshot(path=str(shots / "topic-400.png"))
        page.goto(run_page.resolve().as_uri() + "#t0")
        page.wait_for_selector("#t0 .judgment")
        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        page.screenshot(path=str(shots / "run-400.png"))
    for shot in sorted(shots.glob("*.png")):
        print(f"screenshot: {shot}")
        assert colours(matplotlib.image.imread(shot)) > 20
