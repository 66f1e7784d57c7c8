"""`nuggetizer validate` on the three real TREC RAG 2024 baseline runs and on broken copies."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import RAG24

from nuggetizer.cli import cli
from nuggetizer.formats import read_topics
from nuggetizer.validate import exit_code, validate_run

RUNS = sorted((RAG24 / "runs").glob("*.jsonl"))
TOPICS = RAG24 / "topics.rag24.test.tsv"


def words(text: str) -> int:
    return len(unicodedata.normalize("NFKC", text).split())


def over_400_lines(path: Path) -> list[int]:
    """Line numbers of answers over 400 words, counted here independently of the checker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [n for n, line in enumerate(lines, 1)
            if sum(words(s["text"]) for s in json.loads(line)["answer"]) > 400]


@pytest.fixture(scope="module")
def topics() -> set[str]:
    return set(read_topics(TOPICS))


def test_real_runs_over_length_found_and_fixed(topics, tmp_path):
    assert len(RUNS) == 3
    for path in RUNS:
        report = validate_run(path, topics, fix_dir=tmp_path)
        expected = over_400_lines(path)
        assert expected, "the real runs hold over-length answers"
        assert report.errors == 0 and report.topics == 301 and report.year == 2024
        assert report.run_id == path.stem  # the official runs name their files after the run id
        flagged = [p.line for p in report.problems if p.field == "answer"]
        assert flagged == expected and report.over_length == len(expected)
        assert report.fixed == str(tmp_path / path.name)
        original = path.read_text(encoding="utf-8").splitlines()
        fixed = Path(report.fixed).read_text(encoding="utf-8").splitlines()
        assert len(fixed) == len(original)
        for n, (old, new) in enumerate(zip(original, fixed), 1):
            old_obj, new_obj = json.loads(old), json.loads(new)
            total = sum(words(s["text"]) for s in new_obj["answer"])
            assert total <= 400 and new_obj["response_length"] == (
                total if n in expected else old_obj["response_length"])
            assert new_obj["answer"] == old_obj["answer"][: len(new_obj["answer"])]
            if n in expected:  # only trailing sentences dropped, and no more than needed
                dropped = old_obj["answer"][len(new_obj["answer"])]
                assert total + words(dropped["text"]) > 400
        again = validate_run(report.fixed, topics)
        assert again.over_length == 0 and again.errors == 0


def test_real_runs_cli_summary_and_json(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["validate", *map(str, RUNS), "--topics", str(TOPICS)])
    assert result.exit_code == 0, result.output  # warnings only: they do not fail the check
    strict = runner.invoke(cli, ["validate", *map(str, RUNS), "--topics", str(TOPICS),
                                 "--strict"])
    assert strict.exit_code == 1 and strict.stderr == result.stderr, strict.output
    for path in RUNS:
        assert path.stem in result.stdout
        assert f"{path}:{over_400_lines(path)[0]}: warning: answer:" in result.stderr
    result = runner.invoke(cli, ["validate", str(RUNS[0]), "--topics", str(TOPICS), "--json",
                                 "--strict"])
    data = json.loads(result.stdout)
    assert data["exit_code"] == result.exit_code == 1 and data["runs"][0]["topics"] == 301
    assert data["runs"][0]["over_length"] == len(over_400_lines(RUNS[0]))


def _broken_copy(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """A copy of a real run with one known problem per chosen line; returns {problem: line}."""
    lines = [json.loads(x) for x in RUNS[1].read_text(encoding="utf-8").splitlines()[:12]]
    where = {"type": 2, "ref_id": 4, "cite": 6, "duplicate": 8, "run_id": 10, "ref_type": 11}
    lines[where["type"] - 1]["response_length"] = "271"
    lines[where["type"] - 1]["answer"][0]["text"] = 17
    lines[where["ref_id"] - 1]["references"][0] = "doc-1"
    first_refs = len(lines[where["cite"] - 1]["references"])
    lines[where["cite"] - 1]["answer"][1]["citations"] = [first_refs]
    lines[where["duplicate"] - 1]["topic_id"] = lines[0]["topic_id"]
    lines[where["run_id"] - 1]["run_id"] = "someone-else"
    lines[where["ref_type"] - 1]["references"] = "msmarco_v2.1_doc_00_0#0_0"
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "{not json\n")
    where["json"] = 13
    return path, where


def test_broken_copy_every_problem_with_its_line(tmp_path, topics):
    path, where = _broken_copy(tmp_path)
    report = validate_run(path, topics, fix_dir=tmp_path / "fixed")
    found = {(p.line, p.field.split("[")[0], p.severity) for p in report.problems}
    assert (where["type"], "response_length", "error") in found
    assert (where["type"], "answer", "error") in found  # answer[0].text is a number
    assert any(p.line == where["type"] and p.field == "answer[0].text" for p in report.problems)
    assert (where["ref_id"], "references", "error") in found
    cite = [p for p in report.problems if p.line == where["cite"]]
    assert [p.field for p in cite] == ["answer[1].citations[0]"] and "outside" in cite[0].message
    dup = [p for p in report.problems if p.line == where["duplicate"]]
    assert dup[0].field == "topic_id" and "also on line 1" in dup[0].message
    run = [p for p in report.problems if p.line == where["run_id"]]
    assert run[0].field == "run_id" and "one run per file" in run[0].message
    assert (where["ref_type"], "references", "error") in found
    assert (where["json"], "", "error") in found
    missing = [p for p in report.problems if p.line is None]
    assert missing and "have no answer" in missing[0].message  # 12 of 301 topics answered
    assert all(str(path) in str(p) for p in report.problems)
    assert report.fixed is None and not (tmp_path / "fixed").exists()  # never fix a broken run
    assert exit_code([report]) == 2
    result = CliRunner().invoke(cli, ["validate", str(path), "--topics", str(TOPICS)])
    assert result.exit_code == 2
    assert f"{path}:{where['cite']}: error: answer[1].citations[0]:" in result.stderr


def test_reference_limit_and_unknown_topic(tmp_path, topics):
    obj = json.loads(RUNS[0].read_text(encoding="utf-8").splitlines()[0])
    obj["references"] = [f"msmarco_v2.1_doc_00_{k}#0_0" for k in range(21)]
    obj["answer"] = [{"text": "One short sentence.", "citations": [20]}]
    obj["response_length"] = 3
    other = dict(obj, topic_id="2024-0")
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(obj) + "\n" + json.dumps(other) + "\n")
    report = validate_run(path, topics)
    messages = [(p.line, p.field, p.message) for p in report.problems]
    assert (1, "references", "21 references, over the limit of 20") in messages
    assert (2, "topic_id", "unknown topic '2024-0'") in messages
    assert validate_run(path, None, ref_limit=25).errors == 0  # no topics file: no topic checks


def test_2025_shape(tmp_path):
    refs = [f"msmarco_v2.1_doc_00_{k}#0_0" for k in range(30)]
    line = {"metadata": {"run_id": "r25", "narrative_id": "t1", "narrative": "n"},
            "references": refs,
            "answer": [{"text": "A cited sentence here.", "citations": [refs[29], 3]},
                       {"text": "Bad.", "citations": ["msmarco_v2.1_doc_99_1#0_0"]}]}
    path = tmp_path / "r25.jsonl"
    path.write_text(json.dumps(line) + "\n")
    report = validate_run(path, {"t1"})
    assert report.year == 2025 and report.run_id == "r25" and report.citations == 3
    assert [(p.line, p.field) for p in report.problems] == [(1, "answer[1].citations[0]")]
