"""One validation layer at the file edge: a record checked against its pydantic model, and a
bad one named in one line by file, line and dotted field (`criteria[3].weight`).

The shared field types (`Id`, `Number`) and the base records (`KeyIds`, `JudgmentIds`) live
here; each method's own records are in methods/records.py.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from nuggetizer.errors import InputError

_JSON_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


def type_name(value_or_type: Any) -> str:
    """The JSON name of a Python type or of a value's type ("string", "array", ...)."""
    typ = value_or_type if isinstance(value_or_type, type) else type(value_or_type)
    return _JSON_NAMES.get(typ, typ.__name__)


def excerpt(text: str, limit: int = 60) -> str:
    """A short quoted excerpt of `text` for error messages."""
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


def wrong_type(expected: str) -> PydanticCustomError:
    """The error of a value that is not of the JSON type(s) `expected` ("string or integer")."""
    return PydanticCustomError("json_type", "must be {expected}", {"expected": expected})


def _id(value: Any) -> str | int:
    """A non-empty string or an integer (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise wrong_type("string or integer")
    if isinstance(value, str) and not value.strip():
        raise PydanticCustomError("empty", "is empty")
    return value


def _id_text(value: Any) -> str:
    """An identifier (as `_id`) as the text it is read as: stripped, an integer in digits."""
    return str(_id(value)).strip()


def _number(value: Any) -> float | int:
    """An integer or a float (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise wrong_type("number")
    return value


def _text(value: Any) -> str:
    """A string with something in it besides white space."""
    if not isinstance(value, str):
        raise wrong_type("string")
    if not value.strip():
        raise PydanticCustomError("empty", "is empty")
    return value


def _list_or_object(value: Any) -> list[Any] | dict[str, Any]:
    """A JSON array or object, as it is."""
    if not isinstance(value, list | dict):
        raise wrong_type("array or object")
    return value


class JsonType(str):
    """Annotation metadata naming the JSON type(s) a custom-validated field takes, for the
    message of a missing one."""


Id = Annotated[str | int, PlainValidator(_id), JsonType("string or integer")]
IdText = Annotated[str, PlainValidator(_id_text), JsonType("string or integer")]
Number = Annotated[float | int, PlainValidator(_number), JsonType("number")]
Text = Annotated[str, PlainValidator(_text), JsonType("string")]
ListOrObject = Annotated[list[Any] | dict[str, Any], PlainValidator(_list_or_object),
                         JsonType("array or object")]


class Record(BaseModel):
    """A record: the fields a method reads, checked; any other field kept as written."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class KeyIds(Record):
    """What every key line carries: its topic id and the query."""

    qid: Id
    query: StrictStr


class JudgmentIds(Record):
    """What every judgment line carries: the run and the topic it judges."""

    run_id: Id
    qid: Id


M = TypeVar("M", bound=BaseModel)

# pydantic's error types: the JSON type the value must have.
_EXPECTED = {
    "string_type": "string",
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "list_type": "array",
    "tuple_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
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
    """`got string '"x"'`, `got integer '1'`, `got null`: the value's JSON type and text."""
    if value is None:
        return "got null"
    return f"got {type_name(value)} {excerpt(json.dumps(value, ensure_ascii=False), 40)}"


def json_type(annotation: Any) -> str:
    """The JSON type(s) an annotation asks for, in words: `str | int` -> "string or integer"
    (a number stands for the integers it includes)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    origin = get_origin(annotation)
    if origin is Annotated:
        marks = [m for m in annotation.__metadata__ if isinstance(m, JsonType)]
        return str(marks[0]) if marks else json_type(get_args(annotation)[0])
    if origin in (Union, UnionType):
        names = [json_type(arg) for arg in get_args(annotation)]
        if "number" in names:
            names = [n for n in names if n != "integer"]
        return " or ".join(dict.fromkeys(names))
    base = origin or annotation
    if base in (tuple, set):
        return "array"
    return _JSON_NAMES.get(base, "a JSON value") if isinstance(base, type) else "a JSON value"


def _annotation_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[Any, Any]:
    """(annotation, pydantic FieldInfo or None) of the field at `loc` in `model`, following
    nested models, lists and maps; (None, None) where the path leaves what the model says."""
    annotation: Any = model
    info = None
    for part in loc:
        while get_origin(annotation) in (Annotated, Union, UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = args[0] if args else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = next((f for name, f in annotation.model_fields.items()
                         if part in (name, *_aliases(f))), None)
            annotation = info.annotation if info else None
        elif get_origin(annotation) in (list, tuple, set, dict):
            annotation, info = get_args(annotation)[-1], None
        else:
            return None, None
    return annotation, info


def _aliases(info: FieldInfo) -> tuple[str, ...]:
    """The names a field may be given under (its `AliasChoices`), if any."""
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(c for c in alias.choices if isinstance(c, str))
    return (alias,) if isinstance(alias, str) else ()


def close_key(obj: dict[str, Any], key: str) -> str | None:
    """A key of `obj` close to `key` (a misspelling of it), if any."""
    close = difflib.get_close_matches(key, [k for k in obj if isinstance(k, str)], n=1,
                                      cutoff=0.6)
    return close[0] if close else None


def _missing(error: ErrorDetails, model: type[BaseModel] | None,
             at: tuple[int | str, ...] = ()) -> str:
    """`missing field 'answer' (expected array)`, naming the aliases a field may take and a
    key of the object close to the missing one (a misspelling); `at`: where the object
    validated is in its line."""
    annotation, info = _annotation_at(model, tuple(error["loc"])) if model else (None, None)
    loc = at + tuple(error["loc"])
    marks = [m for m in info.metadata if isinstance(m, JsonType)] if info else []
    expected = str(marks[0]) if marks else json_type(annotation) if annotation else ""
    names = _aliases(info) if info else ()
    if len(names) > 1:
        parent = dotted(loc[:-1])
        choices = " / ".join(repr(f"{parent}.{n}" if parent else n) for n in names)
        message = f"missing field: expected one of {choices}"
        message += f" ({expected})" if expected else ""
    else:
        message = f"missing field {dotted(loc)!r}"
        message += f" (expected {expected})" if expected else ""
    given = error.get("input")
    # the keys of the object that name none of its model's fields: only those can be a
    # misspelling of the missing one (not a sibling field of a close name)
    owner = _annotation_at(model, tuple(error["loc"])[:-1])[0] if model else None
    known: set[str] = {n for name, f in owner.model_fields.items()
                       for n in (name, *_aliases(f))} \
        if isinstance(owner, type) and issubclass(owner, BaseModel) else set()
    others = {k: v for k, v in given.items() if k not in known} if isinstance(given, dict) else {}
    close = close_key(others, str(loc[-1]))
    if close:
        message += f"; found {close!r}: rename it {loc[-1]!r}"
    return message


def _what(error: ErrorDetails) -> str:
    """What a field that is present must be, with what it is: `must be array, got string
    '"x"'`, `is empty`, `must be at most 5, got 9`."""
    kind, value = error["type"], error.get("input")
    if kind in _EXPECTED:
        return f"must be {_EXPECTED[kind]}, {_got(value)}"
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        limit = (error.get("ctx") or {}).get(key)
        if kind in ("too_short", "too_long"):
            count = len(value) if isinstance(value, list | dict | str) else value
            return f"must hold {words} {limit} item(s), got {count}"
        return f"must be {words} {limit}, got {value!r}"
    if kind in ("empty", "rule"):  # a rule worded whole, the value named where it helps
        return error["msg"]
    return f"{error['msg']}, {_got(value)}"


def describe(error: ErrorDetails, model: type[BaseModel] | None = None) -> str:
    """One pydantic error in the words of every reader: `missing field 'x' (expected array)`,
    `field 'answer[2].citations' must be array, got string '"0, 1"'`; `model` (the one
    validated) gives the type a missing field should have."""
    if error["type"] == "missing":
        return _missing(error, model)
    return f"field {dotted(tuple(error['loc'])) or 'the line'!r} {_what(error)}"


def problems(model: type[BaseModel], obj: Any, at: tuple[int | str, ...] = ()
             ) -> list[tuple[str, str]]:
    """Every field of `obj` that `model` refuses, as (dotted field, what is wrong), for a
    checker that lists them all rather than stopping at the first; `at`: where `obj` is in
    its line (`("responses", 2)`)."""
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        return [(dotted(at + tuple(e["loc"])), _missing(e, model, at) if e["type"] == "missing"
                 else _what(e)) for e in exc.errors(include_url=False)]
    return []


def validated(model: type[M], obj: Any, path: str | Path, line: int | None, *,
              where: str = "") -> M:
    """`obj` checked against `model`; InputError naming file, line and the first bad field
    (after `where`, e.g. "example 3: " for a record of a file that is not read by lines)."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise InputError(path, line, where + describe(exc.errors(include_url=False)[0],
                                                      model)) from None


@cache
def _one_field(name: str, typ: type | tuple[type, ...]) -> type[BaseModel]:
    """A model of one field of JSON type(s) `typ` (booleans are not numbers)."""
    strict = {str: StrictStr, int: StrictInt, float: Number, bool: StrictBool,
              list: list[Any], dict: dict[str, Any]}
    types = typ if isinstance(typ, tuple) else (typ,)
    annotation: Any = strict[types[0]]
    for more in types[1:]:
        annotation = annotation | strict[more]
    fields: dict[str, Any] = {name: (annotation, ...)}
    return create_model("Field", __base__=Record, **fields)


def field(obj: dict[str, Any], name: str, typ: type | tuple[type, ...], path: str | Path,
          line: int | None) -> Any:
    """`obj[name]`, of JSON type(s) `typ`, for a reader with one field to check."""
    return getattr(validated(_one_field(name, typ), obj, path, line), name)


class TextItem(Record):
    """A question or key point: its text."""

    text: StrictStr


class Labelled(Record):
    """A judged item: its label (the method checks the menu)."""

    label: StrictStr
