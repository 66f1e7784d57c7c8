"""The guide built once per test session (mkdocs build --strict into a temp folder), for the
tests that read its pages or open them in a browser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built guide (pages as `page.html`: the offline plugin turns directory URLs off)."""
    pytest.importorskip("mkdocs", reason="the guide's tools (the [docs] extra) are not installed")
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                            str(out)], cwd=ROOT, capture_output=True, text=True,
                           env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Per page of the guide run by test_pages.py: the blocks run and those skipped, why."""
    from guide_pages import RESULTS

    shown = [(name, s) for name, s in RESULTS.items() if s.ran or s.skipped or s.dry]
    if not shown:
        return
    terminalreporter.section("the guide's pages, run as written")
    ran = skipped = dry = 0
    for name, session in shown:
        ran, skipped, dry = ran + len(session.ran), skipped + len(session.skipped), \
            dry + len(session.dry)
        terminalreporter.line(f"{name}: {len(session.ran)} blocks run, {len(session.skipped)} "
                              f"skipped; {len(session.dry)} dry runs without a key")
        for why in session.skipped:
            terminalreporter.line(f"    skipped {why}")
    terminalreporter.line(f"in all: {ran} blocks run, {skipped} skipped, {dry} dry runs, "
                          f"{len(shown)} pages")
