"""The Python API's arguments checked at the door (nuggetizer/api.py): a wrong kind of
argument is an ArgumentError whose sentence names the argument, what it expected and what it
got, rather than an AttributeError deep inside or a silently empty result."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.ensemble import Ensemble
from nuggetizer.errors import ArgumentError
from nuggetizer.interface.base import AnswerKeyMethod

PATH = "a file path (str or pathlib.Path)"


def _got(value: Any) -> str:
    """What was given, for a message: its type, and its value when short."""
    shown = repr(value)
    kind = type(value).__name__
    return f"{kind} {shown}" if len(shown) <= 60 else kind


def _fail(argument: str, expected: str, value: Any, hint: str = "") -> ArgumentError:
    return ArgumentError(f"argument {argument}: expected {expected}, got {_got(value)}"
                         + (f" ({hint})" if hint else ""))


def is_path(value: Any) -> bool:
    """A str or os.PathLike with something in it."""
    return isinstance(value, str | os.PathLike) and bool(str(os.fspath(value)).strip())


def check_method(value: Any, argument: str = "method") -> AnswerKeyMethod:
    """A method object (`api.method(NAME)`)."""
    if isinstance(value, AnswerKeyMethod):
        return value
    hint = f"make one with api.method({value!r})" if isinstance(value, str) else \
        "make one with api.method(NAME); check the order of the arguments"
    raise _fail(argument, "a method such as api.method(\"nuggets\")", value, hint)


def check_assessor(value: Any, argument: str = "assessor") -> Assessor | Ensemble:
    """An assessor object (`api.assessor(SPEC)`) or an ensemble of them."""
    if isinstance(value, Assessor | Ensemble):
        return value
    hint = f"make one with api.assessor({value!r})" if isinstance(value, str) else \
        "check the order of the arguments"
    raise _fail(argument, "an assessor such as api.assessor(\"mock\")", value, hint)


def check_path(value: Any, argument: str) -> Path:
    """A path to a file or folder."""
    if is_path(value):
        return Path(value)
    raise _fail(argument, PATH, value, "check the order of the arguments"
                if isinstance(value, AnswerKeyMethod | Assessor | Ensemble) else "")


def check_paths(value: Any, argument: str) -> list[Path]:
    """One path, or an iterable of paths (a str is one path, never its characters)."""
    if is_path(value):
        return [Path(value)]
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise _fail(argument, f"{PATH} or a list of them", value)
    paths = list(value)
    for k, item in enumerate(paths):
        if not is_path(item):
            raise _fail(f"{argument}[{k}]", PATH, item)
    return [Path(p) for p in paths]


def check_keys(value: Any, argument: str = "keys") -> Mapping[str, Any] | Path | None:
    """Keys as `api.load_keys` gives them ({qid: key}), a key file, or None."""
    if value is None or isinstance(value, Mapping):
        return value
    if is_path(value):
        return Path(value)
    raise _fail(argument, "the keys as api.load_keys gives them ({qid: key record}) or the "
                "key file's path", value)


def check_runs(value: Any, argument: str = "runs") -> Mapping[str, Any] | list[Path]:
    """Answers as `api.load_runs` gives them ({run id: {qid: Answer}}), or run files."""
    if isinstance(value, Mapping):
        for run_id, answers in value.items():
            if not isinstance(answers, Mapping):
                raise _fail(f"{argument}[{run_id!r}]", "the answers of one run as "
                            "api.load_runs gives them ({qid: Answer})", answers)
        return value
    return check_paths(value, argument)


def check_topics(value: Any, argument: str = "topics") -> Path | list[str] | None:
    """Topic ids (strings), a topics file, or None."""
    if value is None:
        return None
    if is_path(value):
        return Path(value)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise _fail(argument, "topic ids (a list of str) or a topics file", value)
    ids = list(value)
    for k, item in enumerate(ids):
        if not isinstance(item, str | int) or isinstance(item, bool):
            raise _fail(f"{argument}[{k}]", "a topic id (str)", item)
    return [str(i) for i in ids]


def check_text(value: Any, argument: str, expected: str) -> str:
    """A non-empty string."""
    if isinstance(value, str) and value.strip():
        return value
    raise _fail(argument, expected, value)
