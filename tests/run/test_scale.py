"""The organizer at TREC scale, against the emulating server (benchmarks/emulator.py) on real
TREC RAG 2024 runs and nuggets cut down: token usage counted per step (and replayed from the
cache), steps restricted to a few topics, dry runs that predict a real run's calls and prompt
tokens without calling the LLM."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import emulator, small_track

from nuggetizer.cli import cli


@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path, runs=2, topics=5)


def invoke(*args: str | Path) -> object:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.output
    return result


def assign(track: tuple[list[Path], Path], url: str, out: Path, cache: Path,
           *extra: str | Path) -> object:
    runs, nuggets = track
    return invoke("assign", *[x for r in runs for x in ("--run", r)], "--nuggets", nuggets,
                  "-o", out, "--assessor", "openai:emulated", "--base-url", url,
                  "--cache", cache, *extra)


def summary_line(output: str, step: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(step))


def test_token_usage_lands_in_the_cache_the_summary_and_the_sidecars(
        tmp_path: Path, track: tuple[list[Path], Path]) -> None:
    cache = tmp_path / "cache.sqlite"
    with emulator(tmp_path) as server:
        first = assign(track, server.url, tmp_path / "judged", cache,
                       "--price-in", "2.5", "--price-out", "10")
        assert first.exit_code == 0, first.output
        logged = [r for r in server.requests() if r["outcome"] == "ok"]
    prompt = sum(r["prompt_tokens"] for r in logged)
    completion = sum(r["completion_tokens"] for r in logged)
    assert prompt > 0 and completion > 0
    stored = [json.loads(v) for (v,) in sqlite3.connect(cache).execute("SELECT value FROM calls")]
    assert len(stored) == len(logged)
    assert sum(s["prompt_tokens"] for s in stored) == prompt
    assert sum(s["completion_tokens"] for s in stored) == completion
    line = summary_line(first.output, "assign")
    assert f"{len(logged)} calls" in line
    assert f"{prompt} prompt + {completion} completion tokens" in line
    usage = json.loads((tmp_path / "judged" / "usage.json").read_text())
    assert usage["usage"]["prompt_tokens"] == prompt
    assert usage["usage"]["completion_tokens"] == completion
    cost = (prompt * 2.5 + completion * 10) / 1e6  # at the prices given, per million tokens
    assert usage["usage"]["cost"] == pytest.approx(cost)
    assert usage["prices"] == {"input_per_million": 2.5, "output_per_million": 10.0}
    assert f"cost {cost:.4f}" in line

    # a second run replays every call from the cache: no token spent, the replayed ones said
    again = assign(track, "http://127.0.0.1:9/v1", tmp_path / "again", cache)
    line = summary_line(again.output, "assign")
    assert "0 calls" in line and "0 prompt + 0 completion tokens" in line
    assert f"(replayed from the cache: {prompt} + {completion})" in line

    scored = invoke("score", tmp_path / "judged", "--nuggets", track[1],
                    "-o", tmp_path / "board.tsv")
    assert scored.exit_code == 0, scored.output
    sidecar = json.loads((tmp_path / "board.tsv.provenance.json").read_text())
    step = next(iter(sidecar["usage"].values()))
    assert (step["prompt_tokens"], step["completion_tokens"]) == (prompt, completion)
    assert step["cost"] == pytest.approx(cost)
    assert re.search(r"assign --method nuggets", next(iter(sidecar["usage"])))


REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"


def openai(url: str, cache: Path) -> list[str | Path]:
    return ["--assessor", "openai:emulated", "--base-url", url, "--cache", cache]


def qids(path: Path) -> set[str]:
    return {str(json.loads(line)["qid"]) for line in path.read_text().splitlines()}


def test_every_step_can_be_restricted_to_a_few_topics(
        tmp_path: Path, track: tuple[list[Path], Path]) -> None:
    cache = tmp_path / "cache.sqlite"
    topic_ids = sorted(qids(track[1]))
    chosen = topic_ids[:2]
    listed = tmp_path / "chosen.txt"
    listed.write_text(f"# a few topics first\n{chosen[1]}\n")
    with emulator(tmp_path) as server:
        # nuggetize (the sample track: topics file, qrels, corpus)
        made = invoke("nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels",
                      REPO / "qrels" / "sample.qrels", "--corpus", SAMPLE / "corpus.jsonl",
                      "-o", tmp_path / "key.jsonl", "--only-topics", "sample-2,sample-4",
                      *openai(server.url, cache))
        assert made.exit_code == 0, made.output
        assert qids(tmp_path / "key.jsonl") == {"sample-2", "sample-4"}
        assert {r["query"] for r in server.requests()} == {
            "How do volcanoes form?", "What causes the seasons on Earth?"}
        assert summary_line(made.output, "nuggetize").split(": ")[1].startswith("2 topics")

        # assign: --only-topics and --only-topics-file together (their union)
        judged = assign(track, server.url, tmp_path / "judged", cache,
                        "--only-topics", chosen[0], "--only-topics-file", listed)
        assert judged.exit_code == 0, judged.output
        for path in (tmp_path / "judged").glob("*.jsonl"):
            assert qids(path) == set(chosen)
        assert summary_line(judged.output, "assign").split(": ")[1].startswith("4 answers")

        # score: against the key, and over every topic judged, on one topic only
        for key in (("--nuggets", track[1]), ()):
            board = tmp_path / f"board{len(key)}.tsv"
            scored = invoke("score", tmp_path / "judged", *key, "--only-topics", chosen[0],
                            "--per-topic", board)
            assert scored.exit_code == 0, scored.output
            rows = [r.split("\t") for r in board.read_text().splitlines()[1:]]
            assert {r[1] for r in rows} == {chosen[0], "all"}, key
        nothing = invoke("score", tmp_path / "judged", "--only-topics", "x")
        assert nothing.exit_code == 2 and "none of the chosen topics" in nothing.output

        # an unknown topic is said; none known is an error
        unknown = assign(track, server.url, tmp_path / "judged", cache,
                         "--only-topics", f"{chosen[0]},no-such-topic")
        assert "1 of the 2 chosen topics are not in the runs: no-such-topic" in unknown.output
        nothing = assign(track, server.url, tmp_path / "none", cache, "--only-topics", "x,y")
        assert nothing.exit_code != 0 and "none of the chosen topics" in nothing.output

        # evaluate: the track's key and runs, judged and scored on the chosen topics only
        config = tmp_path / "track.toml"
        runs = json.dumps([str(p) for p in track[0]])
        config.write_text(f'name = "cut"\ntopics = "{SAMPLE / "topics.tsv"}"\n'
                          f'key = "{track[1]}"\nruns = {runs}\n')
        before = len(server.requests())
        done = invoke("evaluate", "--track", config, "-o", tmp_path / "eval",
                      "--only-topics", chosen[0], *openai(server.url, tmp_path / "c2"))
        assert done.exit_code == 0, done.output
        asked = server.requests()[before:]
        assert asked and all(r["query"] for r in asked)
    for path in (tmp_path / "eval" / "assessments").glob("*.jsonl"):
        assert qids(path) == {chosen[0]}
    per_topic = (tmp_path / "eval" / "per_topic.tsv").read_text().splitlines()[1:]
    assert {row.split("\t")[1] for row in per_topic} - {"all"} == {chosen[0]}
    assert "evaluate: 1 topics" in done.output


DRY = re.compile(r"dry run (?P<step>[^:]+): (?P<calls>\d+) calls to make, (?P<prompt>\d+) prompt "
                 r"tokens .*?; (?P<hits>\d+) calls the cache holds")


def dry_lines(output: str) -> dict[str, dict[str, int]]:
    found = {}
    for line in output.splitlines():
        match = DRY.match(line)
        if match:
            found[match["step"].split(" ")[0]] = {k: int(match[k])
                                                  for k in ("calls", "prompt", "hits")}
    return found


def test_a_dry_run_predicts_the_calls_and_prompt_tokens_of_assign_and_sends_nothing(
        tmp_path: Path, track: tuple[list[Path], Path]) -> None:
    cache = tmp_path / "cache.sqlite"
    with emulator(tmp_path) as server:
        dry = assign(track, server.url, tmp_path / "judged", cache, "--dry-run",
                     "--tokenizer", "chars", "--price-in", "2", "--price-out", "8")
        assert dry.exit_code == 0, dry.output
        assert server.requests() == []  # the dry run itself called nothing
        assert not (tmp_path / "judged").exists()  # and wrote nothing
        predicted = dry_lines(dry.output)["assign"]
        assert predicted["calls"] > 0 and predicted["hits"] == 0
        assert "cost about" in dry.output and "estimate: characters / 4" in dry.output

        real = assign(track, server.url, tmp_path / "judged", cache)
        assert real.exit_code == 0, real.output
        sent = server.requests()
        assert len(sent) == predicted["calls"]
        assert sum(r["prompt_tokens"] for r in sent) == predicted["prompt"]
        assert f"{predicted['prompt']} prompt + " in summary_line(real.output, "assign")

        # what the cache holds is free, counted apart
        again = assign(track, server.url, tmp_path / "other", cache, "--dry-run",
                       "--tokenizer", "chars")
        assert dry_lines(again.output)["assign"] == {"calls": 0, "prompt": 0,
                                                     "hits": predicted["calls"]}
        assert len(server.requests()) == len(sent)


def test_dry_runs_of_nuggetize_and_evaluate_say_what_they_can_count(
        tmp_path: Path, track: tuple[list[Path], Path]) -> None:
    with emulator(tmp_path) as server:
        made = invoke("nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels",
                      REPO / "qrels" / "sample.qrels", "--corpus", SAMPLE / "corpus.jsonl",
                      "-o", tmp_path / "key.jsonl", "--dry-run", "--tokenizer", "chars",
                      *openai(server.url, tmp_path / "cache.sqlite"))
        assert made.exit_code == 0, made.output
        assert dry_lines(made.output)["nuggetize"]["calls"] >= 4  # a window per topic at least
        assert "first window of each topic is counted exactly" in made.output
        assert "more calls not rendered" in made.output
        assert "cost about" not in made.output  # no prices: where they come from is said
        assert ("no cost without prices: --price-in and --price-out (per million tokens), or "
                "a track's [prices] table") in made.output
        assert not (tmp_path / "key.jsonl").exists()

        config = tmp_path / "track.toml"
        runs = json.dumps([str(p) for p in track[0]])
        config.write_text(f'name = "cut"\ntopics = "{SAMPLE / "topics.tsv"}"\n'
                          f'key = "{track[1]}"\nruns = {runs}\n'
                          "[prices]\ninput = 1.0\noutput = 4.0\n")
        done = invoke("evaluate", "--track", config, "-o", tmp_path / "eval", "--dry-run",
                      "--tokenizer", "chars", *openai(server.url, tmp_path / "cache.sqlite"))
        assert done.exit_code == 0, done.output
        assert server.requests() == []
        counted = dry_lines(done.output)
        assert counted["assign"]["calls"] > 0 and counted["evaluate"] == counted["assign"]
        assert "cost about" in done.output and "no cost without prices" not in done.output
        assert not (tmp_path / "eval").exists()


def test_blind_sheets_hide_the_runs_and_round_trip_to_identical_scores(
        tmp_path: Path, track: tuple[list[Path], Path]) -> None:
    runs, nuggets = track
    with emulator(tmp_path) as server:
        judged = assign(track, server.url, tmp_path / "auto", tmp_path / "cache.sqlite")
        assert judged.exit_code == 0, judged.output
    run_ids = {json.loads(p.read_text().splitlines()[0])["run_id"] for p in runs}
    mapping = tmp_path / "secret" / "mapping.json"
    exported = invoke("export-sheets", "--assessments", tmp_path / "auto", "-o",
                      tmp_path / "sheets", "--blind", "--mapping", mapping, "--secret", "s3")
    assert exported.exit_code == 0, exported.output
    sheets = sorted((tmp_path / "sheets").glob("*.tsv"))
    assert len(sheets) == 5
    for sheet in sheets:
        text = sheet.read_text()
        assert not any(run_id in text for run_id in run_ids)
        assert "run-" in text
    table = json.loads(mapping.read_text())
    assert set(table["runs"].values()) == run_ids and table["secret"] == "s3"

    # stable: the same secret gives the same sheets; another secret other pseudonyms
    again = invoke("export-sheets", "--assessments", tmp_path / "auto", "-o",
                   tmp_path / "sheets2", "--blind", "--mapping", mapping)
    assert again.exit_code == 0
    assert [p.read_text() for p in sorted((tmp_path / "sheets2").glob("*.tsv"))] == \
        [p.read_text() for p in sheets]
    other = tmp_path / "other.json"
    invoke("export-sheets", "--assessments", tmp_path / "auto", "-o", tmp_path / "sheets3",
           "--blind", "--mapping", other, "--secret", "another")
    assert not set(json.loads(other.read_text())["runs"]) & set(table["runs"])

    # the answers of a topic are shuffled: not all topics list the runs in the same order
    orders = {tuple(line.split("\t")[2] for line in p.read_text().splitlines()
                    if line.startswith("answer")) for p in sheets}
    assert len(orders) > 1

    imported = invoke("import-sheets", tmp_path / "sheets", "--nuggets", nuggets, "-o",
                      tmp_path / "manual", "--mapping", mapping)
    assert imported.exit_code == 0, imported.output
    for folder, board in (("auto", "a.tsv"), ("manual", "m.tsv")):
        scored = invoke("score", tmp_path / folder, "--nuggets", nuggets, "-o", tmp_path / board,
                        "--per-topic", tmp_path / f"pt-{board}")
        assert scored.exit_code == 0, scored.output
    assert (tmp_path / "m.tsv").read_text() == (tmp_path / "a.tsv").read_text()
    assert (tmp_path / "pt-m.tsv").read_text() == (tmp_path / "pt-a.tsv").read_text()
    unblinded = invoke("import-sheets", tmp_path / "sheets", "--nuggets", nuggets, "-o",
                       tmp_path / "wrong", "--mapping", other)
    assert unblinded.exit_code != 0 and "pseudonym this mapping does not know" in \
        unblinded.output


def test_validate_fits_the_official_runs_with_the_default_length_tolerance() -> None:
    from shared_data import RAG24

    from nuggetizer.validate import LENGTH_TOLERANCE, validate_run

    runs = sorted((RAG24 / "runs").glob("*.jsonl"))
    topics = RAG24 / "topics.rag24.test.tsv"
    assert len(runs) == 3 and LENGTH_TOLERANCE == 10
    for path in runs:
        strict = validate_run(path, length_tolerance=0)
        off = [p for p in strict.problems if p.field == "response_length"]
        assert off and all(p.severity == "warning" for p in off)
        report = validate_run(path)
        assert not [p for p in report.problems if p.field == "response_length"]
        assert report.length_within_tolerance == len(off)
        assert {p.kind for p in report.problems} == {"answer over 400 words"}

    result = CliRunner().invoke(cli, ["validate", *map(str, runs), "--topics", str(topics)])
    assert result.exit_code == 0  # the over-length answers stay warnings, which pass
    assert "response_length" not in "\n".join(
        line for line in result.stderr.splitlines() if "warning" in line)
    for path in runs:
        over = validate_run(path).over_length
        assert f"{path}: {over} warnings: answer over 400 words" in result.stderr
        assert result.stderr.count(f"  {path}:") == 3  # three examples, then the count
    strict = CliRunner().invoke(cli, ["validate", str(runs[0]), "--length-tolerance", "0"])
    count = len([p for p in validate_run(runs[0], length_tolerance=0).problems
                 if p.field == "response_length"])
    assert f"{count} warnings: response_length differs (beyond 0 words)" in strict.stderr
    every = CliRunner().invoke(cli, ["validate", str(runs[0]), "--all-problems"])
    assert every.stderr.count(f"{runs[0]}:") == validate_run(runs[0]).warnings
