"""The `local` backend runs llama.cpp in a child process, loaded with its extra buffer types off
(their AMX kernels segfault in decode on some Xeons): a native crash of llama.cpp is an error
that stops the run with one line, never a silent death of the command."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nuggetizer.assessors import (
    Assessor,
    Completion,
    LlamaCppBackend,
    LlamaCppCrashed,
    PermanentError,
)
from nuggetizer.assessors.base import RefusedError, Request
from nuggetizer.errors import AssessorError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
QUESTION = Request(
    messages=(("system", "You are a helpful assistant."),
              ("user", "Name three colours of the rainbow, in one sentence.")),
    max_tokens=24,
)
LIST = Request(  # a schema that makes the model write for a while
    messages=(("user", "List ten animals, each with a long description."),),
    schema={"type": "array", "minItems": 10, "maxItems": 10,
            "items": {"type": "string", "minLength": 40}},
    max_tokens=400,
)


def gone(pid: int) -> bool:
    """True when no process `pid` exists any more (it exited and was reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
def test_the_model_loads_with_extra_buffer_types_off_and_decodes_a_long_prompt(
    gguf_path: Path,
) -> None:
    backend = LlamaCppBackend(gguf_path)
    assessor = Assessor(backend, cache=None)

    async def go() -> tuple[Completion, int | None]:
        async with assessor:
            completion = await assessor.complete(QUESTION)
            return completion, backend.pid

    completion, pid = asyncio.run(go())
    assert backend.safe_params == {"use_extra_bufts": False}
    assert pid is not None and pid != os.getpid()
    assert completion.text.strip() and not completion.cached
    assert completion.prompt_tokens > 1 and completion.completion_tokens > 1
    assert completion.model == gguf_path.name and completion.finish_reason in ("stop", "length")
    assert backend.pid is None and gone(pid)


@pytest.mark.slow
def test_errors_of_a_call_come_back_as_the_same_classes(gguf_path: Path) -> None:
    backend = LlamaCppBackend(gguf_path, n_ctx=128)
    too_long = Request(messages=(("user", "word " * 400),), max_tokens=8)
    bad_schema = Request(messages=QUESTION.messages, max_tokens=8,
                         schema={"type": "array", "items": {"$ref": "#/$defs/missing"}})

    async def go() -> Completion:
        # a prompt over n_ctx is that item's content: refused (the item unjudged, the run on)
        with pytest.raises(RefusedError, match="context window"):
            await backend.complete(too_long)
        parsed = await Assessor(backend, None).ask(too_long.messages, str, max_tokens=8)
        assert parsed.value is None and "context window" in (parsed.error or "")
        # a schema it cannot turn into a grammar stops the run
        with pytest.raises(PermanentError, match="grammar") as raised:
            await backend.complete(bad_schema)
        assert not isinstance(raised.value, RefusedError)
        try:
            return await backend.complete(QUESTION)
        finally:
            await backend.aclose()

    assert asyncio.run(go()).completion_tokens > 0  # the child survived both


def test_a_file_that_is_not_a_model_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 64)
    backend = LlamaCppBackend(path, start_timeout=120.0)
    started = time.monotonic()
    with pytest.raises(PermanentError, match=r"cannot load .*broken\.gguf"):
        asyncio.run(backend.complete(QUESTION))
    assert time.monotonic() - started < 120.0
    asyncio.run(backend.aclose())


@pytest.mark.slow
def test_a_crash_in_a_call_raises_an_assessor_error_and_is_not_restarted(
    gguf_path: Path,
) -> None:
    backend = LlamaCppBackend(gguf_path)

    async def go() -> tuple[int, list[BaseException]]:
        await backend.complete(QUESTION)
        pid = backend.pid
        assert pid is not None
        call = asyncio.create_task(backend.complete(LIST))
        await asyncio.sleep(0.5)
        os.kill(pid, signal.SIGSEGV)
        errors = [r for r in await asyncio.gather(call, return_exceptions=True)
                  if isinstance(r, BaseException)]
        with pytest.raises(LlamaCppCrashed) as again:
            await backend.complete(QUESTION)
        await backend.aclose()
        return pid, [*errors, again.value]

    pid, errors = asyncio.run(go())
    assert all(isinstance(e, LlamaCppCrashed) for e in errors)
    crash = str(errors[0])
    assert isinstance(errors[0], AssessorError) and errors[0].exit_code == 1
    assert "local assessor" in crash and str(gguf_path) in crash
    assert "crashed with SIGSEGV during a call" in crash and "GGML_NATIVE=OFF" in crash
    assert "\n" not in crash
    assert str(errors[-1]) == crash  # the same error, no new child
    assert backend.pid is None and gone(pid)


def llama_child(parent: int, timeout: float = 30.0) -> int:
    """The pid of the llama.cpp child process of `parent`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"llamacpp_child" in cmdline:
                return int(entry.name)
        time.sleep(0.2)
    raise AssertionError(f"no llama.cpp child process under {parent}")


def complete_lines(path: Path) -> list[str]:
    """The whole lines of a journal (a torn last line left out)."""
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines(keepends=True) if line.endswith("\n")]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the child in /proc")
def test_a_crash_of_the_child_stops_the_cli_with_one_error_line_and_a_resumable_journal(
    gguf_path: Path, tmp_path: Path
) -> None:
    out = tmp_path / "nuggets.jsonl"
    journal = out.with_name("nuggets.jsonl.partial")
    command = [
        sys.executable, "-m", "nuggetizer", "nuggetize",
        "--topics", str(SAMPLE / "topics.tsv"), "--qrels", str(REPO / "qrels" / "sample.qrels"),
        "--corpus", str(SAMPLE / "corpus.jsonl"), "--assessor", "local",
        "-o", str(out), "--cache", str(tmp_path / "cache.sqlite"),
    ]
    with open(tmp_path / "stderr.txt", "w") as err:
        cli = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
    try:
        deadline = time.monotonic() + 900
        while not complete_lines(journal):
            assert cli.poll() is None, "the command ended before a topic was journalled"
            assert time.monotonic() < deadline, "no topic journalled within 900 s"
            time.sleep(0.2)
        child = llama_child(cli.pid)
        before = len(complete_lines(journal))
        assert cli.poll() is None, "the command ended before the crash could be caused"
        os.kill(child, signal.SIGSEGV)
        returncode = cli.wait(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert returncode == 1, stderr
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert "local assessor (llama.cpp" in errors[0] and "crashed with SIGSEGV" in errors[0]
    assert gone(child)
    lines = journal.read_text().splitlines(keepends=True)
    assert all(line.endswith("\n") for line in lines)
    assert len([json.loads(line) for line in lines]) >= before
    assert not out.exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=REPO)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    resumed = re.search(r"\((\d+) resumed\)", again.stderr)
    assert resumed is not None and int(resumed.group(1)) >= before, again.stderr
    assert not journal.exists()
    assert [json.loads(line)["qid"] for line in out.read_text().splitlines()] == [
        "sample-1", "sample-2", "sample-3", "sample-4"]
