"""CLI options generated from the methods' declared settings (cli/flags.py): the `--set` help
lists every setting of every registered method, and the nuggets flags (--window, --max-nuggets,
--keep, --no-labels, --batch, --render) still reach the same configuration."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from nuggetizer.cli import FlagsCommand, cli, declared_flags
from nuggetizer.errors import ConfigError
from nuggetizer.interface import REGISTRY, method_names, setting, settings_of
from nuggetizer.methods.nuggets import NuggetConfig, NuggetsMethod

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
KEY_INPUTS = ["--topics", str(SAMPLE / "topics.tsv"), "--qrels",
              str(REPO / "qrels" / "sample.qrels"), "--corpus", str(SAMPLE / "corpus.jsonl")]
MOCK = ["--assessor", "mock", "--no-cache"]


def invoke(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def config_of(path: Path) -> dict[str, Any]:
    """The method settings the first record of an output recorded in its provenance."""
    record = json.loads(path.read_text().splitlines()[0])
    return dict(record["provenance"]["config"])


@pytest.mark.parametrize("command", ["nuggetize", "assign", "score"])
def test_the_set_help_lists_every_declared_setting_of_every_method(command: str) -> None:
    result = invoke(command, "--help")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for name in method_names():
        settings = [s.name for s in settings_of(REGISTRY[name].config_type)]
        assert f"{name}: {', '.join(settings)}" in text


def test_each_declared_flag_is_an_option_of_its_commands() -> None:
    for command in ("nuggetize", "assign"):
        text = " ".join(invoke(command, "--help").output.split())
        for s in declared_flags(command):
            assert f"{s.flag} " in text and s.option_help() in text
    nuggetize = " ".join(invoke("nuggetize", "--help").output.split())
    assert "--window INTEGER segments per call [default: 10]" in nuggetize
    assert "--no-labels skip importance and trim (for post-editing)" in nuggetize
    assert "--render [castorini|json]" in nuggetize and "--batch INTEGER" not in nuggetize
    assign = " ".join(invoke("assign", "--help").output.split())
    assert "--batch INTEGER nuggets per call [default: 10]" in assign
    assert "--window INTEGER" not in assign


def test_the_nuggets_flags_reach_the_same_config_as_before(tmp_path: Path) -> None:
    flagged, pairs, plain = (tmp_path / f"{n}.jsonl" for n in ("flagged", "pairs", "plain"))
    result = invoke("nuggetize", *KEY_INPUTS, "-o", flagged, *MOCK, "--window", 3,
                    "--max-nuggets", 6, "--keep", 5, "--no-labels", "--render", "json")
    assert result.exit_code == 0, result.output
    expected = NuggetConfig(window=3, max_nuggets=6, keep=5, label=False, render="json")
    assert config_of(flagged) == {"method": "nuggets", **dataclasses.asdict(expected)}
    same = invoke("nuggetize", *KEY_INPUTS, "-o", pairs, *MOCK, "--set", "window=3", "--set",
                  "max_nuggets=6", "--set", "keep=5", "--set", "label=false", "--set",
                  "render=json")
    assert same.exit_code == 0, same.output
    assert config_of(pairs) == config_of(flagged)
    assert invoke("nuggetize", *KEY_INPUTS, "-o", plain, *MOCK).exit_code == 0
    assert config_of(plain) == {"method": "nuggets", **dataclasses.asdict(NuggetConfig())}
    out = tmp_path / "assessed"
    assigned = invoke("assign", "--run", REPO / "runs" / "sample" / "good.jsonl", "--nuggets",
                      plain, "-o", out, *MOCK, "--batch", 4, "--render", "json")
    assert assigned.exit_code == 0, assigned.output
    config = config_of(next(out.glob("*.jsonl")))
    assert (config["assign_batch"], config["render"], config["window"]) == (4, "json", 10)


def test_a_flag_of_another_method_or_a_bad_choice_is_one_error_line(tmp_path: Path) -> None:
    other = invoke("nuggetize", *KEY_INPUTS, "-o", tmp_path / "k.jsonl", *MOCK,
                   "--method", "kpr", "--keep", 5)
    assert other.exit_code == 2
    assert other.output.strip() == "error: --keep is not an option of --method kpr"
    bad = invoke("nuggetize", *KEY_INPUTS, "-o", tmp_path / "n.jsonl", *MOCK,
                 "--set", "render=xml")
    assert bad.exit_code == 2
    assert "setting render must be castorini or json, got 'xml'" in bad.output
    assert not (tmp_path / "n.jsonl").exists()


@dataclass(frozen=True)
class OwnConfig:
    """Settings with flags of every kind."""

    depth_of: int = setting(3, "levels read", flag="--levels", commands=("probe",))
    quiet: bool = setting(True, "say little", flag="--no-quiet", commands=("probe",),
                          flag_help="say everything")
    mode: str = setting("a", "how", choices=("a", "b"), flag="--mode", commands=("probe",))
    wide: int = setting(1, "not the nuggets' window", flag="--window", commands=("nuggetize",))


class OwnMethod(NuggetsMethod):
    """A method whose settings declare flags."""

    name = "own-test"
    config_type = OwnConfig


def test_declared_flags_become_options_and_clashes_are_named(monkeypatch) -> None:
    monkeypatch.setitem(REGISTRY, "own-test", OwnMethod)
    seen: list[dict[str, Any]] = []
    probe = FlagsCommand("probe", params=[click.Option(["--set", "settings"], multiple=True)],
                         callback=lambda settings, flags: seen.append(flags))
    assert CliRunner().invoke(probe, ["--levels", "7", "--no-quiet", "--mode", "b"]
                              ).exit_code == 0
    assert CliRunner().invoke(probe, []).exit_code == 0
    assert seen == [{"depth_of": 7, "quiet": False, "mode": "b"},
                    {"depth_of": None, "quiet": None, "mode": None}]
    wrong = CliRunner().invoke(probe, ["--mode", "c"])
    assert wrong.exit_code == 2 and "'c' is not one of 'a', 'b'" in wrong.output
    text = " ".join(CliRunner().invoke(probe, ["--help"]).output.split())
    assert "--levels INTEGER levels read [default: 3]" in text
    assert "--no-quiet say everything" in text
    taken = FlagsCommand("probe", params=[click.Option(["--levels"])], callback=print)
    clash = CliRunner().invoke(taken, [])
    assert isinstance(clash.exception, ConfigError)
    assert "declares --levels for its setting depth_of, but probe has that option already" in \
        str(clash.exception)
    with pytest.raises(ConfigError, match=r"methods 'nuggets' and 'own-test' both declare "
                                          r"--window on nuggetize, for different settings "
                                          r"\(window, wide\)"):
        declared_flags("nuggetize")
