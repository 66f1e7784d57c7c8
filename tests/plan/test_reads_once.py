"""Issue 42: the plan receives its inputs instead of fetching them. Once a track's inputs are
read (formats/track_inputs.py), planning its whole evaluation opens no file: every method's
targets, cited passages, key inputs, graded pool and stages come from the value read. (The
import side of the rule is setup.cfg's `plan-reads-once` contract, checked by .ci/layers.py.)"""

from __future__ import annotations

import builtins
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from nuggetizer.formats import read_track_inputs
from nuggetizer.plan import load_track
from nuggetizer.plan.evaluate import (
    TrackScope,
    evaluate_plan,
    track_methods,
    track_methods_made,
    track_wanted,
)

TRACKS = Path(__file__).resolve().parents[2] / "tracks"


class Quiet:
    """Shows nothing of a scoring (no stage runs here)."""

    def scoring(self, method: Any) -> None: ...

    def scored(self, method: Any, table: Any) -> None: ...

    def combined(self, names: Any, table: Any) -> None: ...

    def failed(self, method: Any, why: str) -> None: ...


@contextmanager
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every file opened inside, by name (builtins.open and io.open, which Path uses)."""
    names: list[str] = []
    real = io.open

    def recording(file: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(str(file))
        return real(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "open", recording)
        patch.setattr(io, "open", recording)
        yield names


@pytest.mark.parametrize("track", ["sample", str(TRACKS / "sample" / "layers.toml"), "rag26"])
def test_planning_a_track_opens_no_file_once_its_inputs_are_read(
        track: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_track(track)
    made = track_methods_made(config)
    with opened(monkeypatch) as reading:
        read = read_track_inputs(track_wanted(config, made))
    assert config.topics is not None and str(config.topics) in reading
    assert config.corpus is not None and reading.count(str(config.corpus)) == 1
    with opened(monkeypatch) as planning:
        scope = TrackScope(config, read, tmp_path / "out", {next(iter(read.topics or {}))})
        methods = track_methods(scope, made)
        evaluation = evaluate_plan(scope, methods, Quiet())
    assert planning == [] and not (tmp_path / "out").exists()
    assert len(evaluation.plan.stages) > len(made)  # keys or judging, and scoring, each
    built = [m for m in methods if m.key is not None and m.given is None]
    if config.relevance is None:  # keys built from the qrels read: their passages' texts
        assert all(one.inputs and all(i.documents for i in one.inputs) for one in built)
