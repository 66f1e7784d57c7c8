"""The page an organizer publishes: the leaderboard first, with 95% intervals and the groups of
runs the paired test cannot tell apart, in words; a table of contents, sortable tables, the long
topic table after the figures; a page per run and per topic. The three TREC RAG 2024 baselines
assessed at the emulator, rendered in headless Chromium (screenshots kept under the test's
folder, their paths printed); the intervals and groups checked against an independent
computation on the same files (a plain bootstrap loop, and `nuggetizer significance`)."""

from __future__ import annotations

import csv
import html
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from browser import colours, drawn_dom, rendered_dom, shoot
from click.testing import CliRunner
from emulated import emulator, load_module, run_assign, small_track

from nuggetizer.cli import cli

TOPICS = 12


def invoke(*args: str | Path) -> object:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three baselines on TOPICS real topics, their nuggets assessed at the emulator."""
    tmp = tmp_path_factory.mktemp("baselines")
    track = small_track(tmp, runs=3, topics=TOPICS)
    with emulator(tmp, "--seed", "7") as server:
        run_assign(server.url, track, tmp / "assessments")
    return tmp / "assessments"


def table_rows(page: str) -> list[list[str]]:
    """The cells (text) of the page's first table, the head row first."""
    first = page.split("<table>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", first, re.S)
    return [[" ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).split())
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)] for r in rows]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile by linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def bootstrap(per_topic: dict[str, float], topics: list[str], rounds: int = 1000,
              seed: int = 0) -> tuple[float, float]:
    """The documented bootstrap, one resample at a time: topics (sorted by id) drawn with
    replacement, the run's mean over those it has a value for."""
    topics = sorted(topics)
    draws = np.random.default_rng(seed).integers(0, len(topics), size=(rounds, len(topics)))
    means = []
    for row in draws:
        kept = [per_topic[topics[k]] for k in row if topics[k] in per_topic]
        means.append(sum(kept) / len(kept))
    return percentile(means, 2.5), percentile(means, 97.5)


def independent_groups(pvalues: dict[frozenset[str], float], ranked: list[str]
                       ) -> list[tuple[int, int]]:
    """The longest stretches of consecutive ranks (1-based) without a pair at p < 0.05, by
    brute force over every stretch."""
    found = []
    for i in range(len(ranked)):
        for j in range(len(ranked) - 1, i, -1):
            inside = ranked[i:j + 1]
            if all(pvalues[frozenset((a, b))] >= 0.05 for a in inside for b in inside
                   if a < b):
                if not any(a <= i and j <= b for a, b in found):
                    found.append((i, j))
                break
    return [(a + 1, b + 1) for a, b in found]


def test_the_leaderboard_leads_with_intervals_and_groups_a_computation_apart_agrees(
        baselines: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", baselines, "-o", out)
    assert done.exit_code == 0, done.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.index("id='leaderboard'") < page.index("id='figure-0'") < \
        page.index("id='topics'") < page.index("id='provenance'")
    rows = table_rows(page)
    head = rows[0]
    # the score and its interval first (in view on a phone), then the run and its group
    assert head[:5] == ["rank", "V_strict", "V_strict 95% CI", "run_id", "group"]
    # the same files read apart: V_strict of each answer (the vital nuggets it supports),
    # then the plain computations
    values: dict[str, dict[str, float]] = {}
    for path in sorted(baselines.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            vital = [n for n in record["nuggets"] if n["importance"] == "vital"]
            assert all(n["assignment"] in ("support", "partial_support", "not_support")
                       for n in vital)  # nothing unjudged on these
            values.setdefault(record["run_id"], {})[record["qid"]] = \
                sum(n["assignment"] == "support" for n in vital) / len(vital)
    topics = list(dict.fromkeys(q for run in values.values() for q in run))
    assert len(topics) == TOPICS and len(values) == 3
    shown = {row[3]: row for row in rows[1:]}
    for run, scores in values.items():
        low, high = bootstrap(scores, topics)
        assert shown[run][2] == f"[{low:.4f}, {high:.4f}]", run
    sig = tmp_path / "sig.tsv"
    done = invoke("significance", baselines, "--measure", "V_strict", "-o", sig)
    assert done.exit_code == 0, done.output
    with sig.open() as lines:
        pvalues = {frozenset((r["run_a"], r["run_b"])): float(r["rand_p_adj"])
                   for r in csv.DictReader(lines, delimiter="\t")}
    ranked = [row[3] for row in rows[1:]]
    stretches = independent_groups(pvalues, ranked)
    words = html.unescape(page.split("<div class='groups'>", 1)[1].split("</div>", 1)[0])
    spans = [f"{a}-{b}" for a, b in stretches if b > a]
    if spans:
        assert "runs ranked " + (", ".join(spans[:-1]) + " and " + spans[-1]
                                 if len(spans) > 1 else spans[0]) + " cannot be told apart" \
            in words
    else:
        assert "every pair of runs is told apart" in words
    letters = {row[3]: row[4] for row in rows[1:]}
    for k, (a, b) in enumerate(stretches):
        for run in ranked[a - 1:b]:
            assert "abcdefghijklmnopqrstuvwxyz"[k] in letters[run]
    # the same table for a paper
    tex = (out / "leaderboard.tex").read_text()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert all(run.replace("_", "\\_") in tex for run in ranked)
    markdown = (out / "leaderboard.md").read_text()
    assert all(f"| {run} |" in markdown for run in ranked)


def test_the_page_and_its_drill_down_in_chromium(baselines: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = invoke("report", baselines, "-o", out, "--title", "RAG24 <baselines>")
    assert done.exit_code == 0, done.output
    shots = tmp_path / "screenshots"
    shots.mkdir()
    board = shoot(out / "index.html", shots / "leaderboard.png", tmp_path)
    assert colours(board) > 50
    for figure in ("distributions", "heatmap", "length"):  # each as the browser shows it
        assert colours(shoot(out / f"{figure}.png", shots / f"{figure}.png", tmp_path)) > 20
    dom = rendered_dom(out / "index.html", tmp_path)
    assert "RAG24 &lt;baselines&gt;" in dom and "Contents" in dom
    run = re.search(r"<a href=\"(runs/[^\"]+)\">", dom)
    assert run is not None
    run_page = out / html.unescape(run.group(1))
    drill = shoot(run_page, shots / "run.png", tmp_path)
    assert colours(drill) > 20
    text = drawn_dom(run_page)
    assert "class=\"answer\"" in text and re.search(r"class=\"(support|not_support|"
                                                    r"partial_support)\"", text)
    topic = re.search(r"<a href=\"(topics/[^\"]+)\">", dom)
    assert topic is not None
    topic_page = drawn_dom(out / html.unescape(topic.group(1)))
    assert topic_page.count("../runs/") >= 3  # every run, a click from its judgment
    assert "http://" not in text and "https://" not in text  # offline


def test_a_runs_page_shows_each_citations_support_verdict(tmp_path: Path) -> None:
    """Support judgments (mock assessor) of the sample runs: a run's page lists each sentence
    of its answer with the verdict of every passage it cites, as the judgment file holds."""
    repo = Path(__file__).resolve().parents[2]
    run = repo / "runs" / "sample" / "good.jsonl"
    judged = tmp_path / "judged"
    done = invoke("assign", "--method", "support", "--run", run, "--corpus",
                  repo / "tracks" / "sample" / "corpus.jsonl", "-o", judged, "--no-cache",
                  "--assessor", "mock")
    assert done.exit_code == 0, done.output
    out = tmp_path / "report"
    done = invoke("report", "--method", "support", judged, "-o", out)
    assert done.exit_code == 0, done.output
    record = json.loads((judged / "sample-good.jsonl").read_text().splitlines()[0])
    page = drawn_dom(out / "runs" / "sample-good.html")  # the renderer draws the judgments
    for sentence in record["sentences"]:
        assert html.escape(sentence["text"], quote=False) in page
        for pair in sentence["pairs"]:
            assert (f"<li class=\"{pair['label']}\">"
                    f"[{html.escape(str(pair['citation']), quote=False)}] "
                    f"{html.escape(pair['docid'], quote=False)}: "
                    f"{pair['label'].replace('_', ' ')}") in page


def test_intervals_are_the_same_whatever_the_order_of_the_key(tmp_path: Path) -> None:
    """The same judgments reported against the key sorted and the key shuffled: the same
    intervals and groups (the bootstrap draws the topics sorted by id). The means themselves
    are summed in the key's order, and may differ in their last bit."""
    bench = load_module(Path(__file__).resolve().parents[2] / "benchmarks" / "bench_score.py")
    key = bench.synthesize(tmp_path, 7, 40, 6, 3)
    lines = key.read_text().splitlines()
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(random.Random(1).sample(lines, len(lines))) + "\n")
    ordered = tmp_path / "sorted.jsonl"
    ordered.write_text("\n".join(sorted(lines, key=lambda line: json.loads(line)["qid"]))
                       + "\n")
    assert shuffled.read_text() != ordered.read_text()
    tables = []
    for name, path in (("shuffled", shuffled), ("sorted", ordered)):
        out = tmp_path / name
        done = invoke("report", tmp_path / "assessments", "--nuggets", path, "-o", out,
                      "--no-pages", "--trials", "500")
        assert done.exit_code == 0, done.output
        rows = table_rows((out / "index.html").read_text(encoding="utf-8"))
        assert rows[0][2] == "V_strict 95% CI" and rows[1][2].startswith("[")
        tables.append([(row[3], row[4], row[2]) for row in rows])
    assert tables[0] == tables[1]
