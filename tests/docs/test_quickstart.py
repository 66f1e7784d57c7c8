"""The README's quickstart, run exactly as it is written (its commands read from the README) in a
fresh virtual environment with the package's wheel built from this checkout and no extras:
it gets a leaderboard. The one change: `pip install trec-nuggetizer` is given the wheel as a
direct reference of that name, as the distribution is not taken from an index here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
INSTALL = "pip install trec-nuggetizer"


def quickstart() -> list[str]:
    """The command lines of the first ```sh block under the README's `## Quickstart`."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the quickstart has no ```sh block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines()
            if line.strip() and not line.startswith("#")]


def test_the_quickstart_is_short_and_installs_the_package_plainly() -> None:
    commands = quickstart()
    assert commands[1] == INSTALL
    assert any(c.startswith("nuggetizer evaluate ") for c in commands)
    assert README.stat().st_size < 10_000


@pytest.mark.slow
def test_the_readme_quickstart_gets_a_leaderboard_from_the_wheel(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(dist), str(ROOT)], check=True, capture_output=True)
    wheel = next(dist.glob("trec_nuggetizer-*.whl"))
    work = tmp_path / "user"
    work.mkdir()
    script = "\n".join(c.replace(INSTALL, f"pip install 'trec-nuggetizer @ {wheel.as_uri()}'")
                       for c in quickstart())
    env = {**{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
           "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(work),
           "PIP_CONSTRAINT": str(ROOT / "constraints.txt"), "LANG": "C.UTF-8"}
    start = time.monotonic()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1200)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"quickstart: fresh venv to leaderboard in {took:.0f} s")
    installed = subprocess.run([str(work / ".venv/bin/python"), "-m", "pip", "list"],
                               capture_output=True, text=True, check=True).stdout
    assert "llama_cpp_python" not in installed.replace("-", "_")  # no extras
    board = (work / "out/first/leaderboard.tsv").read_text(encoding="utf-8").splitlines()
    assert board[0].split("\t")[:2] == ["run_id", "V_strict"]
    assert sorted(line.split("\t")[0] for line in board[1:]) == [
        "sample-good", "sample-middling", "sample-poor"]
    assert "sample-good" in done.stdout and "  ok  assessor mock answers" in done.stdout
