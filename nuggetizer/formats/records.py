"""The one validation layer at the file edge: a record (a parsed JSONL line) checked against a
pydantic model, and every problem one InputError naming the file, the line and the field as a
dotted path (`criteria[3].weight`), what was wrong, and the shape the field's object must have.

Models subclass `Record` (extra fields allowed, kept; types strict as JSON writes them: a
number is no string, a boolean no number). `validated` checks and returns the record itself,
so what is read is exactly what was written. The methods' record models are in
formats/method_records.py.
"""

from __future__ import annotations

import functools
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import type_name


def _identifier(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise ValueError("must be a non-empty string or integer")
    return value


Id = Annotated[Any, BeforeValidator(_identifier)]  # a topic or run id: string or integer


class Record(BaseModel):
    """A record's model: fields other than those declared are allowed and kept."""

    model_config = ConfigDict(extra="allow", strict=True)


_KINDS = {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
          list: "a list", dict: "an object", type(None): "null"}


def _kind(annotation: Any) -> str:
    """A type in words, as the shapes of messages say it."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _kind(typing.get_args(annotation)[0]) if annotation is not Id else \
            "a string or integer"
    if origin in (Union, types.UnionType):
        members = typing.get_args(annotation)
        if set(members) == {float, int}:
            return "a number"
        return " or ".join(_kind(a) for a in members)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "an object"
    return _KINDS.get(origin or annotation, "a value")


@functools.cache
def shape(model: type[BaseModel]) -> str:
    """`an object with a string 'criterion', a number 'weight' and ...` (its required fields;
    the optional ones said as such)."""
    parts = [f"{'' if f.is_required() else 'optional '}{_kind(f.annotation)} {name!r}"
             .replace("optional a ", "an optional ").replace("optional an ", "an optional ")
             for name, f in model.model_fields.items()]
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] \
        if parts else "fields"
    return f"an object with {listed}"


def _label(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _holder(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel], int]:
    """The model whose field failed, and how much of `loc` leads to it."""
    holder, depth, current = model, 0, model
    for k, part in enumerate(loc[:-1]):
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if current is not None else None
        if field is None:
            break
        inner = field.annotation
        while typing.get_origin(inner) in (list, dict):
            inner = typing.get_args(inner)[-1]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            current = inner
            holder, depth = inner, k + 1
            if k + 1 < len(loc) and isinstance(loc[k + 1], int):
                depth = k + 2
        else:
            break
    return holder, depth


_TAGS = frozenset(("str", "int", "float", "bool", "list", "dict", "none"))  # union members


def problem(model: type[BaseModel], error: Any) -> str:
    """One pydantic error as a sentence naming the field and the shape its object must have."""
    loc = tuple(p for p in error.get("loc") or () if not (isinstance(p, str) and (
        p in _TAGS or "[" in p)))
    kind = error.get("type", "")
    given = error.get("input")
    if kind == "missing":
        what = "is missing"
    elif kind.endswith("_type"):
        expected = _KINDS.get(_python_type(kind) or object, kind.removesuffix("_type"))
        what = f"must be {expected}, got {type_name(given)}"
    else:
        what = str(error.get("msg", "is not valid")).removeprefix("Value error, ")
        what = what[:1].lower() + what[1:]
        what = what.removeprefix("input ")
    if not loc:
        return what
    holder, depth = _holder(model, loc)
    line = f"field {_label(loc)!r} {what}"
    if depth:
        line += f"; {_label(loc[:depth])} must be {shape(holder)}"
    return line


def _python_type(kind: str) -> type | None:
    """The Python type of a pydantic type error's kind (`string_type` -> str)."""
    return {"string_type": str, "int_type": int, "float_type": float, "bool_type": bool,
            "list_type": list, "dict_type": dict, "model_type": dict}.get(kind)


def validated(model: type[BaseModel], obj: dict[str, Any], path: Path | str | None,
              line: int | None) -> dict[str, Any]:
    """`obj` checked against `model`; InputError naming file, line and field otherwise."""
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        raise InputError(path, line, problem(model, exc.errors()[0])) from None
    return obj
