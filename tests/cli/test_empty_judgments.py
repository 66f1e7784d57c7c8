"""`score` and `report` on judgments that hold nothing: exit 2 with a line naming the file, no
table of 0 runs, no page; a folder where only some files are empty (every topic of a run
outside the key) still scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli

JUDGED = {"run_id": "r", "qid": "1", "query": "q", "answer_text": "a", "length": 1,
          "nuggets": [{"text": "n", "importance": "vital", "assignment": "support"}]}


@pytest.mark.parametrize("command", ["score", "report"])
def test_an_empty_judgments_file_is_refused(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "judged.jsonl"
    empty.write_text("\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, [command, str(empty), "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert done.stderr.strip() == (f"error: {empty}: no nuggets judgment in it (an empty "
                                   "file): give the judgments `assign` wrote, or judge first")
    assert not out.exists()


def test_a_folder_with_one_empty_file_scores_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "judged"
    folder.mkdir()
    (folder / "empty.jsonl").write_text("")
    (folder / "r.jsonl").write_text(json.dumps(JUDGED) + "\n")
    done = CliRunner().invoke(cli, ["score", str(folder)])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[1].split()[:2] == ["r", "1.0000"]
