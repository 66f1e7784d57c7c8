"""The files a project is made from when the organizer makes it in the browser: paths inside
the folders the server was allowed to read (`--allow-dir`), or uploads kept in the server's
uploads folder under a random name (the name the browser sent is never a path), each request
no larger than the server's limit."""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from starlette.datastructures import UploadFile

from nuggetizer.errors import ConfigError

SUFFIXES = (".jsonl.gz", ".json.gz", ".tsv.gz", ".jsonl", ".json", ".tsv", ".txt", ".qrels")
LISTED = 5000  # files listed in the forms at most


def _suffix(name: str) -> str:
    lower = name.lower()
    return next((s for s in SUFFIXES if lower.endswith(s)), "")


def allowed_files(roots: Sequence[Path]) -> list[str]:
    """The track files inside the allowed folders (up to LISTED), for the forms."""
    found: list[str] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [str(Path(folder) / f) for f in sorted(files) if _suffix(f)]
            if len(found) >= LISTED:
                return found[:LISTED]
    return found


def allowed_path(text: str, roots: Sequence[Path]) -> Path:
    """A path the organizer typed, once it is inside an allowed folder (links resolved) and
    is there; else a ConfigError saying why."""
    if not roots:
        raise ConfigError("this server may read no folder: upload the files, or start it with "
                          "--allow-dir FOLDER")
    path = Path(text.strip()).expanduser()
    real = path.resolve()
    if not any(real.is_relative_to(root.resolve()) for root in roots):
        raise ConfigError(f"{text.strip()} is not inside the folders this server may read "
                          f"({', '.join(map(str, roots))})")
    if not real.exists():
        raise ConfigError(f"{text.strip()} does not exist")
    return real


async def save_upload(upload: UploadFile, folder: Path, field: str, limit: int) -> Path:
    """Keep an upload in `folder` under the field's name and a random part (its suffix,
    which tells the readers its format, from the browser's file name)."""
    suffix = _suffix(upload.filename or "")
    if not suffix:
        raise ConfigError(f"{field}: upload a {', '.join(SUFFIXES)} file (got "
                          f"{(upload.filename or 'no name')[:80]!r})")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{field}-{secrets.token_hex(6)}{suffix}"
    size = 0
    with path.open("wb") as out:
        while chunk := await upload.read(1 << 20):
            size += len(chunk)
            if size > limit:
                out.close()
                path.unlink()
                raise ConfigError(f"{field}: the upload is over {limit // 2**20} MB")
            out.write(chunk)
    return path
