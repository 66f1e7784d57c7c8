"""Errors the toolkit raises on purpose; the CLI turns each into one line and an exit code."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TypeVar

E = TypeVar("E", bound=BaseException)

# The one table of exit codes, for every command (shown in each --help and in the guide).
# Warnings never change the exit code, unless the command is given --strict.
EXIT_CODES: dict[int, str] = {
    0: "done (warnings, if any, printed on stderr)",
    1: "the work could not be finished: the LLM did not answer, an output could not be "
       "written, nothing was judged, or --strict and there were warnings (finished work is "
       "kept: rerun to resume)",
    2: "bad usage or input: an option, a track config, an input file (the line says which "
       "and how to fix it); nothing was spent",
    130: "interrupted (Ctrl-C): finished work is kept; rerun to resume",
}
EXIT_WARNINGS = 1  # --strict, and there were warnings


class NuggetizerError(Exception):
    """Base class: a problem the user can fix; printed without a traceback."""

    exit_code = 2


class InputError(NuggetizerError):
    """A bad input file: names the file, the 1-based line (when known) and what was expected."""

    def __init__(self, path: str | Path | None, line: int | None, message: str) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


class ConfigError(NuggetizerError):
    """A bad option, assessor spec or track config."""


class ArgumentError(ConfigError, TypeError):
    """A Python API call given the wrong kind of argument (nuggetizer/api_args.py): names the
    argument, what it expected and what it got; a TypeError too, as Python's own would be."""


# What an OSError on writing means, for the line that says it.
WRITE_FAULTS = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EDQUOT: "the disk quota is used up: free some space",
    errno.EFBIG: "the file is over the size the system allows",
    errno.EIO: "the disk refused the write: free some space, or check the disk",
    errno.EROFS: "the file system is read-only: write the output elsewhere (-o)",
    errno.EACCES: "no permission to write there: make the folder writable or write "
                  "elsewhere (-o)",
    errno.EPERM: "the system does not allow writing there: write elsewhere (-o)",
    errno.ENOTDIR: "a part of the path is a file, not a folder: write elsewhere (-o)",
}
KEPT = ("the work finished so far is kept (journals *.partial beside the outputs, and the LLM "
        "cache): rerun the same command to resume")


class OutputError(NuggetizerError):
    """An output could not be written (a full disk, a read-only folder): names the file or
    folder and the fix; what was finished is kept for a resume, so the exit code is 1."""

    exit_code = 1

    def __init__(self, path: str | Path | None, exc: OSError) -> None:
        self.path = str(path or exc.filename or "")
        self.errno = exc.errno
        why = exc.strerror or str(exc)
        fix = WRITE_FAULTS.get(exc.errno or 0, "")
        super().__init__(f"cannot write {self.path}: {why}{f' ({fix})' if fix else ''}; {KEPT}")

    def __reduce__(self) -> tuple:
        """Rebuilt from what it was made of (raised in a child process, re-raised here)."""
        return (OutputError, (self.path, OSError(self.errno, self.args[0])))


def write_fault(exc: BaseException) -> OutputError | None:
    """An OSError only writing can meet (a full disk, a read-only file system) inside `exc`,
    as an OutputError; None when there is none."""
    found = first_of(exc, OSError)
    if found is not None and found.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG,
                                             errno.EROFS):
        return OutputError(None, found)
    return None


class AssessorError(NuggetizerError):
    """The LLM could not be reached or refused the request after the allowed retries."""

    exit_code = 1


class Interrupted(NuggetizerError):
    """Ctrl-C: the step stopped sending and let the calls in flight finish (run/interrupt.py);
    its finished units and what it spent are kept."""

    exit_code = 130


class NothingJudgedError(NuggetizerError):
    """Judgments were read and not one item of them was judged (e.g. a server that never
    answered): there is no score to write."""

    exit_code = 1


def first_of(exc: BaseException, kind: type[E]) -> E | None:
    """The exception of `kind` inside `exc`, looking through exception groups
    (asyncio.TaskGroup)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = first_of(inner, kind)
            if found is not None:
                return found
    return None


def first_error(exc: BaseException) -> NuggetizerError | None:
    """The toolkit error inside `exc`, looking through exception groups (asyncio.TaskGroup)."""
    return first_of(exc, NuggetizerError)
