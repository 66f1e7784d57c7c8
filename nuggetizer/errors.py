"""Errors the toolkit raises on purpose; the CLI turns each into one line and an exit code."""

from __future__ import annotations

from pathlib import Path


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


class AssessorError(NuggetizerError):
    """The LLM could not be reached or refused the request after the allowed retries."""

    exit_code = 1


class Interrupted(NuggetizerError):
    """Ctrl-C: the step stopped sending and let the calls in flight finish (cli/interrupt.py);
    its finished units and what it spent are kept."""

    exit_code = 130


class NothingJudgedError(NuggetizerError):
    """Judgments were read and not one item of them was judged (e.g. a server that never
    answered): there is no score to write."""

    exit_code = 1


def first_error(exc: BaseException) -> NuggetizerError | None:
    """The toolkit error inside `exc`, looking through exception groups (asyncio.TaskGroup)."""
    if isinstance(exc, NuggetizerError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = first_error(inner)
            if found is not None:
                return found
    return None
