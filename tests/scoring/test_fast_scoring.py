"""The score engine's fast path (assessment lines read as label columns, scored on whole
columns) against the straightforward one (every line an Assessment, nugget by nugget), on the
scale benchmark's assessments (real queries, answers and nugget texts of TREC RAG 2024) with
lines of every other kind mixed in: the same tables, byte for byte."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from emulated import load_module

from nuggetizer.formats import LabelRow, iter_label_rows, label_rows, read_assessments, read_nuggets
from nuggetizer.interface import make_method
from nuggetizer.labels import CREDIT, STRICT_CREDIT
from nuggetizer.measures import label_scores
from nuggetizer.scoring import leaderboard_tsv, per_topic_tsv, read_judged, score_judged

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def assessments(tmp_path: Path) -> tuple[Path, Path]:
    """Six runs x 30 topics x 20 nuggets, then lines the fast path must hand on: unjudged
    labels, a `raw`, a re-worded nugget, an importance that differs from the key, castorini's
    `response_length`, labels in other spellings, a run with nothing judged."""
    sys.path.insert(0, str(BENCH))
    bench = load_module(BENCH / "bench_score.py")
    key = bench.synthesize(tmp_path, 6, 30, 20, 7)
    rng = random.Random(3)
    for path in sorted((tmp_path / "assessments").glob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        for record in rng.sample(lines, 12):
            nugget = rng.choice(record["nuggets"])
            change = rng.randrange(9)
            if change == 0:
                nugget["assignment"] = "unjudged"
                nugget["raw"] = "no list here"
            elif change == 1:
                nugget["assignment"] = "unjudged"
            elif change == 2:
                nugget["text"] += " (re-worded)"
            elif change == 3:
                nugget["importance"] = "okay" if nugget["importance"] == "vital" else "vital"
            elif change == 4:
                record["response_length"] = record.pop("length") + 5
            elif change == 5:
                nugget["assignment"] = "Partial Support"
            elif change == 6:
                record["stated_length"] = True  # a field of the model no file should set
            elif change == 7:
                nugget["text"] = " " + nugget["text"]  # read, then not the key's: noted
            else:
                for n in record["nuggets"]:
                    n["assignment"] = "unjudged"
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return tmp_path / "assessments", key


def tables(method_name: str, folder: Path, key: Path | None, scoring: bool) -> tuple[str, str]:
    method = make_method(method_name)
    keys = read_nuggets(key, lenient=True) if key else None
    table = score_judged(method, read_judged(method, [folder], True, scoring=scoring), keys,
                         True)
    assert table.notes or key is None
    return leaderboard_tsv(table), per_topic_tsv(table) + "\n".join(
        table.notes + table.warnings + [str(sorted(table.kinds.items())),
                                        str(sorted(table.left_out.items())),
                                        str(sorted(table.unjudged.items()))])


@pytest.fixture(params=["msgspec", "orjson"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way of reading label columns: msgspec's typed decoding, and orjson's objects
    checked column by column (where msgspec is not installed)."""
    if request.param == "orjson":
        monkeypatch.setattr(label_rows, "decode_line", None)
    else:
        assert label_rows.decode_line is not None  # msgspec is installed (setup.cfg)
    return request.param


def test_the_fast_path_scores_exactly_as_the_assessments_do(tmp_path: Path, decoder: str
                                                             ) -> None:
    folder, key = assessments(tmp_path)
    rows = [r for p in sorted(folder.glob("*.jsonl")) for _, r in iter_label_rows(p, lenient=True)]
    fast = sum(type(r) is LabelRow for r in rows)
    assert 100 < fast < len(rows) == 180  # both paths taken
    for with_key in (key, None):
        assert tables("nuggets", folder, with_key, True) == \
            tables("nuggets", folder, with_key, False)


def test_label_columns_read_as_the_assessment_of_the_same_line(tmp_path: Path, decoder: str
                                                               ) -> None:
    folder, _ = assessments(tmp_path)
    for path in sorted(folder.glob("*.jsonl")):
        read = read_assessments(path, lenient=True)
        rows = [r for _, r in iter_label_rows(path, lenient=True)]
        assert [r.assessment() if type(r) is LabelRow else r for r in rows] == read


def test_label_scores_equal_the_credits_summed_nugget_by_nugget() -> None:
    rng = random.Random(11)
    for _ in range(2000):
        n = rng.randrange(0, 25)
        imp = [rng.choice(("vital", "okay", "unjudged")) for _ in range(n)]
        lab = [rng.choice(("support", "partial_support", "not_support", "unjudged"))
               for _ in range(n)]
        sums = {"vital": [0, 0.0, 0.0], "okay": [0, 0.0, 0.0], "all": [0, 0.0, 0.0]}
        for i, a in zip(imp, lab):
            if a in CREDIT:
                for group in ("all", i):
                    if group in sums:
                        sums[group][0] += 1
                        sums[group][1] += CREDIT[a]
                        sums[group][2] += STRICT_CREDIT[a]
        (nv, sv, tv), (no, so, to), (na, sa, ta) = sums["vital"], sums["okay"], sums["all"]
        weight = nv + 0.5 * no
        assert label_scores(imp, lab) == {
            "V": sv / nv if nv else 0.0, "V_strict": tv / nv if nv else 0.0,
            "W": (sv + 0.5 * so) / weight if weight else 0.0,
            "W_strict": (tv + 0.5 * to) / weight if weight else 0.0,
            "A": sa / na if na else 0.0, "A_strict": ta / na if na else 0.0}


def test_scoring_nuggets_imports_no_other_method(tmp_path: Path) -> None:
    """`score` of AutoNuggetizer judgments imports the nuggets method alone (its table's counts
    are its own declarations, not every registered method's): the others' imports were a
    fixed cost of every scoring. (The first command after an install loads them all once, to
    keep their declarations for `--method` and the help: interface/index.py.)"""
    import os
    import subprocess

    folder, key = assessments(tmp_path)
    code = ("import sys\nfrom nuggetizer.cli import cli\n"
            "cli(sys.argv[1:], prog_name='nuggetizer', standalone_mode=False)\n"
            "print(sorted(m for m in sys.modules if m.startswith('nuggetizer.methods.')"
            " and m.count('.') == 2))\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):  # the first keeps the declarations
        done = subprocess.run([sys.executable, "-c", code, "score", str(folder), "--nuggets",
                               str(key), "--lenient", "-o", str(tmp_path / "board.tsv"),
                               "--per-topic", str(tmp_path / "per_topic.tsv")],
                              capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
    assert list((tmp_path / "cache" / "nuggetizer").glob("declared-*.json"))
    assert done.stdout.splitlines()[-1] == "['nuggetizer.methods.nuggets']"
    assert (tmp_path / "per_topic.tsv").read_text(encoding="utf-8").startswith(
        "run_id\ttopic_id\tmeasure\tvalue\n")
