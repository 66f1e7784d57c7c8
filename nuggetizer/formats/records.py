"""One validation layer at the file edge: a record checked against its pydantic model, and a
bad one named in one line by file, line and dotted field (`criteria[3].weight`).

The shared field types (`Id`, `Number`) and the base records (`KeyIds`, `JudgmentIds`) live
here; each method's own records are in methods/records.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, StrictStr, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import type_name


def _id(value: Any) -> str | int:
    """A non-empty string or an integer (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PydanticCustomError("id_type", "must be a string or an integer")
    if isinstance(value, str) and not value.strip():
        raise PydanticCustomError("id_empty", "is empty: give the identifier")
    return value


def _number(value: Any) -> float | int:
    """An integer or a float (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("number_type", "must be a number")
    return value


Id = Annotated[str | int, PlainValidator(_id)]
Number = Annotated[float | int, PlainValidator(_number)]


class Record(BaseModel):
    """A record: the fields a method reads, checked; any other field kept as written."""

    model_config = ConfigDict(extra="allow")


class KeyIds(Record):
    """What every key line carries: its topic id and the query."""

    qid: Id
    query: StrictStr


class JudgmentIds(Record):
    """What every judgment line carries: the run and the topic it judges."""

    run_id: Id
    qid: Id


M = TypeVar("M", bound=BaseModel)

# pydantic's error types in plain words: what the value must be.
_EXPECTED = {
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}
_BOUNDS = {"greater_than_equal": ("ge", "at least"), "less_than_equal": ("le", "at most"),
           "greater_than": ("gt", "more than"), "less_than": ("lt", "less than"),
           "too_short": ("min_length", "at least"), "too_long": ("max_length", "at most")}


def dotted(loc: tuple[int | str, ...]) -> str:
    """`('criteria', 3, 'weight')` as `criteria[3].weight`; odd keys quoted in brackets."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _got(value: Any) -> str:
    """`got string "x"`, `got integer 1`, `got null`: the value's JSON type and text."""
    if value is None:
        return "got null"
    text = json.dumps(value, ensure_ascii=False)
    return f"got {type_name(value)} {text if len(text) <= 40 else text[:39] + '…'}"


def describe(error: ErrorDetails) -> str:
    """One pydantic error in plain words, naming its field and, where obvious, the fix."""
    loc, kind, value = tuple(error["loc"]), error["type"], error.get("input")
    name = dotted(loc) or "the line"
    if kind == "missing":
        parent = dotted(loc[:-1])
        if parent:
            return (f"{parent} must be an object with field {loc[-1]!r}: {name} is missing; "
                    "add it")
        return f"field {name!r} is missing; add it"
    if kind in _EXPECTED:
        return f"{name} {_EXPECTED[kind]}, {_got(value)}"
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        limit = (error.get("ctx") or {}).get(key)
        if kind in ("too_short", "too_long"):
            count = len(value) if isinstance(value, list | dict | str) else value
            return f"{name} must hold {words} {limit} item(s), got {count}"
        return f"{name} must be {words} {limit}, got {value!r}"
    if kind.startswith(("id_", "number_")):
        return f"{name} {error['msg']}" + ("" if kind == "id_empty" else f", {_got(value)}")
    if kind.startswith("text_"):
        return f"{name} {error['msg']}, {_got(value)}"
    return f"{name}: {error['msg']}, {_got(value)}"


def validated(model: type[M], obj: Any, path: Path, line: int | None) -> M:
    """`obj` checked against `model`; InputError naming file, line and the first bad field."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise InputError(path, line, describe(exc.errors(include_url=False)[0])) from None
