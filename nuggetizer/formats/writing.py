"""Writing files so that nothing is lost: atomic whole files, and the journal of finished work.

Writing is deterministic (`json.dumps` with default separators, `ensure_ascii=False`), so the
same records give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import string
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from nuggetizer.errors import InputError, OutputError
from nuggetizer.formats.jsonl import parse_object

__all__ = ["Journal", "dumps", "write_jsonl_atomic", "write_text_atomic"]


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


SAFE_NAME = frozenset(string.ascii_letters + string.digits + "._-+=@,")
MAX_NAME = 200  # bytes of a file name built from an id, before its suffix


def run_file_name(run_id: str) -> str:
    """The judgment file of a run inside the output folder, never a path or a name the file
    system refuses, whatever the id: the id itself where it is made of letters, digits and
    `._-+=@,`; "/" and "\\" as "_"; any other character as %XX of its UTF-8 bytes; a leading
    dot as %2E; an empty or escaped name over MAX_NAME bytes cut, ending with a hash of the
    whole id."""
    name = "".join(c if c in SAFE_NAME else "_" if c in "/\\" else "".join(
        f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in run_id)
    if name.startswith("."):
        name = "%2E" + name[1:]
    if not name or len(name) > MAX_NAME:
        digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[:MAX_NAME - 17]}-{digest}" if name else digest
    return name + ".jsonl"


def _write_atomic(path: Path, write: Callable[[IO[str]], object]) -> None:
    """Run `write` on a temp file beside `path`, fsync it, then rename it over `path`; a
    file system that refuses (full, read-only) is an OutputError naming `path`, and `path`
    is left as it was."""
    try:
        _replace(path, write)
    except OSError as exc:
        raise OutputError(path, exc) from None


def _replace(path: Path, write: Callable[[IO[str]], object]) -> None:
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


def write_bytes_atomic(path: str | Path, data: bytes, *, sync: bool = True) -> None:
    """Write `data` to `path` atomically: a temp file beside it renamed over it (fsynced
    first unless `sync` is False: pages a rerun rewrites); a file system that refuses is an
    OutputError naming `path`, and no temp file is left behind."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OutputError(path, exc) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


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
        except (FileNotFoundError, NotADirectoryError):  # nothing journalled there yet
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
        try:
            self._append(data)
        except OSError as exc:
            raise OutputError(self.path, exc) from None
        self._dirty.set()
        return line

    def _append(self, data: bytes) -> None:
        """Write `data` at the end of the journal (opened on first use)."""
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

