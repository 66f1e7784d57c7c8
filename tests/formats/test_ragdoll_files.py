"""Issue 40: castorini RAGDoll's files both ways (formats/ragdoll.py).

- Round trips: the project's judgments (made by `evaluate` and `battles` at the mock
  assessor on the sample 2026 track, and written here with repeats, failures and first-only
  judging) -> `export-ragdoll` -> read back by `score`: the same leaderboard and per-topic
  table, byte for byte, under both profiles.
- RAGDoll's own files read as judgments: its arena judgments (ties, a failed row beside its
  retry), counted as its tests count them (tests/test_arena.py); keys and runs written with the
  topic at the top level, where RAGDoll's joins read it.
- Battles under the ragdoll profile: one presentation order, the one RAGDoll draws
  (arena/stages.py `assistant_order`: the first byte of sha256("seed NUL run NUL run NUL
  topic"), even: the first run), seed 13 as RAGDoll's default, named in the provenance.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ragdoll_judgments import support_judgments

from nuggetizer.cli import cli
from nuggetizer.interface import make_method
from nuggetizer.scoring import score_paths

ROOT = Path(__file__).resolve().parents[2]
RAG26 = ROOT / "tracks" / "rag26"
RUNS = [RAG26 / "run-thorough.jsonl", RAG26 / "run-offtopic.jsonl"]
PROFILES = ("guideline", "ragdoll")


def invoke(*args: Any) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def tables(tmp: Path, name: str, method: str, judged: Path, *args: Any) -> dict[str, bytes]:
    """The leaderboard and per-topic bytes of `score` under each profile."""
    out = {}
    for profile in PROFILES:
        board, per_topic = tmp / f"{name}.{profile}.tsv", tmp / f"{name}.{profile}.pt.tsv"
        invoke("score", "--method", method, judged, *args, "-o", board, "--per-topic",
               per_topic, "--profile", profile)
        out[profile] = board.read_bytes() + per_topic.read_bytes()
    return out


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample 2026 track evaluated at the mock assessor (nuggets, support with every
    citation, rubrics) and its runs' battles in both orders."""
    out = tmp_path_factory.mktemp("rag26")
    invoke("evaluate", "--track", RAG26 / "track.toml", "--assessor", "mock", "--no-cache",
           "-o", out)
    invoke("battles", *[a for run in RUNS for a in ("--run", run)], "--assessor", "mock",
           "--no-cache", "-o", out / "battles")
    return out


CASES = {  # method: (its judgments in the evaluate folder, its settings, its key)
    "nuggets": ("nuggets/assessments", [], "nuggets/nuggets.jsonl"),
    "support": ("support/support", ["--set", "citations=all"], None),
    "rubrics": ("rubrics/rubrics", [], RAG26 / "rubrics.jsonl"),
    "battles": ("battles", [], None),
}


@pytest.mark.parametrize("method", list(CASES))
def test_judgments_round_trip_through_ragdolls_shapes(evaluated: Path, tmp_path: Path,
                                                      method: str) -> None:
    folder, settings, key = CASES[method]
    keyed = ["--key", evaluated / key] if key is not None else []
    exported = tmp_path / f"{method}.ragdoll.jsonl"
    invoke("export-ragdoll", "--method", method, *settings, evaluated / folder, "-o", exported)
    assert json.loads(exported.read_text().splitlines()[0])  # a line of RAGDoll's shape
    before = tables(tmp_path, "ours", method, evaluated / folder, *settings, *keyed)
    after = tables(tmp_path, "back", method, exported, *settings, *keyed)
    assert before == after


def first_only(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as `citations=first` judges: each object's first citation's pair alone."""
    return [{**r, "sentences": [{**s, "pairs": s["pairs"][:1]} for s in r["sentences"]]}
            for r in records]


@pytest.mark.parametrize("citations", ["all", "first"])
def test_support_with_repeats_and_failures_round_trips(tmp_path: Path, citations: str) -> None:
    """Passages cited twice in an object (judged once), unjudged pairs, an answer with
    nothing judged: RAGDoll's file gives every citation its passage's label, and reads back
    to the same scores."""
    records = support_judgments(11)
    if citations == "first":
        records = first_only(records)
    assert any(len(s["citations"]) > len(s["pairs"]) for r in records for s in r["sentences"])
    judged = write(tmp_path / "judged.jsonl", records)
    exported = tmp_path / "support_assignments.jsonl"
    invoke("export-ragdoll", "--method", "support", "--set", f"citations={citations}", judged,
           "-o", exported)
    rows = [json.loads(x) for x in exported.read_text().splitlines()]
    assert [len(s["citations"]) for r in rows for s in r["sentences"]] == \
        [len(s["citations"]) for r in records for s in r["sentences"]]
    if citations == "first":  # RAGDoll assembles first-citation judgments with "-1" after
        assert {c["support"] for r in rows for s in r["sentences"]
                for c in s["citations"][1:]} == {"-1"}
    args = ["--set", f"citations={citations}"]
    assert tables(tmp_path, "ours", "support", judged, *args) == \
        tables(tmp_path, "back", "support", exported, *args)


# --- RAGDoll's arena judgments ---------------------------------------------------------------

def arena_row(qid: str, a: str, b: str, verdict: str | None, shown: str | None = None,
              status: str = "completed") -> dict[str, Any]:
    """A judgment line as RAGDoll's arena writes it (`shown`: the run shown as A)."""
    first = shown or a
    second = b if first == a else a
    preferred = {"A": first, "B": second}.get(verdict or "")
    return {"task_id": f"arena:{a}:{b}:{qid}", "qid": qid, "query": "q", "pair": [a, b],
            "assistant_a_run_id": first, "assistant_b_run_id": second,
            "judge_verdict": verdict, "preferred_run_id": preferred, "status": status,
            "error": None if status == "completed" else "could not parse arena verdict"}


def test_ragdolls_arena_judgments_are_counted_as_it_counts_them(tmp_path: Path) -> None:
    """RAGDoll's tests/test_arena.py `test_pairwise_and_arena_ranking` (a beats b once and
    ties once, a beats c, b beats c) and `test_tie_verdicts_count_as_ties` (both tie
    spellings), with a failed row its resumed arena retried and one it never did."""
    rows = [arena_row("q1", "a", "b", None, status="failed"),
            arena_row("q2", "a", "b", "Tie"),
            arena_row("q1", "a", "c", "B", shown="c"),  # c shown first, a preferred
            arena_row("q1", "b", "c", "A"),
            arena_row("q1", "a", "b", "A"),  # the retry of the first row, completed
            arena_row("q3", "a", "b", "Tie (Both Bad)"),
            arena_row("q4", "b", "c", None, status="failed")]  # never retried
    path = write(tmp_path / "judgments.jsonl", rows)
    table = score_paths(make_method("battles"), [path])
    counts = {run: (m["battles"], m["win_rate"]) for run, m in table.means.items()}
    # a: won q1 vs b, tied q2 and q3 vs b, won vs c: (2 + 2 * 0.5) / 4
    assert counts == {"a": (4, 0.75), "b": (4, (0 + 2 * 0.5 + 1) / 4), "c": (2, 0.0)}
    assert table.left_out["answers with nothing judged"] == 1  # q4's failed row
    output = invoke("score", "--method", "battles", path, "--profile", "ragdoll")
    assert "score --method battles (profile ragdoll): 3 runs" in output


def test_a_task_completed_twice_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "judgments.jsonl", [arena_row("q1", "a", "b", "A"),
                                               arena_row("q1", "a", "b", "B")])
    result = CliRunner().invoke(cli, ["score", "--method", "battles", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{path}:2: task 'arena:a:b:q1' completed twice (also on line 1)" in result.output


def ragdoll_first(seed: int, qid: str, a: str, b: str) -> str:
    """The run RAGDoll shows first, from its definition."""
    first, second = sorted((a, b))
    bit = hashlib.sha256(f"{seed}\x00{first}\x00{second}\x00{qid}".encode()).digest()[0] % 2
    return first if bit == 0 else second


def test_battles_under_the_ragdoll_profile_show_ragdolls_order(tmp_path: Path) -> None:
    runs = [a for run in RUNS for a in ("--run", run)]
    invoke("battles", *runs, "--assessor", "mock", "--no-cache", "-o", tmp_path / "rd",
           "--profile", "ragdoll")
    invoke("battles", *runs, "--assessor", "mock", "--no-cache", "-o", tmp_path / "gl")
    battles = [json.loads(x) for x in (tmp_path / "rd" / "battles.jsonl").read_text()
               .splitlines()]
    assert len(battles) == 2
    for battle in battles:
        assert [o["first"] for o in battle["orders"]] == [
            ragdoll_first(13, battle["qid"], battle["run_a"], battle["run_b"])]
        assert battle["provenance"]["config"]["profile"] == "ragdoll"
        assert battle["provenance"]["config"]["both_orders"] is False
    default = [json.loads(x) for x in (tmp_path / "gl" / "battles.jsonl").read_text()
               .splitlines()]
    assert all(len(b["orders"]) == 2 and "profile" not in b["provenance"]["config"]
               for b in default)


# --- keys and runs --------------------------------------------------------------------------

def test_keys_and_runs_carry_the_topic_at_the_top_level(evaluated: Path, tmp_path: Path
                                                        ) -> None:
    """RAGDoll joins answers to nuggets and rubrics by a top-level qid/topic_id (trec_io.py
    `_qid`); a 2026 run keeps its narrative id under `metadata`."""
    key = tmp_path / "nuggets.ragdoll.jsonl"
    invoke("export-ragdoll", "--method", "nuggets", "--key", evaluated / "nuggets" /
           "nuggets.jsonl", "-o", key)
    ours = [json.loads(x) for x in (evaluated / "nuggets" / "nuggets.jsonl").read_text()
            .splitlines()]
    for line, mine in zip((json.loads(x) for x in key.read_text().splitlines()), ours,
                          strict=True):
        assert line["qid"] == line["topic_id"] == mine["qid"]
        assert isinstance(line["query"], str) and line["query"]
        assert [n["text"] for n in line["nuggets"]] == [n["text"] for n in mine["nuggets"]]
    folder = tmp_path / "answers"
    invoke("export-ragdoll", *[a for run in RUNS for a in ("--run", run)], "-o", folder)
    for run in RUNS:
        given = [json.loads(x) for x in run.read_text().splitlines()]
        written = [json.loads(x) for x in
                   (folder / f"{given[0]['metadata']['run_id']}.jsonl").read_text().splitlines()]
        assert [w["topic_id"] for w in written] == [w["qid"] for w in written] == \
            [g["metadata"]["narrative_id"] for g in given]
        assert [w["run_id"] for w in written] == [g["metadata"]["run_id"] for g in given]
        assert [[s["text"] for s in w["answer"]] for w in written] == \
            [[s["text"] for s in g["answer"]] for g in given]


def test_report_reads_ragdolls_support_file_under_its_profile(tmp_path: Path) -> None:
    """`report` takes RAGDoll's support assignments as judgments, and its page says which
    profile scored them; its leaderboard is `score`'s."""
    records = support_judgments(3)
    judged = write(tmp_path / "judged.jsonl", records)
    exported = tmp_path / "support_assignments.jsonl"
    invoke("export-ragdoll", "--method", "support", "--set", "citations=all", judged, "-o",
           exported)
    invoke("report", "--method", "support", "--set", "citations=all", exported, "--profile",
           "ragdoll", "-o", tmp_path / "report", "--no-pages")
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "scored under the ragdoll profile: castorini RAGDoll" in page
    table = score_paths(make_method("support", {"citations": "all"}, "ragdoll"), [exported])
    best = max(table.means, key=lambda r: table.means[r]["support_recall"])
    board = (tmp_path / "report" / "leaderboard.md").read_text(encoding="utf-8")
    assert f"{table.means[best]['support_recall']:.4f}" in board


def test_a_tracks_profile_and_evaluates_option(tmp_path: Path) -> None:
    """`profile = "ragdoll"` in a track scores every method so (named in each table's
    provenance); evaluate's --profile wins."""
    track = tmp_path / "rag26"
    shutil.copytree(RAG26, track)
    toml = track / "track.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'name = "rag26"', 'name = "rag26"\nprofile = "ragdoll"'), encoding="utf-8")
    for flags, expected in (([], "ragdoll"), (["--profile", "guideline"], "guideline")):
        out = tmp_path / expected
        invoke("evaluate", "--track", toml, "--assessor", "mock", "-o", out, *flags)
        for table in (out / "leaderboard.tsv", out / "support" / "leaderboard.tsv"):
            sidecar = json.loads(table.with_name(table.name + ".provenance.json").read_text())
            assert sidecar["profile"] == expected
    ours = {name: (tmp_path / name / "support" / "per_topic.tsv").read_text()
            for name in ("ragdoll", "guideline")}
    assert ours["ragdoll"] != ours["guideline"]
