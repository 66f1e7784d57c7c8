"""Narratives and 2026 nuggets read through the one validation layer: a bad field is named by
file, line and dotted field in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from nuggetizer.errors import InputError
from nuggetizer.formats import read_narratives, sub_narratives_from_nuggets


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_good_narratives_are_cleaned(tmp_path: Path) -> None:
    path = _write(tmp_path / "n.jsonl",
                  '{"qid": "1", "sub_narratives": [" a ", {"text": "\\"b\\""}]}')
    assert read_narratives(path) == {"1": ["a", "b"]}


@pytest.mark.parametrize(("line", "message"), [
    ('{"qid": "2", "sub_narratives": ["ok", ""]}',
     'n.jsonl:2: field \'sub_narratives[1]\' must be a non-empty string or an object '
     'with a "text" string, got string \'""\''),
    ('{"qid": "2", "sub_narratives": "x"}',
     'n.jsonl:2: field \'sub_narratives\' must be array, got string \'"x"\''),
    ('{"qid": "2"}', "n.jsonl:2: missing field 'sub_narratives' (expected array)"),
])
def test_bad_narrative_named_by_file_line_field(tmp_path: Path, line: str,
                                                message: str) -> None:
    path = _write(tmp_path / "n.jsonl", '{"qid": "1", "sub_narratives": ["a"]}', line)
    with pytest.raises(InputError) as caught:
        read_narratives(path)
    assert str(caught.value).endswith(message)


def test_mapped_sub_narrative_must_be_a_string(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.jsonl", '{"qid": "1", "nuggets": [{"mapped_sub_narrative": '
                  '"\\"x\\""}, {"text": "no mapping"}, {"mapped_sub_narrative": "x"}]}')
    assert sub_narratives_from_nuggets(path) == {"1": ["x"]}
    bad = _write(tmp_path / "b.jsonl",
                 '{"qid": "1", "nuggets": [{"mapped_sub_narrative": 3}]}')
    with pytest.raises(InputError) as caught:
        sub_narratives_from_nuggets(bad)
    assert str(caught.value).endswith(
        "b.jsonl:1: field 'nuggets[0].mapped_sub_narrative' must be string, got integer '3'")
