"""The digest a provenance sidecar gives each input file (BLAKE3), made of the bytes a reader
has just read: scoring reads 200 MiB of judgments or more, and hashing them apart read every
byte twice (the second read cost as much CPU as the hash). What is kept here is only the
digest and first line of a file read whole and unchanged meanwhile; run/provenance.py asks
for it before it reads a file itself."""

from __future__ import annotations

import os
from pathlib import Path

from blake3 import blake3

INPUT_HASH = "blake3"  # the digest's name in a sidecar's inputs (sha256 before issue 41)

# (absolute path, mtime_ns, size): (hex digest, first line without its line ending)
_READ: dict[tuple[str, int, int], tuple[str, bytes]] = {}


def _key(path: str | Path, stat: os.stat_result) -> tuple[str, int, int]:
    return os.path.abspath(path), stat.st_mtime_ns, stat.st_size


class Digest:
    """The digest of a file being read from its start to its end, block by block: `feed`
    each block read, then `done`; remembered only when the file's size and time are the same
    after as before (nothing changed it meanwhile) and every byte was fed."""

    def __init__(self, path: Path, before: os.stat_result) -> None:
        self.path, self.before = path, before
        self.hasher, self.fed = blake3(), 0
        self.first: bytes | None = None
        self._head = b""

    def feed(self, block: bytes) -> None:
        self.hasher.update(block)
        self.fed += len(block)
        if self.first is None:  # the first line's bytes, never the whole block copied
            end = block.find(b"\n")
            if end < 0:
                self._head += block
            else:
                self.first, self._head = self._head + block[:end], b""

    def done(self) -> None:
        """Remember the digest when the file read is the file as it is now."""
        try:
            after = os.stat(self.path)
        except OSError:
            return
        key = _key(self.path, self.before)
        if key != _key(self.path, after) or self.fed != self.before.st_size:
            return
        first = self.first if self.first is not None else self._head
        _READ[key] = (self.hasher.hexdigest(), first.rstrip(b"\r"))


def known(path: str | Path, stat: os.stat_result) -> tuple[str, bytes] | None:
    """(digest, first line) of a file a reader read whole, unchanged since; else None."""
    return _READ.get(_key(path, stat))


def digest_file(path: str | Path) -> tuple[str, bytes]:
    """(digest, first line) of a file, read here (streamed: a 400k-battle journal is 350 MiB)."""
    digest = blake3()
    with Path(path).open("rb") as f:
        first = f.readline()
        digest.update(first)
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest(), first.rstrip(b"\r\n")
