"""Pairwise battles (nuggetizer/methods/battles/method.py, `nuggetizer battles`): blind prompts sent
in both orders, resumable without repeating a battle, unparseable verdicts unjudged and
counted, a dry run that counts the calls the real run makes, and the score tables; on the
three TREC RAG 2024 baselines (cut to a few topics) at the emulator or a scripted backend."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import scripted
from click.testing import CliRunner
from emulated import emulator, kill_after
from shared_data import RAG24

from nuggetizer.cli import cli
from nuggetizer.methods.battles import parse_verdict
from nuggetizer.parsing import ParseFailure

RUNS = sorted((RAG24 / "runs").glob("baseline_*.jsonl"))
TOPICS = RAG24 / "topics.rag24.test.tsv"
FAST = {"NUGGETIZER_RETRY_WAIT": "0.01", "NUGGETIZER_RETRY_MAX_WAIT": "0.05",
        "NUGGETIZER_TIMEOUT": "60"}


def baselines(tmp: Path, topics: int = 4) -> list[Path]:
    """The three baselines' answers to their first `topics` common topics, written to `tmp`."""
    lines = {p: p.read_text(encoding="utf-8").splitlines() for p in RUNS}
    common = [json.loads(x)["topic_id"] for x in lines[RUNS[0]]]
    for p in RUNS[1:]:
        theirs = {json.loads(x)["topic_id"] for x in lines[p]}
        common = [q for q in common if q in theirs]
    chosen = set(common[:topics])
    paths = []
    for p in RUNS:
        kept = [x for x in lines[p] if json.loads(x)["topic_id"] in chosen]
        (tmp / p.name).write_text("\n".join(kept) + "\n", encoding="utf-8")
        paths.append(tmp / p.name)
    return paths


def run_ids(paths: list[Path]) -> list[str]:
    return [json.loads(p.read_text().splitlines()[0])["run_id"] for p in paths]


def battles_args(paths: list[Path], out: Path, *extra: str) -> list[str]:
    args = ["battles", "--topics", str(TOPICS), "-o", str(out), *extra]
    for p in paths:
        args += ["--run", str(p)]
    return args


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "battles.jsonl").read_text().splitlines()]


def test_verdicts_parse_or_fail_never_as_a_tie() -> None:
    assert parse_verdict('{"verdict": "B"}') == "B"
    assert parse_verdict('{"verdict": "tie"}') == "tie"
    assert parse_verdict("Both are fine. [[C]]") == "tie"  # MT-Bench's spelling of a tie
    assert parse_verdict("Assistant A is clearly better: [[A]]") == "A"
    for garbage in ("I have carefully read the passage and I believe it is quite good.",
                    '{"verdict": "C"}', '{"verdict": "', ""):
        with pytest.raises(ParseFailure):
            parse_verdict(garbage)


def test_every_prompt_is_blind_and_both_orders_are_sent(tmp_path: Path) -> None:
    paths = baselines(tmp_path)
    ids = run_ids(paths)
    sent: list[str] = []

    def first_wins(request: Any) -> str:
        sent.append("\n".join(text for _, text in request.messages))
        return '{"verdict": "A"}'  # the answer shown first, whatever it is: every order flips

    scripted.SCRIPTS["battles-blind"] = first_wins
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, battles_args(paths, out, "--no-cache", "--assessor",
                                                  "scripted:battles-blind"))
    assert result.exit_code == 0, result.output
    battles = records(out)
    assert len(battles) == 3 * 4  # every pair of the three runs on every topic
    assert len(sent) == 2 * len(battles) and len(set(sent)) == len(sent)
    for prompt in sent:
        assert "[The Start of Assistant A's Answer]" in prompt
        for run_id in ids:
            assert run_id not in prompt
        for model in ("command-r-plus", "gpt-4o", "l31_70b", "baseline"):  # nor the systems
            assert model not in prompt.lower()
    for record in battles:
        assert record["run_a"] < record["run_b"]
        assert [o["first"] for o in record["orders"]] == [record["run_a"], record["run_b"]]
        assert [o["verdict"] for o in record["orders"]] == ["A", "A"]
        assert record["flipped"] is True and record["result"] == "tie"  # a flip is a tie


def test_one_order_is_a_seeded_choice(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=3)
    scripted.SCRIPTS["battles-one"] = lambda request: '{"verdict": "B"}'
    firsts = []
    for name in ("one", "two"):
        out = tmp_path / name
        result = CliRunner().invoke(cli, battles_args(
            paths, out, "--no-cache", "--assessor", "scripted:battles-one", "--set",
            "both_orders=false"))
        assert result.exit_code == 0, result.output
        battles = records(out)
        assert all(len(r["orders"]) == 1 and r["flipped"] is False for r in battles)
        # B, the one shown second, won: the result names whichever run that was
        assert all(r["result"] == ("b" if r["orders"][0]["first"] == r["run_a"] else "a")
                   for r in battles)
        firsts.append([r["orders"][0]["first"] for r in battles])
    assert firsts[0] == firsts[1]  # the same seed shows the same order
    assert len({f == r for f, r in zip(firsts[0], (x["run_a"] for x in battles))}) == 2


def dry_calls(output: str) -> int:
    match = re.search(r"dry run battles \((\d+) battles.*?\): (\d+) calls to make", output)
    assert match, output
    return int(match.group(2))


def test_dry_run_counts_the_calls_the_real_run_makes(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=5)
    out = tmp_path / "out"
    with emulator(tmp_path, "--seed", "3") as server:
        common = ["--battles-per-topic", "2", "--seed", "5", "--no-cache", "--assessor",
                  "openai:emulated", "--base-url", server.url]
        dry = CliRunner().invoke(cli, battles_args(paths, out, "--dry-run", *common))
        assert dry.exit_code == 0, dry.output
        assert not out.exists() or not list(out.iterdir())  # a dry run writes nothing
        assert server.requests() == []
        real = CliRunner().invoke(cli, battles_args(paths, out, *common))
        assert real.exit_code == 0, real.output
        answered = [r for r in server.requests() if r["outcome"] == "ok"]
    assert {r["kind"] for r in answered} == {"battle"}
    assert dry_calls(dry.output) == len(answered) == 2 * len(records(out)) == 2 * 2 * 5


def test_a_killed_run_resumes_and_repeats_no_battle(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=5)
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    env = {**os.environ, **FAST}
    command = [str(Path(sys.executable).parent / "nuggetizer"),
               *battles_args(paths, out, "--cache", str(cache), "--concurrency", "2",
                             "--assessor", "openai:emulated")]
    with emulator(tmp_path, "--seed", "3", "--latency", "0.01", name="first") as server:
        first = kill_after(server, [*command, "--base-url", server.url], 9, env=env)
    assert len(first) == 9 and not (out / "battles.jsonl").exists()  # nothing half-written
    journalled = [json.loads(x) for x in (out / "battles.jsonl.partial").read_text()
                  .splitlines()]
    assert journalled  # finished battles are kept at once
    with emulator(tmp_path, "--seed", "3", name="second") as server:
        done = subprocess.run([*command, "--base-url", server.url], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        second = [r for r in server.requests() if r["outcome"] == "ok"]
    assert f"({len(journalled)} resumed)" in done.stderr
    battles = records(out)
    assert len(battles) == 15 and len({(r["qid"], r["run_a"], r["run_b"]) for r in battles}) == 15
    # every prompt was answered once in all: no battle (nor order) asked twice
    assert {r["digest"] for r in first}.isdisjoint(r["digest"] for r in second)
    assert len(first) + len(second) == 2 * 15
    assert not (out / "battles.jsonl.partial").exists()


def test_an_unparseable_verdict_is_unjudged_and_counted_never_a_tie(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=3)
    poisoned = json.loads(paths[0].read_text().splitlines()[0])
    marker = poisoned["answer"][0]["text"].strip()[:40]  # one answer of the first run
    out, board = tmp_path / "out", tmp_path / "board.tsv"
    with emulator(tmp_path, "--poison", marker) as server:
        result = CliRunner().invoke(cli, battles_args(
            paths, out, "--no-cache", "--set", "reasks=1", "--assessor", "openai:emulated",
            "--base-url", server.url))
        assert result.exit_code == 0, result.output
        asked = Counter(r["kind"] for r in server.requests())
    battles = records(out)
    bad = [r for r in battles if r["qid"] == poisoned["topic_id"]
           and poisoned["run_id"] in (r["run_a"], r["run_b"])]
    assert len(bad) == 2 and asked["battle"] == 2 * len(battles) + 2 * 2  # one re-ask each
    for record in bad:
        assert record["result"] == "unjudged" and record["unjudged"] == 2
        assert all(o["verdict"] == "unjudged" and o["error"] and o["raw"]
                   for o in record["orders"])
    assert all(r["result"] in ("a", "b", "tie") for r in battles if r not in bad)
    assert "4 unjudged" in result.output
    scored = CliRunner().invoke(cli, ["score", "--method", "battles", str(out), "-o",
                                      str(board)])
    assert scored.exit_code == 0, scored.output
    assert "2 answers with nothing judged" in scored.output  # the two battles' pairs
    # the four orders of the two battles without a result are unjudged (it said 0 unjudged)
    assert "4 unjudged (left out: 4 verdicts)" in scored.output
    table = {r.split("\t")[0]: r.split("\t") for r in board.read_text().splitlines()}
    header = table.pop("run_id")
    played = {run: int(float(row[header.index("battles")])) for run, row in table.items()}
    # each run meets the other two on 3 topics: the poisoned run's 2 lost battles are not ties
    assert played[poisoned["run_id"]] == 6 - 2 and sum(played.values()) == 2 * (9 - 2)


def test_score_writes_the_leaderboard_per_topic_rows_and_the_matrix(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=6)
    out, board, per_topic = tmp_path / "out", tmp_path / "board.tsv", tmp_path / "pt.tsv"
    with emulator(tmp_path, "--seed", "11") as server:
        result = CliRunner().invoke(cli, battles_args(
            paths, out, "--no-cache", "--assessor", "openai:emulated", "--base-url",
            server.url))
        assert result.exit_code == 0, result.output
    scored = CliRunner().invoke(cli, ["score", "--method", "battles", str(out), "-o", str(board),
                                      "--per-topic", str(per_topic), "--set", "rounds=50"])
    assert scored.exit_code == 0, scored.output
    battles = records(out)
    rows = [r.split("\t") for r in board.read_text().splitlines()]
    assert rows[0] == ["run_id", "bt_score", "bt_low", "bt_high", "sw_low", "sw_high",
                       "sc_score", "sc_low", "sc_high", "sc_moved", "win_rate", "flip_rate",
                       "battles"]
    means = {r[0]: dict(zip(rows[0][1:], map(float, r[1:]))) for r in rows[1:]}
    assert set(means) == set(run_ids(paths))
    assert [r[0] for r in rows[1:]] == sorted(means, key=lambda r: -means[r]["bt_score"])
    points: Counter[str] = Counter()
    played: Counter[str] = Counter()
    flips: Counter[str] = Counter()
    for r in battles:  # the win rates and flip rates, counted here from the records
        played.update((r["run_a"], r["run_b"]))
        flips.update((r["run_a"], r["run_b"]) if r["flipped"] else ())
        if r["result"] == "tie":
            points.update({r["run_a"]: 0.5, r["run_b"]: 0.5})
        else:
            points[r["run_a"] if r["result"] == "a" else r["run_b"]] += 1
    for m in means.values():
        assert m["bt_low"] <= m["bt_score"] <= m["bt_high"]
        assert m["sw_low"] <= m["bt_score"] <= m["sw_high"]
        assert m["sc_low"] <= m["sc_score"] <= m["sc_high"]
    # every battle carries both answers' style; the coefficients' table names every covariate
    assert all(set(r["style"]["a"]) == {"words", "headers", "list_items", "bold", "citations"}
               for r in battles)
    style = (tmp_path / "board.style.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in style] == ["feature", "words", "headers",
                                                       "list_items", "bold", "citations"]
    assert sum(m["sc_moved"] for m in means.values()) == 0
    for run, m in means.items():
        assert m["win_rate"] == pytest.approx(points[run] / played[run], abs=1e-4)
        assert m["flip_rate"] == pytest.approx(flips[run] / played[run], abs=1e-4)
        assert m["battles"] == played[run] == 2 * 6
    assert sum(m["bt_score"] for m in means.values()) / 3 == pytest.approx(1000, abs=1e-2)
    long = [r.split("\t") for r in per_topic.read_text().splitlines()[1:]]
    topic_rows = [r for r in long if r[1] != "all" and r[2] == "win_rate"]
    assert len(topic_rows) == 3 * 6
    matrix = [r.split("\t") for r in (tmp_path / "board.matrix.tsv").read_text().splitlines()]
    assert matrix[0] == ["run_id", "opponent", "wins", "ties", "losses", "win_rate"]
    cells = {(r[0], r[1]): tuple(map(int, r[2:5])) for r in matrix[1:]}
    assert len(cells) == 6
    for (run, other), (wins, ties, losses) in cells.items():
        assert cells[(other, run)] == (losses, ties, wins) and wins + ties + losses == 6


def test_battle_sheets_round_trip_to_identical_tables(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=5)
    out, sheets, back = tmp_path / "out", tmp_path / "sheets", tmp_path / "back"
    mapping = tmp_path / "private" / "mapping.json"
    mapping.parent.mkdir()
    with emulator(tmp_path, "--seed", "2") as server:
        result = CliRunner().invoke(cli, battles_args(
            paths, out, "--no-cache", "--set", "both_orders=false", "--assessor",
            "openai:emulated", "--base-url", server.url))
        assert result.exit_code == 0, result.output
    runner = CliRunner()
    exported = runner.invoke(cli, ["export-battle-sheets", "--battles", str(out), "--mapping",
                                   str(mapping), "-o", str(sheets),
                                   *[x for p in paths for x in ("--run", str(p))]])
    assert exported.exit_code == 0, exported.output
    files = sorted(sheets.glob("*.tsv"))
    assert len(files) == 5
    for path in files:  # blind: no run id, only pseudonyms
        text = path.read_text()
        assert not any(run_id in text for run_id in run_ids(paths))
        assert "run-" in text
    imported = runner.invoke(cli, ["import-battle-sheets", str(sheets), "--mapping",
                                   str(mapping), "-o", str(back),
                                   *[x for p in paths for x in ("--run", str(p))]])
    assert imported.exit_code == 0, imported.output
    tables = []
    for folder in (out, back):
        board = tmp_path / f"{folder.name}.tsv"
        scored = runner.invoke(cli, ["score", "--method", "battles", str(folder), "-o",
                                     str(board), "--per-topic", str(board) + ".pt",
                                     "--set", "rounds=30"])
        assert scored.exit_code == 0, scored.output
        tables.append([board.read_text(), Path(str(board) + ".pt").read_text(),
                       board.with_name(f"{board.stem}.matrix.tsv").read_text()])
    assert tables[0] == tables[1]
    # a judge's hand: a verdict that is not left, right or tie is named with its line
    first = files[0]
    lines = first.read_text().splitlines()
    lines[2] = re.sub(r"\t(left|right|tie)\t", "\tmaybe\t", lines[2], count=1)
    first.write_text("\n".join(lines) + "\n")
    bad = runner.invoke(cli, ["import-battle-sheets", str(sheets), "--mapping", str(mapping),
                              "-o", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and f"{first}:3" in bad.output and "maybe" in bad.output


def test_agreement_of_the_battle_ranking_with_the_nugget_ranking(tmp_path: Path) -> None:
    """`agreement` reads a battles folder as its Bradley-Terry ranking: Kendall's tau and
    tau_AP against the AutoNuggetizer's V_strict of the same runs (both at the emulator)."""
    from emulated import NUGGETS
    from scipy.stats import kendalltau

    paths = baselines(tmp_path, topics=6)
    out, judged, nuggets_pt = tmp_path / "out", tmp_path / "judged", tmp_path / "v.tsv"
    with emulator(tmp_path, "--seed", "4") as server:
        common = ["--no-cache", "--assessor", "openai:emulated", "--base-url", server.url]
        made = CliRunner().invoke(cli, battles_args(paths, out, *common))
        assert made.exit_code == 0, made.output
        assigned = CliRunner().invoke(cli, ["assign", "--nuggets", str(NUGGETS), "--lenient",
                                            "-o", str(judged), *common,
                                            *[x for p in paths for x in ("--run", str(p))]])
        assert assigned.exit_code == 0, assigned.output
    scored = CliRunner().invoke(cli, ["score", str(judged), "--nuggets", str(NUGGETS),
                                      "--lenient", "--only-topics",
                                      ",".join(json.loads(x)["topic_id"] for x in
                                               paths[0].read_text().splitlines()),
                                      "--per-topic", str(nuggets_pt)])
    assert scored.exit_code == 0, scored.output
    board = tmp_path / "bt.tsv"
    assert CliRunner().invoke(cli, ["score", "--method", "battles", str(out), "-o", str(board),
                                    "--set", "rounds=20"]).exit_code == 0
    table, meta = tmp_path / "agreement.tsv", tmp_path / "meta.tsv"
    result = CliRunner().invoke(cli, ["agreement", str(nuggets_pt), str(out), "--measure-a",
                                      "V_strict", "--measure-b", "bt_score", "-o", str(table),
                                      "--meta-output", str(meta)])
    assert result.exit_code == 0, result.output
    bt = {r.split("\t")[0]: float(r.split("\t")[1]) for r in board.read_text().splitlines()[1:]}
    v = {r.split("\t")[0]: float(r.split("\t")[3]) for r in nuggets_pt.read_text().splitlines()
         if r.split("\t")[1:3] == ["all", "V_strict"]}
    runs = sorted(bt)
    expected = kendalltau([v[r] for r in runs], [bt[r] for r in runs]).statistic
    run_row = table.read_text().splitlines()[1].split("\t")
    assert run_row[:3] == ["run", "run means", "3"]
    assert float(run_row[3]) == pytest.approx(expected, abs=1e-4)
    assert "tau_ap" in meta.read_text()


def test_report_of_battles_draws_scores_with_intervals_and_the_win_heat_map(
        tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=4)
    out, report = tmp_path / "out", tmp_path / "report"
    with emulator(tmp_path, "--seed", "6") as server:
        made = CliRunner().invoke(cli, battles_args(
            paths, out, "--no-cache", "--assessor", "openai:emulated", "--base-url",
            server.url))
        assert made.exit_code == 0, made.output
    result = CliRunner().invoke(cli, ["report", str(out), "-o", str(report)])
    assert result.exit_code == 0, result.output
    page = (report / "index.html").read_text()
    for figure in ("battle_scores.png", "battle_wins.png", "heatmap.png"):
        assert f"src='{figure}'" in page
        assert (report / figure).read_bytes().startswith(b"\x89PNG")
    assert "12 battles with a result" in page and "bt_score" in page


def test_a_larger_budget_extends_the_battles_judged_and_adaptive_rounds_add_overlaps(
        tmp_path: Path) -> None:
    """The same seed and a larger budget keep every battle judged (bt's nested schedule) and
    judge only the new ones; an adaptive round judges the unplayed battles between runs whose
    intervals overlap, exactly those methods/battles/schedule.py's `adaptive_pairs` gives."""
    from nuggetizer.measures import bootstrap_intervals
    from nuggetizer.methods.battles import Pairing, adaptive_pairs, verdicts

    paths = baselines(tmp_path, topics=6)
    out = tmp_path / "out"
    with emulator(tmp_path, "--seed", "8") as server:
        common = ["--seed", "2", "--no-cache", "--assessor", "openai:emulated", "--base-url",
                  server.url]
        first = CliRunner().invoke(cli, battles_args(paths, out, "--battles-per-topic", "1",
                                                     *common))
        assert first.exit_code == 0, first.output
        one = records(out)
        assert len(one) == 6 and len(server.requests()) == 12
        more = CliRunner().invoke(cli, battles_args(paths, out, "--battles-per-topic", "2",
                                                    *common))
        assert more.exit_code == 0, more.output
        two = records(out)
        assert len(two) == 12 and two[:6] == one  # kept as they were, not judged again
        assert len(server.requests()) == 12 + 12 and "(6 resumed)" in more.output
        # what the adaptive round must add, from the battles judged so far
        intervals = bootstrap_intervals(verdicts(two), ties="half", rounds=200, seed=0)
        runs = {r["qid"]: sorted(run_ids(paths)) for r in two}
        expected = adaptive_pairs(runs, intervals, [Pairing(r["qid"], r["run_a"], r["run_b"])
                                                    for r in two], per_topic=2, seed=2)
        adaptive = CliRunner().invoke(cli, battles_args(paths, out, "--battles-per-topic", "2",
                                                        "--adaptive-rounds", "1", *common))
        assert adaptive.exit_code == 0, adaptive.output
        three = records(out)
        added = [(r["qid"], r["run_a"], r["run_b"]) for r in three[12:]]
        assert added == [(p.qid, p.run_a, p.run_b) for p in expected]
        assert len(server.requests()) == 24 + 2 * len(expected)
    # judged another way: refused before any call (the server is gone)
    other = CliRunner().invoke(cli, battles_args(paths, out, "--set", "both_orders=false",
                                                 *common))
    assert other.exit_code == 2 and "judged with another assessor, prompt or setting" in \
        other.output


def test_2026_runs_show_their_narrative_and_the_cited_documents_when_asked(
        tmp_path: Path) -> None:
    """TREC RAG 2026 runs (tracks/rag26): without --topics the judge reads the narrative the
    run copies in its metadata; `documents=true` adds the cited passages (--corpus), labelled
    by doc id, never by run."""
    track = Path(__file__).resolve().parents[2] / "tracks" / "rag26"
    runs = [track / "run-thorough.jsonl", track / "run-offtopic.jsonl"]
    first = json.loads(runs[0].read_text().splitlines()[0])
    corpus = {json.loads(x)["id"]: json.loads(x) for x in
              (track / "corpus.jsonl").read_text().splitlines()}
    sent: list[str] = []

    def tie(request: Any) -> str:
        sent.append(request.messages[-1][1])
        return '{"verdict": "tie"}'

    scripted.SCRIPTS["battles-2026"] = tie
    out = tmp_path / "out"
    args = ["battles", "-o", str(out), "--no-cache", "--assessor", "scripted:battles-2026",
            "--set", "documents=true", "--corpus", str(track / "corpus.jsonl")]
    for p in runs:
        args += ["--run", str(p)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert len(sent) == 2 * 2 and all(r["result"] == "tie" for r in records(out))
    mine = [p for p in sent if first["metadata"]["narrative"] in p]
    assert len(mine) == 2
    for prompt in mine:
        assert "[The Documents the Answers Cite]" in prompt
        for docid in first["references"][:2]:
            assert f"[{docid}] " in prompt and corpus[docid]["contents"][:60] in prompt
    for prompt in sent:
        assert "rag26-thorough" not in prompt and "rag26-offtopic" not in prompt
        assert "sample-team" not in prompt
