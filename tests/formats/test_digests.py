"""The provenance digest made of the bytes a reader reads (formats/digests.py): the same
BLAKE3 as hashing the file apart, kept only for a file read whole and unchanged since."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from blake3 import blake3
from shared_data import RAG24

from nuggetizer.formats import iter_jsonl
from nuggetizer.formats import jsonl as jsonl_module
from nuggetizer.formats.digests import Digest, known
from nuggetizer.run.provenance import input_entry

NUGGETS = RAG24 / "nuggets.mistral.jsonl"


def _copy(tmp_path: Path, name: str = "nuggets.jsonl") -> Path:
    path = tmp_path / name
    shutil.copyfile(NUGGETS, path)
    return path


def _apart(path: Path) -> str:
    return blake3(path.read_bytes()).hexdigest()


def test_a_file_read_whole_is_digested_as_read(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    assert known(path, path.stat()) is None
    lines = list(iter_jsonl(path))
    digest, first = known(path, path.stat()) or ("", b"")
    assert digest == _apart(path)
    assert json.loads(first) == lines[0][1]
    entry = input_entry(path)
    assert entry["blake3"] == _apart(path) and entry["path"] == str(path)


def test_a_file_read_in_part_or_changed_since_is_hashed_apart(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    next(iter_jsonl(path))  # the reader stopped at the first line: nothing kept
    assert known(path, path.stat()) is None
    list(iter_jsonl(path))
    with path.open("ab") as f:  # a line added after it was read
        f.write(b'{"qid": "x", "query": "q", "nuggets": []}\n')
    assert known(path, path.stat()) is None
    assert input_entry(path)["blake3"] == _apart(path)


def test_a_large_or_gzipped_file_is_streamed_and_hashed_apart(tmp_path: Path,
                                                              monkeypatch) -> None:
    path = _copy(tmp_path)
    monkeypatch.setattr(jsonl_module, "_WHOLE", 1024)  # every file "large"
    streamed = list(iter_jsonl(path))
    monkeypatch.undo()
    assert known(path, path.stat()) is None
    assert streamed == list(iter_jsonl(_copy(tmp_path, "again.jsonl")))
    packed = tmp_path / "nuggets.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert list(iter_jsonl(packed)) == streamed
    assert known(packed, packed.stat()) is None
    assert input_entry(packed)["blake3"] == _apart(packed)  # the file as stored


def test_line_numbers_and_endings_as_before(tmp_path: Path) -> None:
    """CRLF endings, a blank line and no newline at the end: numbered as the lines are."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n  \n{"b": 2}\n{"c": 3}')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, {"b": 2}), (5, {"c": 3})]
    assert known(path, path.stat()) == (_apart(path), b'{"a": 1}')


def test_a_digest_fed_in_blocks_is_the_file_s(tmp_path: Path) -> None:
    """Blocks as the battles reader feeds them: the first line spanning three of them."""
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"a": "' + b"x" * 30 + b'"}\r\n{"b": 2}\n')
    digest = Digest(path, path.stat())
    data = path.read_bytes()
    for start in range(0, len(data), 16):
        digest.feed(data[start:start + 16])
    digest.done()
    assert known(path, path.stat()) == (_apart(path), b'{"a": "' + b"x" * 30 + b'"}')


def test_outputs_of_the_same_inputs_get_their_own_sidecars(tmp_path: Path) -> None:
    """Several outputs of the same inputs, written at once: each output's sidecar is the one
    it would get alone, its own step's usage first (the text shared only where they agree)."""
    from nuggetizer.run.provenance import write_sidecar

    key = _copy(tmp_path)
    board, per_topic, alone = (tmp_path / name for name in ("board.tsv", "pt.tsv", "one.tsv"))
    (tmp_path / "pt.tsv.usage.json").write_text(json.dumps(
        {"step": "score", "usage": {"calls": 3}}))
    write_sidecar([board, per_topic], [key], {"answers with nothing judged": 2}, {"profile": "x"})
    write_sidecar(alone, [key], {"answers with nothing judged": 2}, {"profile": "x"})

    def read(path: Path) -> dict:
        block = json.loads(path.with_name(path.name + ".provenance.json").read_text())
        del block["created"]
        return block

    assert read(board) == read(alone)
    assert read(per_topic) == {**read(alone), "usage": {"score": {"calls": 3}}}
    assert read(board)["inputs"] == [input_entry(key)]
    assert read(board)["left_out"] == {"answers with nothing judged": 2}
