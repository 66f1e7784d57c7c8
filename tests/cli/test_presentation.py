"""How the command presents itself: --version, options grouped in --help with the environment
variables beside them and the exit codes, `mock` offered; and `doctor`, which checks what a run
needs (a track's files, the assessor answering, the cache's place) with the exit codes of the
table."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer import __version__, testing
from nuggetizer.cli import cli
from nuggetizer.errors import EXIT_CODES

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_version() -> None:
    shown = subprocess.run([str(Path(sys.executable).parent / "nuggetizer"), "--version"],
                           capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"nuggetizer, version {__version__}"


def test_help_groups_options_shows_variables_and_exit_codes() -> None:
    code, out, _ = run("assign", "--help")
    assert code == 0
    titles = [line[:-1] for line in out.splitlines() if line and not line.startswith(" ")
              and line.endswith(":")]
    assert titles == ["Options", "Method", "Topics", "Dry run and cost", "Assessor (the LLM)",
                      "Exit codes"]
    assessor = out[out.index("Assessor (the LLM):"):out.index("Exit codes:")]
    assert "--reasoning-effort" in assessor and "--window" not in assessor
    flat = " ".join(assessor.split())
    assert "[env var: NUGGETIZER_REASONING_EFFORT]" in flat
    assert "[env var: NUGGETIZER_ASSESSOR]" in flat and "mock[:NAME]" in flat
    assert "[env var: OPENAI_BASE_URL]" in flat
    method = out[out.index("Method:"):out.index("Topics:")]
    assert "--method" in method and "--set" in method
    codes = out[out.index("Exit codes:"):]
    assert all(f"  {code} " in codes for code in EXIT_CODES)
    code, top, _ = run("--help")
    assert "--assessor mock" in top and "doctor" in top and "Exit codes:" in top


def test_doctor_on_the_sample_track_with_mock(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "llm.sqlite"
    code, out, err = run("doctor", "--track", "sample", "--assessor", "mock", "--cache",
                         str(cache))
    assert code == 0, out + err
    assert "  ok  topics: " in out and "(4 topics)" in out
    assert out.count("  ok  run: ") == 3
    assert "  ok  assessor mock answers: answered " in out
    assert f"  ok  cache: {cache} (not made yet; " in out
    assert "doctor: 0 failed" in err
    assert "  ok  track sample: sample: method nuggets\n" in out


def test_doctor_names_every_method_of_a_track_of_several(tmp_path: Path) -> None:
    code, out, _ = run("doctor", "--track", "rag26", "--assessor", "mock", "--no-call",
                       "--cache", str(tmp_path / "c.sqlite"))
    assert code == 0, out
    assert ("  ok  track rag26: rag26: methods nuggets, support, rubrics; relevance graded "
            "first\n") in out


def test_doctor_names_a_missing_file_and_exits_2(tmp_path: Path) -> None:
    track = tmp_path / "track"
    shutil.copytree(ROOT / "tracks" / "sample", track)
    text = (track / "track.toml").read_text(encoding="utf-8")
    assert "poor.jsonl" in text
    (track / "track.toml").write_text(text.replace("poor.jsonl", "gone.jsonl"),
                                      encoding="utf-8")
    code, out, _ = run("doctor", "--track", str(track / "track.toml"), "--assessor", "mock",
                       "--no-call", "--no-cache")
    assert code == 2, out
    assert "fail  run: " in out and "gone.jsonl: not found or not readable" in out
    assert "warn  cache: off" in out


def test_doctor_says_the_server_does_not_answer_and_exits_1(tmp_path: Path) -> None:
    code, out, _ = run("doctor", "--assessor", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                       "--cache", str(tmp_path / "c.sqlite"))
    assert code == 1, out
    assert "fail  assessor openai:m answers: " in out and "127.0.0.1:9" in out


def test_doctor_asks_a_real_server_and_strict_fails_on_warnings(tmp_path: Path) -> None:
    with testing.emulator(tmp_path / "requests.jsonl") as url:
        code, out, _ = run("doctor", "--assessor", "openai:emulated", "--base-url", url,
                           "--cache", str(tmp_path / "c.sqlite"))
        assert code == 0, out
        assert "ok  assessor openai:emulated answers: answered " in out
        code, out, _ = run("doctor", "--assessor", "openai:emulated", "--base-url", url,
                           "--no-cache", "--strict", "--no-call")
        assert code == 1 and "warn  cache: off" in out
    assert len((tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()) == 1


def test_doctor_says_an_openai_assessor_has_no_key_without_asking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, out, _ = run("doctor", "--assessor", "openai:gpt-4o", "--no-call", "--cache",
                       str(tmp_path / "c.sqlite"))
    assert code == 2, out
    assert "fail  assessor openai:gpt-4o key: no API key for openai:gpt-4o" in out
