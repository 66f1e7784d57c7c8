"""The static HTML report on the real runs, rendered in headless Chromium."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from browser import colours, screenshot
from click.testing import CliRunner
from matplotlib.colors import ListedColormap
from shared_data import RAG24

from nuggetizer.cli import cli
from nuggetizer.formats import (
    assessment_record,
    read_assessments,
    read_nuggets,
    read_runs,
    write_jsonl_atomic,
)
from nuggetizer.interface import ReportPart, make_method
from nuggetizer.measures import answer_length
from nuggetizer.methods.nuggets import unsupported_nuggets
from nuggetizer.report import (
    IndexColours,
    distributions_png,
    draw_all,
    figure_worker,
    heatmap_png,
    length_png,
    write_report,
)
from nuggetizer.report import figures as report_figures
from nuggetizer.scoring import ScoreTable, score_paths
from nuggetizer.types import AssessedNugget, Assessment

RUNS = sorted((RAG24 / "runs").glob("*.jsonl"))
QIDS = ["2024-105741", "2024-109837", "2024-111331", "2024-121840", "2024-126056"]


def lexical_label(nugget: str, answer: str) -> str:
    """A crude but real assessor: the share of the nugget's longer words found in the answer."""
    words = [w for w in re.findall(r"[a-z0-9]+", nugget.lower()) if len(w) > 3]
    if not words:
        return "not_support"
    hits = sum(w in answer.lower() for w in words) / len(words)
    return "support" if hits >= 0.75 else "partial_support" if hits >= 0.5 else "not_support"


@pytest.fixture(scope="module")
def assessed(tmp_path_factory) -> Path:
    """Lexical assessments of the three real runs on five topics of the real nuggets."""
    keys = read_nuggets(RAG24 / "nuggets.mistral.jsonl", lenient=True)
    out = tmp_path_factory.mktemp("assessed")
    for run_id, answers in read_runs(RUNS).items():
        records = []
        for qid in QIDS:
            answer = answers[qid]
            nuggets = [AssessedNugget(text=n.text, importance=n.importance,
                                      assignment=lexical_label(n.text, answer.text))
                       for n in keys[qid].nuggets]
            records.append(assessment_record(Assessment(
                run_id=run_id, qid=qid, query=keys[qid].query, answer_text=answer.text,
                length=answer_length([s.text for s in answer.sentences]), nuggets=nuggets)))
        write_jsonl_atomic(out / f"{run_id}.jsonl", records)
    return out


def test_report_files_and_content(assessed, tmp_path):
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(assessed), "-o", str(out), "--title",
                                      "RAG24 <baselines>"])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "RAG24 &lt;baselines&gt;" in page
    assert "<script src" not in page and "http" not in page.split("<h2 id='provenance'")[0]
    for run in RUNS:
        assert run.stem in page
    for name in ("distributions.png", "heatmap.png", "length.png"):
        assert f"src='{name}'" in page
        image = matplotlib.image.imread(out / name)
        assert image.shape[0] > 200 and image[..., :3].std() > 0.05  # drawn, not blank
    items = [a for p in sorted(assessed.glob("*.jsonl")) for a in read_assessments(p)]
    gaps = unsupported_nuggets(items)
    for qid in QIDS:  # checked against the labels directly
        texts = {n.text for a in items if a.qid == qid for n in a.nuggets}
        hit = {n.text for a in items if a.qid == qid for n in a.nuggets
               if n.assignment in ("support", "partial_support")}
        assert {t for _, t in gaps.get(qid, [])} == texts - hit
    assert f"Nuggets no run supported ({sum(len(v) for v in gaps.values())} in" in page


def test_report_renders_in_headless_chromium(assessed, tmp_path):
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(assessed), "-o", str(out)])
    assert result.exit_code == 0, result.output
    image = screenshot(out / "index.html", tmp_path)
    assert image.shape[:2] == (900, 1200)
    assert colours(image) > 50  # text, table borders and the figures, not one flat colour
    pixels = (image[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    background = np.mean(np.all(pixels == pixels[0], axis=1))
    assert background < 0.95


FORKED = """
import sys
from pathlib import Path
from nuggetizer.scoring.engine import score_paths
from nuggetizer.interface.registry import make_method
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.report import figure_worker
from nuggetizer.report import figures as report_figures
from nuggetizer.report.figures import draw_all, distributions_png, heatmap_png, length_png
figure_worker.cpus = lambda: 2
assert figure_worker.can_fork(), "this fresh process runs one thread and can fork"
table = score_paths(make_method("nuggets"), sorted(Path(sys.argv[1]).glob("*.jsonl")))
ranks = {run: k for k, run in enumerate(table.ranking(), 1)}
out = Path(sys.argv[2])
draw_all([(distributions_png, "V_strict", out / "distributions.png"),
          (heatmap_png, "V_strict", out / "heatmap.png"),
          (length_png, "V_strict", out / "length.png")], table, ranks)
"""


def test_figures_drawn_in_a_child_are_the_bytes_drawn_here(assessed, tmp_path, monkeypatch):
    """The heat map drawn in a forked child (two CPUs or more; in a fresh process, which runs
    no other thread) is byte for byte the one a single process draws; so are the figures
    drawn beside it."""
    done = subprocess.run([sys.executable, "-c", FORKED, str(assessed), str(tmp_path / "forked")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = score_paths(make_method("nuggets"), sorted(assessed.glob("*.jsonl")))
    ranks = {run: k for k, run in enumerate(table.ranking(), 1)}
    jobs = [(distributions_png, "V_strict", "distributions.png"),
            (heatmap_png, "V_strict", "heatmap.png"), (length_png, "V_strict", "length.png")]
    monkeypatch.setattr(figure_worker, "cpus", lambda: 1)
    draw_all([(d, m, tmp_path / "serial" / n) for d, m, n in jobs], table, ranks)
    for _, _, name in jobs:
        forked = (tmp_path / "forked" / name).read_bytes()
        assert forked[:8] == b"\x89PNG\r\n\x1a\n" and len(forked) > 1000
        assert forked == (tmp_path / "serial" / name).read_bytes()


def test_index_colours_give_the_bytes_the_colour_map_gives() -> None:
    """The heat map's fast lookup of colour indices equals matplotlib's own, masked and
    out-of-range values (which go to matplotlib) included."""
    rng = np.random.default_rng(7)
    colours = rng.random((37, 4))
    index = rng.integers(0, 37, size=(60, 40)).astype(np.uint16)
    fast, plain = IndexColours(colours), ListedColormap(colours)
    assert np.array_equal(fast(index, bytes=True), plain(index, bytes=True))
    masked = np.ma.masked_array(index, index == 3)
    assert np.array_equal(fast(masked, bytes=True), plain(masked, bytes=True))
    assert np.array_equal(fast(index + 40, bytes=True), plain(index + 40, bytes=True))
    assert np.array_equal(fast(index / 36.0), plain(index / 36.0))


def test_summary_names_what_stayed_unjudged(assessed, tmp_path):
    """The nuggets method's page counts unjudged nuggets (its part's `items`), as before the
    methods declared their report parts; a part that names nothing counts unjudged items."""
    path = sorted(assessed.glob("*.jsonl"))[0]
    records = [assessment_record(a) for a in read_assessments(path)]
    records[0]["nuggets"][0]["assignment"] = "unjudged"
    records[1]["nuggets"][0]["assignment"] = "unjudged"
    write_jsonl_atomic(tmp_path / "in" / path.name, records)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "in"), "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "2 unjudged nuggets (left out of the scores)" in page
    table = score_paths(make_method("nuggets"), [tmp_path / "in" / path.name])
    write_report(table, ReportPart(), tmp_path / "plain")
    plain = (tmp_path / "plain" / "index.html").read_text(encoding="utf-8")
    assert "2 unjudged items (left out of the scores)" in plain
    assert "0 unanswered topics (scored 0)." in plain
    table.missing = {next(iter(table.means)): 1}
    write_report(table, ReportPart(), tmp_path / "one")
    one = (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    assert "1 unanswered topic (scored 0)." in one


@pytest.mark.parametrize(("runs", "topics"), [(3, 5), (1, 40), (20, 50), (83, 119), (12, 301)])
def test_heat_map_in_bands_is_the_bytes_of_one_image(runs, topics, tmp_path, monkeypatch):
    """The heat map drawn in bands of rows (matplotlib resamples a band at a time) is byte for
    byte the PNG of one `imshow` of the whole grid of values, missing cells included."""
    rng = np.random.default_rng(runs * 1000 + topics)
    names = [f"topic-{int(rng.integers(10 ** int(rng.integers(1, 6))))}-{k}"
             for k in range(topics)]
    table = ScoreTable(("V_strict",), "V_strict", names)
    for r in range(runs):
        run = f"run{r:03d}" + "x" * int(rng.integers(0, 30))
        values = rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0, float("nan"), 0.7321], size=topics)
        table.per_topic[run] = {q: {"V_strict": float(v)} for q, v in zip(names, values)
                                if rng.random() < 0.97}
        table.means[run] = {"V_strict": float(rng.random())}
    heatmap_png(table, "V_strict", tmp_path / "bands.png")

    def one_image(ax, scale, grid):
        ax.imshow(grid, aspect="auto", cmap=scale.cmap, norm=scale.norm,
                  interpolation="nearest")

    monkeypatch.setattr(report_figures, "_draw_cells", one_image)
    heatmap_png(table, "V_strict", tmp_path / "one.png")
    assert (tmp_path / "bands.png").read_bytes() == (tmp_path / "one.png").read_bytes()
