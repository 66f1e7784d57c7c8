"""The last readers moved onto the record layer (formats/records.py): a JSONL leaderboard's
rows, a 2026 answer line's field types as `validate` lists them, and a battles journal read
back on resume. Each bad line is named by file, line and dotted field; a good one reads as
before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scripted
from click.testing import CliRunner
from test_battles import baselines, battles_args, records

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import rag26, read_leaderboard_rows, write_leaderboard

ROW = {"run_id": "r1", "topic_id": "q1", "measure": "V", "value": 0.5}


def write_lines(path: Path, *objs: object) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def test_a_jsonl_leaderboard_written_reads_back_with_numbers_or_their_text(
        tmp_path: Path) -> None:
    rows = [("r1", "V", "q1", 0.5), ("r1", "V", "all", 0.25), ("r2", "V", "all", 1.0)]
    path = tmp_path / "board.jsonl"
    write_leaderboard(path, rows, "jsonl")
    assert sorted(read_leaderboard_rows(path, "jsonl")) == sorted(rows)
    texts = write_lines(tmp_path / "texts.jsonl", {**ROW, "value": "0.125"})
    assert read_leaderboard_rows(texts, "jsonl") == [("r1", "V", "q1", 0.125)]


@pytest.mark.parametrize(("row", "said"), [
    ({k: v for k, v in ROW.items() if k != "measure"} | {"mesure": "V"},
     "2: missing field 'measure' (expected string); found 'mesure': rename it 'measure'"),
    ({**ROW, "value": True}, "2: field 'value' must be number, got boolean 'true'"),
    ({**ROW, "value": "high"},
     "2: field 'value' must be a number or a number's text, got string '\"high\"'"),
    ({**ROW, "run_id": ""}, "2: field 'run_id' is empty"),
])
def test_a_bad_jsonl_leaderboard_row_is_named_by_line_and_field(
        tmp_path: Path, row: dict, said: str) -> None:
    path = write_lines(tmp_path / "board.jsonl", ROW, row)
    with pytest.raises(InputError) as caught:
        read_leaderboard_rows(path, "jsonl")
    assert str(caught.value) == f"{path}:{said}"


def test_a_2026_line_lists_every_field_of_the_wrong_type_under_its_rule() -> None:
    """metadata, answer objects and citations are checked by their records; every problem of
    the line is listed (not the first alone), each under the rule of its part."""
    line = {"metadata": {"team_id": "t", "narrative_id": "1", "narrative": "n",
                         "run_desc": "d", "model": "x"},
            "references": ["shard_00001_1"],
            "answer": [{"text": "cited as a string", "citations": "0"},
                       {"text": 5, "citations": [0]},
                       {"citations": []}]}
    found = {(f.field, f.rule, f.severity): f.message for f in rag26.check(line)}
    assert found.pop(("metadata.run_id", "rag26 metadata", "error")).startswith(
        "missing field 'metadata.run_id' (expected string)")
    assert found.pop(("answer[0].citations", "rag26 citation", "error")).startswith(
        "must be array, got string")
    assert found.pop(("answer[1].text", "rag26 answer", "error")).startswith(
        "must be string, got integer '5'")
    assert found.pop(("answer[2].text", "rag26 answer", "error")).startswith(
        "missing field 'answer[2].text'")
    assert "extra keys model" in found.pop(("metadata", "rag26 metadata-extra", "warning"))
    assert not found  # the citation 0 of answer[1] resolves: nothing else to say


def test_a_2026_line_of_the_right_types_has_no_type_findings() -> None:
    line = {"metadata": {"team_id": "t", "narrative_id": "1", "narrative": "n", "run_id": "r",
                         "run_desc": "d"},
            "references": ["shard_00001_1"],
            "answer": [{"text": "a claim", "citations": [0]}]}
    assert rag26.check(line) == []


def test_a_battles_journal_with_a_bad_record_stops_the_resume_naming_it(
        tmp_path: Path) -> None:
    """A hand-edited battles.jsonl whose record lost a run is an error naming file, line and
    field, before any battle is judged again; the file is left as it was."""
    paths = baselines(tmp_path, topics=1)
    scripted.SCRIPTS["battles-journal"] = lambda request: '{"verdict": "A"}'
    out = tmp_path / "out"
    args = battles_args(paths, out, "--no-cache", "--assessor", "scripted:battles-journal")
    assert CliRunner().invoke(cli, args).exit_code == 0
    kept = records(out)
    del kept[1]["run_b"]
    journal = write_lines(out / "battles.jsonl", *kept)
    before = journal.read_bytes()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2, again.output
    assert f"{journal}:2: missing field 'run_b'" in again.output
    assert journal.read_bytes() == before
