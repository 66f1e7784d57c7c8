"""TREC RAG 2026 runs written here from the 2026 test narratives: a valid run is read by
validate and the strict reader every command uses; each rule broken once is an error naming
file, line, field and rule; `validate --fix` makes only the safe fixes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from shared_data import RAG26_DEV

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import read_run
from nuggetizer.validate import validate_run

NARRATIVES = RAG26_DEV / "trec_rag_2026_queries.tsv"
Line = dict[str, Any]


def narratives() -> list[tuple[str, str]]:
    """(id, text) of the narratives file, read here apart from the code under test."""
    rows = NARRATIVES.read_text(encoding="utf-8").splitlines()
    return [(r.split("\t")[0], r.split("\t")[1]) for r in rows if r.strip()]


def doc(k: int, j: int) -> str:
    return f"shard_{k:05d}_{1000 + j}"


def line_for(k: int, nid: str, text: str) -> Line:
    """A valid 2026 object: a Markdown heading with no citation, citations by position and by
    doc id, an object without a full stop."""
    return {
        "metadata": {"team_id": "team-x", "narrative_id": nid, "narrative": text,
                     "run_id": "run-x", "run_desc": "written by the test"},
        "references": [doc(k, 0), doc(k, 1), doc(k, 2)],
        "answer": [
            {"text": "## What matters most", "citations": []},
            {"text": f"Point one about narrative {nid}.", "citations": [0, doc(k, 1)]},
            {"text": "- **Point two**, a list item without a full stop",
             "citations": [doc(k, 2), 1, 0]},
        ],
    }


def write_run(path: Path, change: Callable[[list[Line]], None] | None = None) -> Path:
    lines = [line_for(k, nid, text) for k, (nid, text) in enumerate(narratives())]
    if change is not None:
        change(lines)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                    encoding="utf-8")
    return path


def validate(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, ["validate", *map(str, args)])


def test_a_valid_run_passes_validate_and_the_strict_reader(tmp_path: Path) -> None:
    run = write_run(tmp_path / "rag_output_trec_rag_2026.jsonl")
    result = validate(run, "--narratives", NARRATIVES)
    assert result.exit_code == 0, result.output
    report = validate_run(run, {n for n, _ in narratives()},
                          narratives=dict(narratives()))
    assert (report.shape, report.topics, report.errors, report.warnings) == ("rag26", 119, 0, 0)
    assert report.citations == 119 * 5
    run_id, answers = read_run(run)
    assert run_id == "run-x" and len(answers) == 119
    first = answers["rag2026-0"]
    assert first.topic == narratives()[0][1]
    # citations by doc id resolved at the file edge into positions, like the positions given
    assert [s.citations for s in first.sentences] == [[], [0, 1], [2, 1, 0]]


def set_meta(key: str, value: Any, at: int = 4) -> Callable[[list[Line]], None]:
    def change(lines: list[Line]) -> None:
        if value is None:
            del lines[at]["metadata"][key]
        else:
            lines[at]["metadata"][key] = value
    return change


def set_answer(k: int, citations: list[Any], at: int = 4) -> Callable[[list[Line]], None]:
    def change(lines: list[Line]) -> None:
        lines[at]["answer"][k]["citations"] = citations
    return change


def long_answer(lines: list[Line]) -> None:
    # 1,025 words over three objects: the limit is on the sum
    lines[4]["answer"][0]["text"] = "# " + " ".join(["word"] * 500)
    lines[4]["answer"][1]["text"] = " ".join(["word"] * 500)
    lines[4]["answer"][2]["text"] = " ".join(["word"] * 24)


def bad_ref(lines: list[Line]) -> None:
    lines[4]["references"][1] = "msmarco_v2.1_doc_00_1#0_1"


def duplicate(lines: list[Line]) -> None:
    lines[4] = json.loads(json.dumps(lines[2]))


def recopied(lines: list[Line]) -> None:
    """The narrative copied with one space added (read when the case runs, not at import:
    a clone without ../shared/data still collects this module)."""
    set_meta("narrative", narratives()[4][1].replace("?", " ?", 1))(lines)


# (rule, field, how the line is broken, whether the strict reader sees it without the file)
CASES = [
    ("metadata", "metadata.narrative", set_meta("narrative", None), True),
    ("metadata", "metadata.run_desc", set_meta("run_desc", ""), True),
    ("doc-id", "references[1]", bad_ref, True),
    ("citation", "answer[1].citations[1]", set_answer(1, [0, "shard_99999_1"]), True),
    ("citation", "answer[2].citations[0]", set_answer(2, [3]), True),
    ("citations-per-object", "answer[2].citations", set_answer(2, [0, 1, 2, 0]), True),
    ("length", "answer", long_answer, True),
    ("narrative-id", "metadata.topic_id", set_meta("narrative_id", "rag2026-999"), False),
    ("one-object-per-narrative", "metadata.topic_id", duplicate, False),
    ("narrative-copied", "metadata.narrative", recopied, False),
]


@pytest.mark.parametrize("rule,fld,change,strict", CASES, ids=[c[0] + ":" + c[1] for c in CASES])
def test_each_rule_broken_is_an_error_naming_file_line_field_and_rule(
        tmp_path: Path, rule: str, fld: str, change: Callable[[list[Line]], None],
        strict: bool) -> None:
    run = write_run(tmp_path / "run.jsonl", change)
    result = validate(run, "--narratives", NARRATIVES, "--all-problems")
    assert result.exit_code == 2, result.output
    wanted = f"{run}:5: error: {fld}:"
    hits = [x for x in result.output.splitlines() if x.startswith(wanted)]
    assert hits and f"[rag26 {rule}]" in hits[0], result.output
    if strict:  # every command reads runs through this reader, which stops at the same line
        with pytest.raises(InputError) as caught:
            read_run(run)
        assert str(caught.value).startswith(f"{run}:5: {fld}: ")
        assert f"[rag26 {rule}]" in str(caught.value) and "TREC RAG 2026" in str(caught.value)


def test_a_narrative_without_an_object_is_an_error(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run.jsonl", lambda lines: lines.__delitem__(7))
    result = validate(run, "--narratives", NARRATIVES)
    assert result.exit_code == 2
    assert f"{run}: error: topic_id: 1 topics have no answer: rag2026-7 " \
           "[rag26 one-object-per-narrative]" in result.output


def test_the_first_difference_of_a_narrative_is_shown(tmp_path: Path) -> None:
    text = narratives()[4][1]
    run = write_run(tmp_path / "run.jsonl", set_meta("narrative", text[:10] + text[10:].lower()))
    at = next(i for i, (a, b) in enumerate(zip(text[10:].lower(), text[10:])) if a != b) + 10
    result = validate(run, "--narratives", NARRATIVES)
    assert f"differs from the narratives file at character {at + 1}: " in result.output


def test_fix_copies_narratives_and_writes_positions(tmp_path: Path) -> None:
    text = narratives()[4][1]
    run = write_run(tmp_path / "run.jsonl", set_meta("narrative", text + " "))
    out = tmp_path / "fixed"
    result = validate(run, "--narratives", NARRATIVES, "--fix", out)
    assert result.exit_code == 2 and "(--fix copies it from the narratives file)" in result.output
    fixed = out / "run.jsonl"
    assert f"fixed: wrote {fixed}" in result.output
    again = validate(fixed, "--narratives", NARRATIVES)
    assert again.exit_code == 0, again.output
    lines = [json.loads(x) for x in fixed.read_text(encoding="utf-8").splitlines()]
    assert lines[4]["metadata"]["narrative"] == text
    assert all(isinstance(c, int) for x in lines for a in x["answer"] for c in a["citations"])


def test_fix_does_not_drop_citations_beyond_three(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run.jsonl", set_answer(2, [0, 1, 2, 0]))
    out = tmp_path / "fixed"
    result = validate(run, "--narratives", NARRATIVES, "--fix", out)
    assert result.exit_code == 2 and "not fixed by --fix" in result.output
    assert not (out / "run.jsonl").exists()


def test_a_2025_run_with_a_foreign_id_names_the_format_it_was_read_as(tmp_path: Path) -> None:
    def as_2025(lines: list[Line]) -> None:
        for x in lines:
            x["metadata"]["narrative_id"] = "58"
            x["references"] = ["msmarco_v2.1_doc_00_1#0_1", "shard 12"]
            for a in x["answer"]:
                a["citations"] = []
        del lines[1:]
    run = write_run(tmp_path / "run.jsonl", as_2025)
    result = validate(run)
    assert result.exit_code == 2
    assert "the file was read as a TREC RAG 2025 run" in result.output
