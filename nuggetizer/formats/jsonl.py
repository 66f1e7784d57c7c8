"""Line plumbing shared by every reader: strict lines and JSON objects in, with typed fields.

Every problem is an InputError naming the file and the 1-based line. The writing side (atomic
files, the journal) is formats/writing.py.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from nuggetizer.errors import InputError

__all__ = [
    "MISSING",
    "base_suffix",
    "excerpt",
    "field",
    "first_field",
    "id_field",
    "iter_decoded",
    "iter_jsonl",
    "iter_lines",
    "parse_object",
    "type_name",
]


class _Missing:
    """Sentinel type for "no default given"."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_JSON_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}

_BOM = b"\xef\xbb\xbf"
T = TypeVar("T")
_BUFFER = 1 << 20  # lines of a few KB (an answer and its judgments): 8 KB reads cost 3x


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


def _open_binary(path: Path) -> IO[bytes] | gzip.GzipFile:
    """Open `path` for reading bytes (gunzipping `.gz`), turning OS errors into InputError."""
    try:
        if path.suffix.lower() == ".gz":
            return gzip.open(path, "rb")
        return open(path, "rb", buffering=_BUFFER)
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, expected a file") from None
    except PermissionError:
        raise InputError(path, None, "permission denied") from None


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text without its line ending) for every line, streamed.

    The file must be UTF-8 (a leading byte-order mark is dropped); `.gz` files are gunzipped.
    """
    path = Path(path)
    with _open_binary(path) as fh:
        try:
            for number, raw in enumerate(fh, 1):
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        path, number, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
                    ) from None
                yield number, text.rstrip("\r\n")
        except (OSError, EOFError) as exc:  # e.g. a truncated or corrupt .gz
            raise InputError(path, None, f"cannot read: {exc}") from None


def _loads(text: str) -> Any:
    """Parse one JSON value strictly (orjson refuses NaN and Infinity); writing always uses
    json.dumps."""
    return orjson.loads(text)


def parse_object(text: str, path: str | Path, line: int) -> dict[str, Any]:
    """Parse one line that must hold a JSON object; InputError with an excerpt otherwise."""
    try:
        value = _loads(text)
    except ValueError as exc:  # orjson.JSONDecodeError subclasses json.JSONDecodeError
        if isinstance(exc, json.JSONDecodeError):
            reason = f"{exc.msg} at column {exc.colno}"
        else:
            reason = str(exc)
        raise InputError(
            path, line, f"expected a JSON object, found invalid JSON ({reason}): {excerpt(text)}"
        ) from None
    if not isinstance(value, dict):
        raise InputError(
            path, line, f"expected a JSON object, found a JSON {type_name(value)}: {excerpt(text)}"
        )
    return value


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each non-blank line of a JSONL file, streamed."""
    yield from _iter_objects(Path(path))


def iter_decoded(path: str | Path, decode: Callable[[bytes], T | None] | None
                 ) -> Iterator[tuple[int, T | dict[str, Any]]]:
    """(line, record) for each non-blank line: `decode(the line's bytes)` where that gives a
    record, else the line's object as `iter_jsonl` reads it (same errors)."""
    yield from _iter_objects(Path(path), decode)


def _iter_objects(path: Path, decode: Callable[[bytes], Any] | None = None
                  ) -> Iterator[tuple[int, Any]]:
    """`iter_jsonl` with orjson reading each line's bytes as they are (a third faster than
    decoding first); a line it does not read as an object (bad UTF-8, a byte-order mark,
    blank, bad JSON, not an object) goes the way of `iter_lines` and `parse_object`, so it is
    skipped or refused exactly as there. `decode`: tried first (see `iter_decoded`)."""
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    with _open_binary(path) as fh:
        try:
            for number, raw in enumerate(fh, 1):
                if decode is not None:
                    record = decode(raw)
                    if record is not None:
                        yield number, record
                        continue
                try:
                    value = loads(raw)
                except decode_error:
                    value = None
                if type(value) is dict:
                    yield number, value
                    continue
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM):]
                try:
                    text = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        path, number, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
                    ) from None
                if text.strip():
                    yield number, parse_object(text, path, number)
        except (OSError, EOFError) as exc:  # e.g. a truncated or corrupt .gz
            raise InputError(path, None, f"cannot read: {exc}") from None


def _type_ok(value: Any, typ: type | tuple[type, ...]) -> bool:
    """isinstance, except that a boolean is not an integer or a number here."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool) and bool not in types:
        return False
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def _expected(typ: type | tuple[type, ...]) -> str:
    types = typ if isinstance(typ, tuple) else (typ,)
    return " or ".join(type_name(t) for t in types)


def field(
    obj: dict[str, Any],
    name: str,
    typ: type | tuple[type, ...],
    path: str | Path,
    line: int | None,
    *,
    default: Any = MISSING,
    where: str = "",
) -> Any:
    """Fetch `obj[name]` checking its JSON type; `default` (when given) stands in for a missing key.

    `where` prefixes the field name in messages, e.g. "answer[3]." gives "answer[3].citations".
    A JSON null counts as missing only when a default is given and null is not an allowed type.
    """
    label = f"{where}{name}"
    null_as_missing = default is not MISSING and not _type_ok(None, typ)
    if name not in obj or (obj[name] is None and null_as_missing):
        if default is MISSING:
            raise InputError(path, line, f"missing field {label!r} (expected {_expected(typ)})")
        return default
    value = obj[name]
    if not _type_ok(value, typ):
        raise InputError(
            path,
            line,
            f"field {label!r} must be {_expected(typ)}, got {type_name(value)} "
            f"{excerpt(json.dumps(value, ensure_ascii=False), 40)}",
        )
    return value


def first_field(
    obj: dict[str, Any],
    names: tuple[str, ...],
    typ: type | tuple[type, ...],
    path: str | Path,
    line: int | None,
    *,
    default: Any = MISSING,
    where: str = "",
) -> tuple[str | None, Any]:
    """Fetch the first present key of `names` (aliases), as (key, value) with a type check."""
    for name in names:
        if name in obj:
            return name, field(obj, name, typ, path, line, where=where)
    if default is not MISSING:
        return None, default
    choices = " / ".join(repr(f"{where}{n}") for n in names)
    raise InputError(path, line, f"missing field: expected one of {choices} ({_expected(typ)})")


def id_field(
    obj: dict[str, Any],
    names: tuple[str, ...],
    path: str | Path,
    line: int | None,
    *,
    where: str = "",
) -> str:
    """Fetch an identifier under the first present alias of `names`: non-empty string or integer."""
    key, value = first_field(obj, names, (str, int), path, line, where=where)
    text = str(value).strip()
    if not text:
        raise InputError(path, line, f"field {where}{key!r} is empty")
    return text


def base_suffix(path: str | Path) -> str:
    """The lower-cased extension, looking through a trailing `.gz` ("x.jsonl.gz" -> ".jsonl")."""
    path = Path(path)
    if path.suffix.lower() == ".gz":
        path = path.with_suffix("")
    return path.suffix.lower()
