"""A plan built once runs live, dry or batched (plan/steps.py, run/execute.py): the public
constructors and `execute` on the sample track with the `mock` backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from nuggetizer.assessors import make_assessor
from nuggetizer.cache import Cache
from nuggetizer.errors import ConfigError
from nuggetizer.formats import Wanted, read_runs, read_track_inputs
from nuggetizer.interface import make_method
from nuggetizer.plan import (
    KeySpec,
    PoolSpec,
    assign_plan,
    grade_then_build_plan,
    key_inputs_for,
    load_track,
    make_targets,
    nuggetize_plan,
    wanted_to_build,
    wanted_to_grade,
    wanted_to_judge,
)
from nuggetizer.run.execute import execute


def _assessor(tmp_path: Path):  # a fresh one per run: `execute` closes it
    return make_assessor("mock", cache=Cache(tmp_path / "cache.sqlite"))


def test_one_plan_runs_dry_then_live_then_dry_from_the_cache(tmp_path: Path, capsys) -> None:
    track = load_track("sample")
    method = make_method("nuggets", track.settings("nuggets"))
    read = read_track_inputs(wanted_to_build(method, Wanted(
        topics=track.topics, qrels=track.qrels, corpus=track.corpus)))
    inputs, skipped = key_inputs_for(method, read)
    key = tmp_path / "keys" / "nuggets.jsonl"
    plan = nuggetize_plan(method, inputs, key, skipped)

    execute(plan, _assessor(tmp_path), mode="dry", options={"tokenizer": "chars"})
    first = capsys.readouterr().err
    assert not key.exists() and not (tmp_path / "keys").exists()  # a dry run writes nothing
    assert f"dry run nuggetize --method nuggets ({len(inputs)} topics): " in first
    assert "0 calls the cache holds" in first

    built = execute(plan, _assessor(tmp_path))[0]  # the same plan, live
    assert built.done == len(inputs)
    assert len(key.read_text(encoding="utf-8").splitlines()) == len(inputs)

    execute(plan, _assessor(tmp_path), mode="dry", options={"tokenizer": "chars"})
    again = capsys.readouterr().err
    assert ": 0 calls to make, 0 prompt tokens" in again  # every call the live run made
    assert "0 calls the cache holds" not in again

    keys = method.read_keys(key, False)
    targets = make_targets(method, read_track_inputs(wanted_to_judge([method], Wanted(
        runs=track.runs))))
    judged = tmp_path / "judged"
    summary = execute(assign_plan(method, keys, targets, judged), _assessor(tmp_path))[0]
    answers = sum(len(by_topic) for by_topic in read_runs(track.runs).values())
    assert summary.done == answers
    assert sorted(p.name for p in judged.glob("*.jsonl") if p.name != "usage.json") == sorted(
        f"{run_id}.jsonl" for run_id in targets)


def test_grade_then_build_is_one_plan_of_two_stages(tmp_path: Path, capsys) -> None:
    track = load_track("sample")
    method = make_method("nuggets", track.settings("nuggets"))
    files = Wanted(topics=track.topics, corpus=track.corpus, runs=track.runs)
    spec = PoolSpec(read_track_inputs(wanted_to_grade(files, 20)))
    qrels, key = tmp_path / "graded.qrels", tmp_path / "nuggets.jsonl"
    plan = grade_then_build_plan(spec, KeySpec(method), qrels, key)
    assert [stage.name for stage in plan.stages] == ["relevance", "nuggetize"]

    execute(plan, _assessor(tmp_path), mode="dry", options={"tokenizer": "chars"})
    said = capsys.readouterr().err
    assert "dry run relevance (" in said and "keys depend on grades not made yet" in said
    assert not qrels.exists() and not key.exists()

    graded, built = execute(plan, _assessor(tmp_path))
    assert qrels.exists() and len(graded.assessed.rows) == graded.pool.size
    assert built.done + built.skipped == len(graded.pool.docids)

    with pytest.raises(ConfigError, match="needs --corpus"):
        grade_then_build_plan(PoolSpec(read_track_inputs(Wanted(topics=track.topics,
                                                                runs=track.runs))),
                              KeySpec(method), qrels, key)
