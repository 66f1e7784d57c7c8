"""The guide runs as written: every ```sh block of the tutorials and how-to pages is run, in
page order, in one shell session per page (variables and exports carry from block to block, as
in a reader's terminal), with the shared data (../shared/data) where the page asks for the
track's files and the emulator (one server for the session) as the page's LLM server: an
`openai:` assessor reaches it through $OPENAI_BASE_URL. A block a test cannot run says why
(`<!-- not-run: ... -->`) and is skipped with that reason; the terminal summary counts, per
page, the blocks run and skipped.

Then each tutorial's dry runs: every command of its blocks that takes `--dry-run` run with it,
with no API key in the environment and an LLM server that cannot be reached (a dry run calls
nothing and needs no key)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from guide_pages import RESULTS, ROOT, Page, Step, logical_lines, pages
from shared_data import SHARED_DATA

from nuggetizer import testing
from nuggetizer.cli import cli
from nuggetizer.names import SERVE_MODULES, WORKBENCH_MODULES

PAGES = pages()
BLOCK_SECONDS = 600
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there
# the shell's own variables, never carried from block to block
SHELL_OWN = re.compile(r"^declare -[-a-zA-Z]*[r][-a-zA-Z]* |^declare -[-a-zA-Z]* (BASH\w*|"
                       r"FUNCNAME|PIPESTATUS|SHLVL|_|PWD|OLDPWD|RANDOM|SRANDOM|SECONDS|LINENO|"
                       r"HISTCMD|EPOCH\w+|GROUPS|DIRSTACK|COMP_WORDBREAKS|OPTIND|OPTARG|IFS|"
                       r"PS\d|SHELLOPTS|BASHOPTS|UID|EUID|PPID)=")


@dataclass
class Session:
    """One page's terminal: its folder, the shell state between blocks, what ran."""

    page: Page
    folder: Path
    env: dict[str, str]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    dry: list[str] = field(default_factory=list)
    failed: str | None = None
    groups: list[int] = field(default_factory=list)

    @property
    def state(self) -> Path:
        return self.folder / ".guide-state"

    def run(self, code: str, *, env: dict[str, str] | None = None, save: bool = True
            ) -> subprocess.CompletedProcess[str]:
        """`code` in bash (-e, pipefail) after the state the earlier blocks left (their
        variables and functions); the state saved again when `save`. The block's processes
        are a group of their own, ended with the page (a server a block starts in the
        background)."""
        state = shlex.quote(str(self.state))
        script = "\n".join([
            f"[ -f {state} ] && source {state}",
            f"[ -f {state}.functions ] && source {state}.functions",
            f"cd {shlex.quote(str(self.folder))}",
            "set -e -o pipefail", code,
            *([f"declare -p > {state}.all", f"declare -f > {state}.functions"] if save
              else [])])
        process = subprocess.Popen(["bash", "-c", script], cwd=self.folder,
                                   env=env or self.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        self.groups.append(process.pid)
        try:
            out, _ = process.communicate(timeout=BLOCK_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
        if save and process.returncode == 0:
            kept = [line for line in (self.folder / ".guide-state.all").read_text(
                encoding="utf-8").splitlines() if line.startswith("declare ")
                and not SHELL_OWN.match(line)]
            self.state.write_text("\n".join(kept) + "\n", encoding="utf-8")
        return subprocess.CompletedProcess(script, process.returncode, out)

    def close(self) -> None:
        for code in self.page.teardown:
            self.run(code, save=False)
        for group in self.groups:
            try:
                os.killpg(group, signal.SIGTERM)
            except ProcessLookupError:
                continue


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The emulator, one for every page of the session."""
    with testing.emulator(tmp_path_factory.mktemp("emulator") / "requests.jsonl") as url:
        yield url


@pytest.fixture(scope="session")
def sessions(tmp_path_factory: pytest.TempPathFactory, llm_server: str
             ) -> Iterator[dict[str, Session]]:
    made: dict[str, Session] = {}
    root = tmp_path_factory.mktemp("guide")
    for page in PAGES:
        folder = root / page.name.replace("/", "-").removesuffix(".md")
        folder.mkdir()
        env = {"PATH": f"{Path(sys.executable).parent}:{SYSTEM_PATH}",
               "HOME": str(folder / ".home"), "XDG_CACHE_HOME": str(folder / ".cache"),
               "NUGGETIZER_CACHE": str(folder / ".cache" / "llm-cache.sqlite"),
               "OPENAI_BASE_URL": llm_server, "NUGGETIZER_PROGRESS_INTERVAL": "0",
               "SHARED_DATA": str(SHARED_DATA), "CHECKOUT": str(ROOT), "LANG": "C.UTF-8",
               "PORT": str(free_port()), "COLUMNS": "100"}
        made[page.name] = RESULTS[page.name] = Session(page, folder, env)
    yield made
    for session in made.values():
        session.close()


def _says(step: Step, done: subprocess.CompletedProcess[str]) -> str:
    return f"{step.name} exited {done.returncode}:\n{step.code}\n--- output ---\n" \
        f"{done.stdout[-4000:]}"


STEPS = [(page, step) for page in PAGES for step in page.steps]
# what `nuggetizer serve` and `nuggetizer workbench` import (the lowest-versions environment,
# `make test-min`, installs neither extra)
EXTRAS = {"serve": SERVE_MODULES, "workbench": WORKBENCH_MODULES}


def missing_extras(page: Page) -> list[str]:
    """The extras a page's commands need (`nuggetizer serve`, `nuggetizer workbench`,
    `--workbench`) that this environment lacks."""
    text = "\n".join(step.code for step in page.steps)
    wanted = [e for e in EXTRAS if re.search(rf"nuggetizer {e}\b|--{e}\b", text)]
    return [e for e in wanted if any(importlib.util.find_spec(m) is None for m in EXTRAS[e])]


@pytest.mark.parametrize(("page", "step"), STEPS, ids=[s.name for _, s in STEPS])
def test_the_guide_runs_as_written(page: Page, step: Step, sessions: dict[str, Session]
                                   ) -> None:
    session = sessions[page.name]
    if step.error is not None:
        session.failed = step.name
        pytest.fail(step.error)
    if missing := missing_extras(page):
        pytest.skip(f"the page needs the {', '.join(missing)} extra, not installed here")
    if step.skip is not None:
        session.skipped.append(f"{step.name}: {step.skip}")
        pytest.skip(f"not-run: {step.skip}")
    if session.failed is not None:
        pytest.fail(f"not run: an earlier step of the page failed ({session.failed})")
    done = session.run(step.code)
    if done.returncode != 0:
        session.failed = step.name
    assert done.returncode == 0, _says(step, done)
    if not step.setup:
        session.ran.append(step.name)


def dry_commands() -> frozenset[str]:
    """The commands that take --dry-run."""
    return frozenset(name for name in cli.commands if any(
        "--dry-run" in p.opts for p in cli.commands[name].get_params(click.Context(cli))))


def assigns_only(line: str) -> bool:
    """Whether the shell line only sets variables (`A=1`, `export A=1 B=2`), not a command run
    with variables in its environment (`A=1 nuggetizer ...`), which a dry run does not repeat."""
    try:
        words = shlex.split(line)
    except ValueError:  # quotes that open on this line and close on another: a command
        return False
    if words and words[0] == "export":
        words = words[1:]
    return bool(words) and all(re.match(r"^[A-Za-z_]\w*=", word) for word in words)


def dry_script(page: Page, dry: frozenset[str]) -> list[str]:
    """The commands of the page's blocks that take --dry-run, each with it (added where the
    block does not give it), after the variables the blocks set before it (API keys aside)."""
    found: list[str] = []
    kept: list[str] = []
    for step in page.blocks:
        if step.skip is not None:
            continue
        for line in logical_lines(step.code):
            words = line.split()
            if assigns_only(line) and "API_KEY" not in line:
                kept.append(line)
            elif words[0] == "nuggetizer" and len(words) > 1 and words[1] in dry:
                command = line if "--dry-run" in words else f"{line} --dry-run"
                found.append("\n".join([*kept, command]))
    return found


TUTORIALS = [page for page in PAGES if page.tutorial]


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_the_tutorials_dry_runs_need_no_key(page: Page, sessions: dict[str, Session],
                                            tmp_path: Path) -> None:
    """After the page ran: each of its LLM commands as a dry run, no API key, no server."""
    session = sessions[page.name]
    if missing := missing_extras(page):
        pytest.skip(f"the page needs the {', '.join(missing)} extra, not installed here")
    if session.failed is not None:
        pytest.fail(f"the page failed at {session.failed}: its dry runs are not tried")
    scripts = dry_script(page, dry_commands())
    if not scripts:
        pytest.skip(f"{page.name} runs no command that takes --dry-run (its LLM calls go "
                    "through a server it starts)")
    env = {k: v for k, v in session.env.items() if not k.endswith("API_KEY")}
    env.update(OPENAI_BASE_URL=UNREACHABLE, NUGGETIZER_CACHE=str(tmp_path / "empty.sqlite"),
               NUGGETIZER_MAX_RETRIES="0", NUGGETIZER_RETRY_BUDGET="1")
    for script in scripts:
        done = session.run("unset OPENAI_API_KEY\n" + script, env=env, save=False)
        assert done.returncode == 0, f"{page.name}: the dry run failed:\n{script}\n" \
            f"--- output ---\n{done.stdout[-4000:]}"
        assert "dry run " in done.stdout, done.stdout[-2000:]
        assert "no API key" not in done.stdout
        session.dry.append(script.splitlines()[-1])
