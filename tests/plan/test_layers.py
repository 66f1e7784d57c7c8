"""One evaluation, all layers: a track naming several methods is evaluated with one assessor,
each method into its own folder, and every measure side by side in one leaderboard; the HTML
report and `agreement` read the combined per-topic TSV."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import scripted
from browser import colours, screenshot
from click.testing import CliRunner
from scipy import stats

from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.plan import load_track

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
LAYERS = SAMPLE / "layers.toml"
RUNS = ["sample-good", "sample-middling", "sample-poor"]
NUGGETS = ("V_strict", "V", "W_strict", "W", "A_strict", "A", "L")
SUPPORT = ("support_recall", "support_precision")


def _layered(request) -> str:
    """Both methods' prompts: nuggets (create, importance, assign) and support labels."""
    text = request.messages[-1][1]
    digest = hashlib.sha256(text.encode()).digest()[0]
    if "corresponding citations" in text:
        return json.dumps({"label": ("Full Support", "Partial Support", "No Support")[digest % 3]})
    if "Updated Nugget List" in text:
        return '["violence at clinics", "Slepian was killed", "Kopp is sought"]'
    if "vital or okay" in text:
        return '["vital", "okay", "vital"]'
    labels = ("support", "not_support", "partial_support")
    return json.dumps([labels[(digest + k) % 3] for k in range(3)])


scripted.SCRIPTS["layered"] = _layered


def _board(path: Path) -> dict[str, dict[str, str]]:
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return {r[0]: dict(zip(rows[0][1:], r[1:])) for r in rows[1:]}


def _per_topic(path: Path) -> dict[tuple[str, str, str], str]:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    return {(r[0], r[1], r[2]): r[3] for r in rows}


def test_the_shipped_layers_config() -> None:
    track = load_track(str(LAYERS))
    assert track.method_list() == ["nuggets", "support"] and track.method == "nuggets"
    assert track.settings("support") == {"citations": "first"}
    assert track.settings() == track.settings("nuggets") and track.settings()["keep"] == 10


def test_track_methods_are_checked(tmp_path: Path) -> None:
    base = (f'name = "x"\ntopics = "{SAMPLE / "topics.tsv"}"\ncorpus = "{SAMPLE / "corpus.jsonl"}"'
            f'\nqrels = "{REPO / "qrels" / "sample.qrels"}"\n')
    for extra, message in (('method = "nuggets"\nmethods = ["nuggets", "support"]', "not both"),
                           ('methods = ["support", "support"]', "names a method twice"),
                           ('methods = ["nuggets", "bleu"]', "'bleu' is not known"),
                           ('methods = ["nuggets", "kpr"]\nkey = "k.jsonl"', "one method's")):
        path = tmp_path / "t.toml"
        path.write_text(base + extra + "\n")
        with pytest.raises(ConfigError, match=message):
            load_track(str(path))


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layers") / "eval"
    result = CliRunner().invoke(cli, ["evaluate", "--track", str(LAYERS), "-o", str(out),
                                      "--assessor", "scripted:layered", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "== nuggets + support (ranked by V_strict) ==" in result.output
    line = [x for x in result.output.splitlines() if x.startswith("evaluate:")][0]
    assert "11 answers (nuggets), 11 answers (support)" in line, line
    return out


def test_two_methods_in_one_evaluate(evaluated: Path) -> None:
    out = evaluated
    assert (out / "nuggets" / "nuggets.jsonl").is_file()
    assert len(list((out / "nuggets" / "assessments").glob("*.jsonl"))) == 3
    assert len(list((out / "support" / "support").glob("*.jsonl"))) == 3
    combined = _board(out / "leaderboard.tsv")
    header = (out / "leaderboard.tsv").read_text().splitlines()[0].split("\t")
    assert header == ["run_id", *NUGGETS, *SUPPORT]
    assert sorted(combined) == RUNS
    own = {**{m: _board(out / "nuggets" / "leaderboard.tsv") for m in NUGGETS},
           **{m: _board(out / "support" / "leaderboard.tsv") for m in SUPPORT}}
    for run in RUNS:
        for measure, board in own.items():
            assert combined[run][measure] == board[run][measure]
    ranked = list(combined)  # file order: by V_strict descending, then run id
    assert ranked == sorted(ranked, key=lambda r: (-float(combined[r]["V_strict"]), r))
    # the per-topic table holds every row of both methods' own, and nothing else
    merged = {**_per_topic(out / "nuggets" / "per_topic.tsv"),
              **_per_topic(out / "support" / "per_topic.tsv")}
    assert _per_topic(out / "per_topic.tsv") == merged
    assert (out / "leaderboard.tsv.provenance.json").is_file()


def test_one_assessor_for_both_methods(tmp_path: Path, monkeypatch) -> None:
    made = []
    original = scripted._make

    def counting(model: str, **options):
        backend = original(model, **options)
        made.append(backend)
        return backend

    from nuggetizer.assessors import register_backend

    register_backend("scripted", counting)
    try:
        result = CliRunner().invoke(cli, ["evaluate", "--track", str(LAYERS), "-o",
                                          str(tmp_path / "o"), "--assessor", "scripted:layered",
                                          "--no-cache"])
    finally:
        register_backend("scripted", original)
    assert result.exit_code == 0, result.output
    assert len(made) == 1 and made[0].closed
    prompts = [r.messages[-1][1] for r in made[0].requests]
    assert any("corresponding citations" in p for p in prompts)  # support's calls
    assert any("Updated Nugget List" in p for p in prompts)  # and the nuggets' on it too


# --- agreement between two measures --------------------------------------------------------

X = {"r1": 0.1, "r2": 0.2, "r3": 0.3, "r4": 0.4}
Y = {"r1": 0.2, "r2": 0.1, "r3": 0.4, "r4": 0.3}


def _combined_tsv(path: Path) -> Path:
    """A per-topic TSV by hand: X per topic x-0.05 and x+0.05, Y the same on both topics."""
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for run in X:
        for qid, shift in (("t1", -0.05), ("t2", 0.05)):
            lines += [f"{run}\t{qid}\tX\t{X[run] + shift:.4f}", f"{run}\t{qid}\tY\t{Y[run]:.4f}"]
        lines += [f"{run}\tall\tX\t{X[run]:.4f}", f"{run}\tall\tY\t{Y[run]:.4f}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(output: str) -> dict[str, list[str]]:
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in output.splitlines()
            if line.startswith("| ") and not line.startswith("| level")]
    return {r[0]: r[2:] for r in rows}


def test_agreement_of_two_measures_of_one_combined_table(tmp_path: Path) -> None:
    table = _combined_tsv(tmp_path / "per_topic.tsv")
    result = CliRunner().invoke(cli, ["agreement", str(table), "--measure-a", "X",
                                      "--measure-b", "Y", "-o", str(tmp_path / "a.tsv"),
                                      "--plot", str(tmp_path / "a.png")])
    assert result.exit_code == 0, result.output
    assert "Agreement on X vs Y over 4 runs and 2 topics" in result.output
    rows = _rows(result.output)
    # run level by hand: of the 6 pairs of runs, (r1, r2) and (r3, r4) are swapped: tau
    # (4 - 2) / 6; ranks 1 2 3 4 against 2 1 4 3: rho 1 - 6 * 4 / (4 * 15) = 0.6
    assert rows["run"] == ["4", "0.3333", "0.6000"]
    xs = [round(X[r] + s, 4) for s in (-0.05, 0.05) for r in X]  # as written: ties kept
    ys = [Y[r] for _ in (1, 2) for r in X]
    tau = stats.kendalltau(xs, ys, variant="b").statistic
    rho = stats.spearmanr(xs, ys).statistic
    assert rows["pairs"] == ["8", f"{tau:.4f}", f"{rho:.4f}"]
    assert rows["topic"][1] == "0.3333"  # each topic orders the runs as the means do
    assert (tmp_path / "a.png").stat().st_size > 1000
    # two inputs, a measure of each: the same table
    again = CliRunner().invoke(cli, ["agreement", str(table), str(table), "--measure-a", "X",
                                     "--measure-b", "Y"])
    assert again.exit_code == 0 and again.output == result.output
    # one input and one measure compares nothing
    alone = CliRunner().invoke(cli, ["agreement", str(table), "--measure", "X"])
    assert alone.exit_code == 2 and "two different measures" in alone.output


def test_agreement_of_nuggets_and_support_after_evaluate(evaluated: Path) -> None:
    result = CliRunner().invoke(cli, ["agreement", str(evaluated / "per_topic.tsv"),
                                      "--measure-a", "V_strict", "--measure-b",
                                      "support_recall"])
    assert result.exit_code == 0, result.output
    assert "Agreement on V_strict vs support_recall over 3 runs and 4 topics" in result.output
    # the same from each method's own table
    own = CliRunner().invoke(cli, ["agreement", str(evaluated / "nuggets" / "per_topic.tsv"),
                                   str(evaluated / "support" / "per_topic.tsv"),
                                   "--measure-a", "V_strict", "--measure-b", "support_recall"])
    assert own.exit_code == 0 and own.output == result.output


# --- the report of every measure ------------------------------------------------------------

def test_the_report_shows_every_measure_side_by_side(evaluated: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["report", str(evaluated / "per_topic.tsv"), "-o", str(out),
                                      "--title", "two <layers>"])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "two &lt;layers&gt;" in page and "<script src" not in page  # offline
    # the report's leaderboard is the combined one, cell for cell, each run with its rank
    rows = [line.split("\t") for line in (evaluated / "leaderboard.tsv").read_text().splitlines()]
    table = page.split("<table>", 1)[1].split("</table>", 1)[0]
    cells = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)]
             for r in re.findall(r"<tr>(.*?)</tr>", table)]
    head = cells[0]
    # rank, then the ranking measure and its interval (in view on a phone), then the run
    assert head[:4] == ["rank", "V_strict", "V_strict 95% CI", "run_id"]
    measures = rows[0][1:]  # every measure, in the board's order after the ranking one
    assert [h for h in head if h in measures] == measures
    for rank, row in enumerate(rows[1:], 1):
        shown = dict(zip(head, cells[rank]))
        assert shown["rank"] == str(rank)
        assert [shown[m] for m in rows[0]] == row
    for measure in ("V_strict", "support_recall"):  # each method's primary, drawn
        for kind in ("distributions", "heatmap"):
            name = f"{kind}_{measure}.png"
            assert f"src='{name}'" in page and (out / name).stat().st_size > 5000
    assert "src='length.png'" in page and "Nuggets no run supported" not in page
    # a measure it does not hold is named
    bad = CliRunner().invoke(cli, ["report", str(evaluated / "per_topic.tsv"), "-o", str(out),
                                   "--measure", "KPR"])
    assert bad.exit_code == 2 and "KPR not in" in bad.output
    image = screenshot(out / "index.html", tmp_path)
    assert image.shape[:2] == (900, 1200) and colours(image) > 50


# --- the shipped config on the embedded model -----------------------------------------------

@pytest.mark.slow
def test_the_layers_track_on_the_embedded_model(gguf_path: Path, tmp_path: Path) -> None:
    """SmolLM2-135M through `evaluate --assessor local` on tracks/sample/layers.toml: both
    methods' outputs and the combined tables are there, in range. Quality is not asserted."""
    out = tmp_path / "eval"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "evaluate", "--track", str(LAYERS), "-o", str(out),
         "--assessor", "local", "--cache", str(tmp_path / "cache.sqlite")],
        capture_output=True, text=True, timeout=1500, cwd=REPO,
        env={**os.environ, "NUGGETIZER_PROGRESS_INTERVAL": "0"})
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    line = [x for x in result.stderr.splitlines() if x.startswith("evaluate:")][0]
    print(f"layers track, embedded model: {line} ({elapsed:.1f} s wall)")
    assert "(nuggets)" in line and "(support)" in line
    header = (out / "leaderboard.tsv").read_text().splitlines()[0].split("\t")
    assert header == ["run_id", *NUGGETS, *SUPPORT]
    board = _board(out / "leaderboard.tsv")
    assert sorted(board) == RUNS
    for run, row in board.items():
        for measure, value in row.items():
            if measure != "L":
                assert 0.0 <= float(value) <= 1.0, (run, measure, value)
    for method, judged in (("nuggets", "assessments"), ("support", "support")):
        assert (out / method / "leaderboard.tsv").is_file()
        assert len(list((out / method / judged).glob("*.jsonl"))) == 3
