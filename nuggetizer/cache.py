"""Content-addressed store of LLM calls: SQLite (WAL mode), JSON values, one commit per put.

The key is the sha256 of the canonical JSON of everything that decides the output of a call
(model, messages, schema, sampling options, structured-output mode), built by `cache_key`.
Where the model was reached (base URL, API key) is deliberately left out, so the same model
served from another machine replays the same answers.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nuggetizer.errors import ConfigError, OutputError
from nuggetizer.places import default_cache_path as default_cache_path  # where it was

__all__ = ["Cache", "CacheError", "cache_key", "canonical_json", "default_cache_path"]

LOCK_TIMEOUT = 30.0  # seconds to wait for another program's lock on the cache file


# SQLite's result codes that mean the disk refused a write (a full disk past a file-size
# limit is SQLITE_IOERR_WRITE), as the errno the message explains.
SQLITE_WRITE_FAULTS = {"SQLITE_FULL": errno.ENOSPC, "SQLITE_READONLY": errno.EROFS,
                       "SQLITE_IOERR_WRITE": errno.EIO, "SQLITE_IOERR_FSYNC": errno.EIO,
                       "SQLITE_IOERR_TRUNCATE": errno.EIO}


class CacheError(ConfigError):
    """The cache file is damaged, not a cache, or locked by another program for too long."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace (tuples become lists)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(fields: dict[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of `fields`."""
    return hashlib.sha256(canonical_json(fields).encode("utf-8")).hexdigest()


class Cache:
    """A SQLite table of key -> JSON object; safe to share between threads of one process."""

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = LOCK_TIMEOUT
                 ) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self._guard():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False,
                                   timeout=lock_timeout)
            self._conn = conn
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
            if not {"key", "value", "created"} <= columns:
                raise sqlite3.DatabaseError("its calls table is not a nuggetizer cache")
            conn.commit()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's errors about the file into a CacheError naming it and the fix."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            code = SQLITE_WRITE_FAULTS.get(getattr(exc, "sqlite_errorname", ""))
            if code is not None:  # the disk refused a write: not a damaged cache
                raise OutputError(self.path, OSError(code, str(exc))) from None
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(
                    f"LLM cache {self.path} is locked by another program ({exc}); wait for it "
                    "to finish, or give this command its own --cache PATH (or --no-cache)"
                ) from None
            raise self._damaged(exc) from None
        except (sqlite3.DatabaseError, OSError, UnicodeDecodeError, ValueError) as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: Exception) -> CacheError:
        return CacheError(
            f"LLM cache {self.path} cannot be used ({exc}): it is damaged or not a nuggetizer "
            "cache; move it aside (a new one is made in its place) or give --cache OTHER_PATH "
            "(or --no-cache)"
        )

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"cache {self.path} is closed")
        return self._conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored object for `key`, or None."""
        with self._lock, self._guard():
            row = self._connection().execute(
                "SELECT value FROM calls WHERE key = ?", (key,)
            ).fetchone()
            return None if row is None else json.loads(row[0])

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store `value` under `key` (replacing any old one) and commit at once."""
        text = json.dumps(value, ensure_ascii=False)
        with self._lock, self._guard():
            conn = self._connection()
            conn.execute(
                "INSERT OR REPLACE INTO calls (key, value, created) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )
            conn.commit()

    def __len__(self) -> int:
        with self._lock, self._guard():
            return int(self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock, self._guard():
            row = self._connection().execute(
                "SELECT 1 FROM calls WHERE key = ?", (key,)
            ).fetchone()
        return row is not None

    def close(self) -> None:
        """Close the connection; further use raises RuntimeError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __del__(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"
