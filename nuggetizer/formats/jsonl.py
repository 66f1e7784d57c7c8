"""Line plumbing shared by every reader and writer: strict JSONL in, atomic JSONL out, a journal.

Reading is strict: every problem is an InputError naming the file and the 1-based line.
Writing is deterministic (`json.dumps` with default separators, `ensure_ascii=False`), so the
same records give byte-identical files.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from nuggetizer.errors import InputError

try:  # orjson is an optional speed-up for reading; writing always uses json.dumps.
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

__all__ = [
    "MISSING",
    "Journal",
    "base_suffix",
    "dumps",
    "excerpt",
    "field",
    "first_field",
    "id_field",
    "iter_jsonl",
    "iter_lines",
    "parse_object",
    "type_name",
    "write_jsonl_atomic",
    "write_text_atomic",
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


def _open_binary(path: Path) -> IO[bytes]:
    """Open `path` for reading bytes (gunzipping `.gz`), turning OS errors into InputError."""
    try:
        if path.suffix.lower() == ".gz":
            return gzip.open(path, "rb")
        return open(path, "rb")
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


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    """Parse one JSON value strictly (NaN and Infinity are refused)."""
    if _orjson is not None:
        return _orjson.loads(text)
    return json.loads(text, parse_constant=_reject_constant)


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
    for number, text in iter_lines(path):
        if text.strip():
            yield number, parse_object(text, path, number)


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


def dumps(record: dict[str, Any]) -> str:
    """The one serialization of a record: `json.dumps` defaults, UTF-8 kept, no NaN."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable where the platform allows opening a directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_atomic(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Run `write` on a temp file beside `path`, fsync it, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    """Write records as JSONL to `path` atomically: a temp file in the same folder, then rename.

    The target is either the old file or the complete new one, never half written; parent
    folders are created.
    """

    def write(fh: IO[str]) -> None:
        for record in records:
            fh.write(dumps(record))
            fh.write("\n")

    _write_atomic(Path(path), write)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically, as `write_jsonl_atomic` does (TSVs, JSON)."""
    _write_atomic(Path(path), lambda fh: fh.write(text))


class Journal:
    """An append-only JSONL log of finished work, used to resume an interrupted step.

    Each `append` writes one whole line with a single O_APPEND write before returning, so the
    line is in the file (the kernel's page cache) even if the process is killed at once; a
    background thread then fsyncs, coalescing the appends that arrived meanwhile, so callers
    never wait for the disk (`sync()` waits). A crash can leave at most a torn last line,
    which `load` drops and truncates away.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._checked = False
        self._lock = threading.Lock()  # guards _fd and writes
        self._sync_lock = threading.Lock()  # held while fsyncing, so close() cannot race it
        self._dirty = threading.Event()
        self._syncer: threading.Thread | None = None
        self._stop = False

    def load(self) -> list[dict[str, Any]]:
        """Records written so far ([] without a file); a torn last line is dropped and truncated."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self._checked = True
            return []
        except OSError as exc:
            raise InputError(self.path, None, f"cannot read journal: {exc.strerror}") from None
        records: list[dict[str, Any]] = []
        good_end = 0  # byte offset just after the last good line
        number = 0
        while good_end < len(data):
            newline = data.find(b"\n", good_end)
            if newline == -1:  # no newline: the last write was torn, even if the JSON parses
                break
            number += 1
            raw, after = data[good_end:newline], newline + 1
            if raw.strip():
                try:
                    records.append(parse_object(raw.decode("utf-8"), self.path, number))
                except (InputError, UnicodeDecodeError):
                    if data[after:].strip():  # damage before the end is not a torn write
                        raise InputError(
                            self.path, number, "corrupt journal line (not the last one)"
                        ) from None
                    break
            good_end = after
        if good_end < len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
        self._checked = True
        return records

    def append(self, record: dict[str, Any]) -> str:
        """Append one record as one line, written before returning and fsynced soon after;
        returns the line (without its newline), as `dumps` made it."""
        line = dumps(record)
        data = (line + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                if not self._checked:
                    self.load()  # repair a torn tail before writing after it
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self._syncer is None:
                self._stop = False
                self._syncer = threading.Thread(
                    target=self._sync_loop, name=f"journal-sync:{self.path.name}", daemon=True
                )
                self._syncer.start()
        self._dirty.set()
        return line

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            if self._stop:
                return
            self._dirty.clear()
            self.sync()

    def sync(self) -> None:
        """fsync what was appended so far (the background thread does this on its own)."""
        with self._sync_lock:
            fd = self._fd
            if fd is not None:
                try:
                    os.fsync(fd)
                except OSError:
                    pass

    def close(self) -> None:
        """Sync and close the file handle (appending again reopens it)."""
        with self._lock:
            syncer, self._syncer = self._syncer, None
            self._stop = True
            self._dirty.set()
        if syncer is not None and syncer is not threading.current_thread():
            syncer.join()
        self._dirty.clear()
        with self._lock, self._sync_lock:
            if self._fd is not None:
                try:
                    os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = None

    def remove(self) -> None:
        """Delete the journal (once the final output is safely written)."""
        self.close()
        self.path.unlink(missing_ok=True)
        self._checked = False

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

