"""Answer keys without qrels on the AutoJudge spot-check set (Cranfield, runs citing doc ids,
no qrels): `nuggetize --grade-pool` and a track's `[relevance]` table grade the runs' pool,
then nuggetize, assign and score. The scripted backend runs the chain fast; the embedded model
runs it end to end (slow)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from scripted import SCRIPTS, by_prompt
from shared_data import SPOT_CHECK

from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.plan import load_track

TOPICS = SPOT_CHECK / "queries.jsonl"
CORPUS = SPOT_CHECK / "corpus.jsonl.gz"
RUNS = sorted((SPOT_CHECK / "runs").glob("*.jsonl"))
RUN_IDS = ["my_best_run_01", "my_best_run_02", "my_best_run_02_citations"]
POOL = [("28", "224"), ("28", "279")]  # run 01 cites 224 (no references); runs 02 list 279
CALLS: list[str] = []


def answer(prompt: str, grades: dict[str, int]) -> str:
    """Grades by passage (the Cranfield abstracts' first words), two nuggets, their labels."""
    CALLS.append(prompt)
    if "##final score" in prompt:
        passage = prompt.split("\nPassage: ", 1)[1]
        for start, grade in grades.items():
            if passage.startswith(start):
                return f"##final score: {grade}"
        return "##final score: 0"
    if "Updated Nugget List:" in prompt:
        return '["linear theory designs quasi-cylindrical surfaces", "supersonic drag"]'
    n = int(re.search(r"label each of the (\d+) nuggets", prompt).group(1))
    if "vital or okay" in prompt or "either a vital or okay" in prompt:
        return json.dumps(["vital", "okay"][:n] + ["okay"] * (n - 2))
    return json.dumps(["support"] + ["not_support"] * (n - 1))


GRADED = {"quasi-cylindrical": 2, "supersonic drag": 0}
SCRIPTS["spot-graded"] = by_prompt(lambda p: answer(p, GRADED))
SCRIPTS["spot-zero"] = by_prompt(lambda p: answer(p, {}))


def invoke(*args: str | Path) -> object:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def nuggetize(out: Path, assessor: str, *extra: str | Path) -> object:
    return invoke("nuggetize", "--topics", TOPICS, *[x for r in RUNS for x in ("--run", r)],
                  "--corpus", CORPUS, "--grade-pool", "-o", out, "--assessor", assessor,
                  "--cache", out.parent / "cache.sqlite", *extra)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_grade_pool_writes_qrels_judgments_then_nuggets_and_replays(tmp_path: Path) -> None:
    CALLS.clear()
    out = tmp_path / "nuggets.jsonl"
    made = nuggetize(out, "scripted:spot-graded")
    assert made.exit_code == 0, made.output
    qrels = tmp_path / "nuggets.llm.qrels"
    assert qrels.read_text() == "28 0 224 2\n28 0 279 0\n"
    judged = lines(tmp_path / "nuggets.llm.qrels.judgments.jsonl")
    assert [(r["qid"], r["docid"], r["grade"]) for r in judged] == [("28", "224", 2),
                                                                     ("28", "279", 0)]
    assert judged[0]["provenance"]["config"]["step"] == "relevance"
    sidecar = json.loads((tmp_path / "nuggets.llm.qrels.provenance.json").read_text())
    assert {str(p) for p in RUNS} <= {i["path"] for i in sidecar["inputs"]}
    (key,) = lines(out)
    assert key["qid"] == "28" and [n["importance"] for n in key["nuggets"]] == ["vital", "okay"]
    assert key["provenance"]["config"]["min_grade"] == 1
    # only the passage graded >= 1 went into the creation prompt
    (create,) = [p for p in CALLS if "Updated Nugget List:" in p]
    assert "quasi-cylindrical" in create and "[2]" not in create
    assert "relevance: pooled 2 pairs of 1 topics" in made.stderr
    assert "grades written 0: 1, 2: 1" in made.stderr
    calls = len(CALLS)
    again = nuggetize(out, "scripted:spot-graded")  # a rerun replays every call from the cache
    assert again.exit_code == 0, again.output
    assert len(CALLS) == calls and lines(out)[0]["nuggets"] == key["nuggets"]
    assert "1 topics, 0 calls, 4 cache hits" in again.stderr  # 2 grades, create, importance


def test_all_grades_zero_give_an_empty_key_and_a_hint(tmp_path: Path) -> None:
    out = tmp_path / "nuggets.jsonl"
    made = nuggetize(out, "scripted:spot-zero", "--no-cache")
    assert made.exit_code == 0, made.output
    assert out.read_text() == ""
    assert "1 of 1 topics have no passage graded >= 1" in made.stderr
    assert "--min-grade 0" in made.stderr and "1 skipped" in made.stderr
    zero = nuggetize(tmp_path / "zero.jsonl", "scripted:spot-zero", "--no-cache",
                     "--min-grade", "0")
    assert zero.exit_code == 0, zero.output
    (key,) = lines(tmp_path / "zero.jsonl")
    assert key["provenance"]["config"]["min_grade"] == 0 and key["nuggets"]


def test_grade_pool_options_are_checked(tmp_path: Path) -> None:
    out = tmp_path / "n.jsonl"
    alone = invoke("nuggetize", "--topics", TOPICS, "--corpus", CORPUS, "--qrels",
                   tmp_path / "q", "--run", RUNS[0], "-o", out)
    assert alone.exit_code == 2 and "go with --grade-pool" in alone.stderr
    nothing = invoke("nuggetize", "--topics", TOPICS, "--corpus", CORPUS, "--grade-pool",
                     "-o", out, "--assessor", "scripted:spot-zero")
    assert nothing.exit_code == 2 and "needs runs to pool" in nothing.stderr
    docs = nuggetize(out, "scripted:spot-zero", "--docs-run", tmp_path / "x.run")
    assert docs.exit_code == 2 and "--docs-run does not apply" in docs.stderr


DRY = re.compile(r"dry run (?P<step>\S+).*?: (?P<calls>\d+) calls to make.*?; (?P<hits>\d+) "
                 r"calls the cache holds")


def dry_counts(stderr: str) -> dict[str, tuple[int, int]]:
    """Per step of a dry run: (calls to make, calls the cache holds)."""
    return {m["step"]: (int(m["calls"]), int(m["hits"]))
            for m in map(DRY.match, stderr.splitlines()) if m}


def test_a_dry_run_of_grade_pool_counts_the_grades_exactly_and_bounds_the_keys(
        tmp_path: Path) -> None:
    CALLS.clear()
    out = tmp_path / "nuggets.jsonl"
    dry = nuggetize(out, "scripted:spot-graded", "--dry-run", "--tokenizer", "chars")
    assert dry.exit_code == 0, dry.output
    assert CALLS == [] and not out.exists() and not (tmp_path / "nuggets.llm.qrels").exists()
    counted = dry_counts(dry.stderr)
    assert counted["relevance"] == (len(POOL), 0)
    assert counted["nuggetize"][0] >= 1  # as if both passages were graded >= 1
    assert "counted as if every pooled passage were graded 3" in dry.stderr

    made = nuggetize(out, "scripted:spot-graded")
    assert made.exit_code == 0, made.output
    assert sum("##final score" in p for p in CALLS) == counted["relevance"][0]
    creations = sum("Updated Nugget List:" in p for p in CALLS)
    assert creations <= counted["nuggetize"][0]
    key_calls = sum("##final score" not in p for p in CALLS)  # creation, importance

    # every grade in the cache now: the keys are counted from them, all replayed
    CALLS.clear()
    again = nuggetize(tmp_path / "other.jsonl", "scripted:spot-graded", "--dry-run")
    assert again.exit_code == 0, again.output
    assert CALLS == []
    counted = dry_counts(again.stderr)
    assert counted["relevance"] == (0, len(POOL))
    assert counted["nuggetize"] == (0, key_calls)
    assert "keys from the grades the cache holds" in again.stderr


def test_relevance_and_a_relevance_track_dry_run_and_take_a_few_topics(tmp_path: Path) -> None:
    CALLS.clear()
    qrels = tmp_path / "llm.qrels"
    base = ["relevance", "--topics", TOPICS, *[x for r in RUNS for x in ("--run", r)],
            "--corpus", CORPUS, "-o", qrels, "--assessor", "scripted:spot-graded",
            "--cache", tmp_path / "cache.sqlite"]
    dry = invoke(*base, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry_counts(dry.stderr) == {"relevance": (len(POOL), 0)}
    assert CALLS == [] and not qrels.exists()
    none = invoke(*base, "--only-topics", "no-such-topic")
    assert none.exit_code == 2 and "none of the chosen topics" in none.stderr
    done = invoke(*base, "--only-topics", "28")
    assert done.exit_code == 0, done.output
    assert len(CALLS) == len(POOL) and qrels.read_text() == "28 0 224 2\n28 0 279 0\n"

    evaluated = evaluate(track(tmp_path), tmp_path / "out", "scripted:spot-graded",
                         "--dry-run", "--cache", str(tmp_path / "cache.sqlite"))
    assert evaluated.exit_code == 0, evaluated.output
    assert len(CALLS) == len(POOL)  # the grades replay; nothing else is sent
    counted = dry_counts(evaluated.stderr)
    assert counted["relevance"] == (0, len(POOL))
    assert counted["nuggetize"][0] >= 1
    assert "not counted: the answer key" in evaluated.stderr
    assert not (tmp_path / "out").exists()


def track(tmp_path: Path, extra: str = "", nuggets: str = "") -> Path:
    path = tmp_path / "track.toml"
    runs = ", ".join(f'"{r}"' for r in RUNS)
    path.write_text(f'name = "spot-check"\ntopics = "{TOPICS}"\ncorpus = "{CORPUS}"\n'
                    f"runs = [{runs}]\n{extra}\n[relevance]\n\n[nuggets]\nkeep = 10\n{nuggets}")
    return path


def evaluate(config: Path, out: Path, assessor: str, *extra: str) -> object:
    return invoke("evaluate", "--track", config, "-o", out, "--assessor", assessor, *extra)


def test_a_relevance_track_grades_nuggetizes_assigns_and_scores(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = evaluate(track(tmp_path), out, "scripted:spot-graded", "--no-cache")
    assert done.exit_code == 0, done.output
    for name in ("relevance.qrels", "relevance.qrels.judgments.jsonl",
                 "relevance.qrels.provenance.json", "nuggets.jsonl", "leaderboard.tsv",
                 "per_topic.tsv"):
        assert (out / name).is_file(), name
    assert sorted(p.stem for p in (out / "assessments").glob("*.jsonl")) == RUN_IDS
    board = [row.split("\t") for row in (out / "leaderboard.tsv").read_text().splitlines()]
    assert sorted(row[0] for row in board[1:]) == RUN_IDS
    assert lines(out / "nuggets.jsonl")[0]["provenance"]["track"] == "spot-check"


def test_a_relevance_track_with_no_key_at_the_threshold_stops_clearly(tmp_path: Path) -> None:
    out = tmp_path / "out"
    stopped = evaluate(track(tmp_path), out, "scripted:spot-zero", "--no-cache")
    assert stopped.exit_code == 2
    assert "no topic has a passage graded >= 1" in stopped.stderr
    assert "min_grade = 0 in the track's [nuggets] table" in stopped.stderr
    assert (out / "relevance.qrels").read_text() == "28 0 224 0\n28 0 279 0\n"
    assert not (out / "leaderboard.tsv").exists()
    lowered = evaluate(track(tmp_path, nuggets="min_grade = 0\n"), out, "scripted:spot-zero",
                       "--no-cache")
    assert lowered.exit_code == 0, lowered.output
    assert (out / "leaderboard.tsv").is_file()


def test_relevance_tables_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not both"):
        load_track(str(track(tmp_path, extra='key = "nuggets.jsonl"')))
    with pytest.raises(ConfigError, match="relevance.reask: Extra inputs"):
        bad = tmp_path / "bad.toml"
        bad.write_text(track(tmp_path).read_text().replace("[relevance]\n",
                                                           "[relevance]\nreask = 1\n"))
        load_track(str(bad))
    loaded = load_track(str(track(tmp_path)))
    assert loaded.relevance is not None and loaded.qrels is None


@pytest.mark.slow
def test_the_embedded_model_runs_the_whole_chain_on_the_spot_check(gguf_path: Path,
                                                                    tmp_path: Path) -> None:
    """SmolLM2-135M: grade the pool, nuggetize (min_grade 0: the tiny model may grade every
    passage 0), assign, score. Structure only, never the quality of its judgments."""
    out = tmp_path / "out"
    config = track(tmp_path, nuggets="min_grade = 0\nmax_nuggets = 10\n")
    started = time.monotonic()
    done = evaluate(config, out, "local", "--cache", str(tmp_path / "cache.sqlite"))
    seconds = time.monotonic() - started
    assert done.exit_code == 0, done.output
    judged = lines(out / "relevance.qrels.judgments.jsonl")
    assert [(r["qid"], r["docid"]) for r in judged] == POOL
    assert all(r["provenance"]["assessor"] == "local" for r in judged)
    (key,) = lines(out / "nuggets.jsonl")
    assert key["qid"] == "28" and key["nuggets"]
    assert key["provenance"]["assessor"] == "local"
    board = [row.split("\t") for row in (out / "leaderboard.tsv").read_text().splitlines()]
    assert board[0][:2] == ["run_id", "V_strict"]
    assert sorted(row[0] for row in board[1:]) == RUN_IDS
    summary = re.search(r"evaluate: .*", done.stderr)
    assert summary, done.stderr
    print(f"\nembedded model on the spot-check: {summary.group(0)}; {seconds:.1f} s wall")
