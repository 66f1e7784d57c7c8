"""Line plumbing shared by every reader: strict lines and JSON objects in, with typed fields.

Every problem is an InputError naming the file and the 1-based line. The writing side (atomic
files, the journal) is formats/writing.py.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from nuggetizer.errors import InputError
from nuggetizer.formats.digests import Digest
from nuggetizer.formats.records import excerpt, field, type_name

__all__ = [
    "base_suffix",
    "excerpt",
    "field",
    "iter_decoded",
    "iter_jsonl",
    "iter_lines",
    "iter_objects",
    "opening",
    "parse_object",
    "type_name",
]


_BOM = b"\xef\xbb\xbf"
T = TypeVar("T")
_BUFFER = 1 << 20  # lines of a few KB (an answer and its judgments): 8 KB reads cost 3x
_WHOLE = 64 << 20  # a file up to this size is read at once (and digested as read)


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


def _numbered(path: Path, fh: IO[bytes] | gzip.GzipFile) -> Iterator[tuple[int, bytes]]:
    """(1-based number, bytes with the line ending) of every line of an open file. A plain
    file of up to `_WHOLE` bytes is read at once and its digest made of the same bytes
    (formats/digests.py: the provenance sidecar's, kept once every line has been read, so
    that scoring does not read 200 MiB of judgments twice); a larger one is streamed."""
    if isinstance(fh, gzip.GzipFile):  # the digest is of the file as stored: hashed apart
        yield from enumerate(fh, 1)
        return
    stat = os.fstat(fh.fileno())
    if stat.st_size > _WHOLE:
        yield from enumerate(fh, 1)
        return
    digest = Digest(path, stat)
    data = fh.read()
    digest.feed(data)
    yield from enumerate(io.BytesIO(data), 1)
    digest.done()


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text without its line ending) for every line, streamed.

    The file must be UTF-8 (a leading byte-order mark is dropped); `.gz` files are gunzipped.
    """
    path = Path(path)
    with _open_binary(path) as fh:
        try:
            for number, raw in _numbered(path, fh):
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
    return _iter_objects(Path(path), decode)


def _iter_objects(path: Path, decode: Callable[[bytes], Any] | None = None
                  ) -> Iterator[tuple[int, Any]]:
    """`iter_jsonl` with orjson reading each line's bytes as they are (a third faster than
    decoding first); a line it does not read as an object (bad UTF-8, a byte-order mark,
    blank, bad JSON, not an object) goes the way of `iter_lines` and `parse_object`, so it is
    skipped or refused exactly as there. `decode`: tried first (see `iter_decoded`)."""
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    with _open_binary(path) as fh:
        try:
            for number, raw in _numbered(path, fh):
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


def opening(path: Path) -> str:
    """The first character of a file other than white space or a byte-order mark ("" when
    there is none): `{` for JSONL, `[` for a JSON array."""
    try:
        with _open_binary(path) as fh:
            head = fh.read(4096)
    except (OSError, EOFError) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    return head.lstrip(_BOM + b" \t\r\n")[:1].decode("ascii", "replace")


def iter_objects(path: Path, what: str) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """The objects of a JSONL file, or of a file holding one JSON array of them (line numbers
    unknown then, None); `what` says what each item must be, for the error of one that is not
    an object ("an object with an id and `sub_narratives`")."""
    if opening(path) != "[":
        yield from iter_jsonl(path)
        return
    try:
        with _open_binary(path) as fh:
            items = json.loads(fh.read().decode("utf-8-sig"))
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(path, None, f"not valid JSON: {exc}") from None
    if not isinstance(items, list):
        raise InputError(path, None, f"expected a JSON array of objects, found a JSON "
                         f"{type_name(items)}")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(path, None, f"item {index} must be {what}, found a JSON "
                             f"{type_name(item)}")
        yield None, item


def base_suffix(path: str | Path) -> str:
    """The lower-cased extension, looking through a trailing `.gz` ("x.jsonl.gz" -> ".jsonl")."""
    path = Path(path)
    if path.suffix.lower() == ".gz":
        path = path.with_suffix("")
    return path.suffix.lower()
