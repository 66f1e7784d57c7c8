"""Measures declared once (interface/declare.py): the score engine takes a missing topic's value
and the mean over all or answered topics from each Measure, and `nuggetizer methods` describes
every registered method from its declarations alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.interface import (
    REGISTRY,
    AnswerKeyMethod,
    Outcome,
    Target,
    method_names,
    setting,
    settings_of,
)
from nuggetizer.measures import Measure
from nuggetizer.scoring import score_paths

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


@dataclass(frozen=True)
class CountConfig:
    """Nothing to set but a threshold."""

    least: int = setting(1, "smallest count that scores a hit")


class CountMethod(AnswerKeyMethod):
    """Scores a judgment's `count`: three measures, one of each rule for a missing topic."""

    name = "count-test"
    prompts = ()
    measures = (Measure("hit", "whether the count reaches the threshold"),
                Measure("size", "the count itself", missing=None),
                Measure("half", "the count halved", missing=0.5))
    primary = "hit"
    targets = ("answer",)
    config_type = CountConfig

    async def judge(self, assessor: Any, key: Any, target: Target) -> Outcome:
        raise NotImplementedError  # scored from the file the test writes, never judged

    def score(self, key: Any, judgment: Any, pool: Sequence[Any]) -> dict[str, float]:
        count = judgment["count"]
        return {"hit": float(count >= self.config.least), "size": float(count),
                "half": count / 2}


def test_the_base_class_derives_names_and_rules_from_the_measures() -> None:
    assert CountMethod.measures == ("hit", "size", "half")
    assert CountMethod.answered_only == frozenset({"size"})
    assert [m.missing for m in CountMethod.declared] == [0.0, None, 0.5]


def test_each_measure_takes_its_declared_value_where_a_topic_is_missing(tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps(r) + "\n" for r in [
        {"run_id": "a", "qid": "t1", "count": 4},
        {"run_id": "a", "qid": "t2", "count": 0},
        {"run_id": "b", "qid": "t1", "count": 2},
    ]))
    keys = {"t1": {}, "t2": {}, "t3": {}}  # t3: answered by no run
    table = score_paths(CountMethod(), [judged], keys)
    assert table.per_topic["a"]["t3"] == {"hit": 0.0, "half": 0.5}  # no `size`: left out
    assert table.means["a"] == {"hit": pytest.approx(1 / 3), "size": pytest.approx(2.0),
                                "half": pytest.approx((2.0 + 0.0 + 0.5) / 3)}
    assert table.means["b"] == {"hit": pytest.approx(1 / 3), "size": pytest.approx(2.0),
                                "half": pytest.approx((1.0 + 0.5 + 0.5) / 3)}
    assert table.missing == {"a": 1, "b": 2}


def test_the_nuggets_length_is_averaged_over_answered_topics(tmp_path: Path) -> None:
    """L is declared missing=None: a run that skips a topic keeps its mean length, while its
    V_strict counts the skipped topic as 0."""
    key = tmp_path / "nuggets.jsonl"
    key.write_text("".join(json.dumps({"qid": q, "query": q, "nuggets": [
        {"text": "n1", "importance": "vital"}]}) + "\n" for q in ("t1", "t2")))
    assessed = tmp_path / "assessed.jsonl"
    assessed.write_text(json.dumps({
        "run_id": "r", "qid": "t1", "query": "t1", "answer_text": "one two three four",
        "nuggets": [{"text": "n1", "importance": "vital", "assignment": "support"}]}) + "\n")
    out, per_topic = tmp_path / "board.tsv", tmp_path / "per_topic.tsv"
    result = CliRunner().invoke(cli, ["score", str(assessed), "--nuggets", str(key), "-o",
                                      str(out), "--per-topic", str(per_topic)])
    assert result.exit_code == 0, result.output
    header, row = (line.split("\t") for line in out.read_text().splitlines())
    means = dict(zip(header, row))
    assert means["V_strict"] == "0.5000" and means["L"] == "4.0000"
    rows = {(f[1], f[2]) for f in (line.split("\t") for line in per_topic.read_text()
                                   .splitlines()[1:])}
    assert ("t2", "V_strict") in rows and ("t2", "L") not in rows


def test_the_methods_command_describes_every_declaration() -> None:
    result = CliRunner().invoke(cli, ["methods"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for name in method_names():
        cls = REGISTRY[name]
        assert f"{name}: " in text
        for m in cls.declared:
            assert f"{m.name} {' '.join(m.description.split())}. Rule: {m.rule()}." in text
        for s in settings_of(cls.config_type):
            assert f"{s.name}={s.default!r} ({s.kind}) {' '.join(s.help.split())}." in text
    assert ("Rule: mean over the topics a run answered; descriptive: neither higher nor lower "
            "is better.") in text  # L
    assert "diagnostic: listed only where some judgment gives it" in text  # SN_cov_*
    assert "[--window on nuggetize]" in text and "[--render on nuggetize, assign]" in text


def test_the_methods_command_as_json_and_one_by_name() -> None:
    result = CliRunner().invoke(cli, ["methods", "--json", "support", "nuggets"])
    assert result.exit_code == 0, result.output
    support, nuggets = (json.loads(line) for line in result.output.splitlines())
    assert support["name"] == "support" and not support["needs_key"]
    assert [m["name"] for m in support["measures"]] == ["support_recall", "support_precision"]
    citations = next(s for s in support["settings"] if s["name"] == "citations")
    assert citations["default"] == "first" and citations["choices"] == ["first", "all"]
    length = next(m for m in nuggets["measures"] if m["name"] == "L")
    assert length["missing"] is None and length["answered_only"]
    bad = CliRunner().invoke(cli, ["methods", "no-such"])
    assert bad.exit_code == 2 and "unknown method 'no-such'; known: nuggets" in bad.output


def test_a_plugin_method_is_described_and_listed_under_set() -> None:
    path = os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "NUGGETIZER_METHODS": "keyterms_method", "PYTHONPATH": path}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "nuggetizer", *args], capture_output=True,
                              text=True, timeout=300, cwd=REPO, env=env)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return " ".join(done.stdout.split())

    described = run("methods", "keyterms")
    assert "TermRecall share of the topic's key terms the answer covers." in described
    assert "terms=2 (int) key terms a topic's key holds at most." in described
    assert "keyterms: terms" in run("assign", "--help")
