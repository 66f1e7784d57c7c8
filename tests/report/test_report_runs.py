"""The report shape of NeuCLIR / RAGTIME / DRAGUN / AutoJudge runs: the real AutoJudge spot-check
runs, files in each shape, and the strict reader's errors (file, line and field); the topics
and corpus of those tracks; and `nuggetizer validate` on reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import SPOT_CHECK

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import read_answer_run, read_corpus, read_runs, read_topics
from nuggetizer.validate import validate_run

SPOT_RUNS = sorted((SPOT_CHECK / "runs").glob("*.jsonl"))


def write(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def report(citations_1: object, references: list | None = None, topic_key: str = "topic_id",
           topic: str = "t1") -> dict:
    record: dict = {"metadata": {"team_id": "team", "run_id": "r1", topic_key: topic},
                    "responses": [{"text": "First sentence.", "citations": []},
                                  {"text": "Second one.", "citations": citations_1}]}
    if references is not None:
        record["references"] = references
    return record


def test_the_spot_check_runs_read_as_answers() -> None:
    runs = read_runs(SPOT_RUNS)
    assert sorted(runs) == ["my_best_run_01", "my_best_run_02", "my_best_run_02_citations"]
    one = runs["my_best_run_01"]["28"]
    # references is empty there: the cited ids become the references
    assert one.references == ["224"] and one.sentences[0].citations == [0]
    assert one.text == "linear theory has an application in the design of quasi-cylindrical " \
                       "surfaces. This is all."
    by_map = runs["my_best_run_02"]["28"]  # {doc id: confidence}
    by_list = runs["my_best_run_02_citations"]["28"]  # [doc ids]
    assert by_map.references == by_list.references == ["279"]
    assert [s.citations for s in by_map.sentences] == [[], [0], []]
    assert [s.citations for s in by_list.sentences] == [[], [0], []]


def test_the_spot_check_topics_and_corpus_read() -> None:
    topics = read_topics(SPOT_CHECK / "queries.jsonl")
    assert list(topics) == ["28"]
    assert topics["28"].text.startswith("what application has the linear theory")
    corpus = read_corpus(SPOT_CHECK / "corpus.jsonl.gz", {"224", "279", "nope"})
    assert sorted(corpus) == ["224", "279"]
    assert "quasi-cylindrical" in corpus["224"].text
    assert len(read_corpus(SPOT_CHECK / "corpus.jsonl.gz")) == 1400


def test_request_id_and_title_topics(tmp_path: Path) -> None:
    path = write(tmp_path / "topics.jsonl", {"request_id": "300", "title": "solar sails",
                                             "background": "x"},
                 {"request_id": 301, "title": "ion drives"})
    topics = read_topics(path)
    assert {k: t.text for k, t in topics.items()} == {"300": "solar sails", "301": "ion drives"}


@pytest.mark.parametrize("citations", [["d2", "d1"], {"d2": 0.9, "d1": 0.5}])
def test_list_and_map_citations_index_references(tmp_path: Path, citations: object) -> None:
    path = write(tmp_path / "run.jsonl", report(citations, ["d1", "d2"], "request_id"))
    run_id, answers = read_answer_run(path)
    assert run_id == "r1" and list(answers) == ["t1"]
    assert [s.citations for s in answers["t1"].sentences] == [[], [1, 0]]
    assert answers["t1"].references == ["d1", "d2"]


def error(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        read_answer_run(path)
    return info.value


@pytest.mark.parametrize(("citations", "message"), [
    ([3], "responses[1].citations[0] must be a doc id (a non-empty string), got integer"),
    ({"d1": "high"}, "responses[1].citations['d1'] must be a number"),
    ({"d1": True}, "responses[1].citations['d1'] must be a number"),
    ("d1", "responses[1].citations"),
    (["d9"], "responses[1].citations cites 'd9', which is not in references"),
    ({"d9": 0.5}, "responses[1].citations cites 'd9', which is not in references"),
])
def test_bad_citations_name_file_line_and_field(tmp_path: Path, citations: object,
                                                message: str) -> None:
    path = write(tmp_path / "run.jsonl", report([], ["d1"], topic="t0"),
                 report(citations, ["d1"]))
    exc = error(path)
    assert exc.line == 2 and exc.path == str(path)
    assert message in str(exc)


def test_a_missing_topic_id_or_run_id_is_an_error(tmp_path: Path) -> None:
    record = report([], ["d1"])
    del record["metadata"]["topic_id"]
    exc = error(write(tmp_path / "run.jsonl", record))
    assert exc.line == 1 and "metadata." in str(exc) and "topic_id" in str(exc)
    record = report([], ["d1"])
    del record["metadata"]["run_id"]
    assert "run_id" in str(error(write(tmp_path / "run2.jsonl", record)))
    bare = report([], ["d1"])
    del bare["metadata"]
    assert "metadata" in str(error(write(tmp_path / "run3.jsonl", bare)))


def test_one_shape_per_file(tmp_path: Path) -> None:
    rag25 = {"metadata": {"run_id": "r1", "narrative_id": "t2"}, "references": ["d1"],
             "answer": [{"text": "x", "citations": [0]}]}
    exc = error(write(tmp_path / "run.jsonl", report([], ["d1"]), rag25))
    assert exc.line == 2 and "one shape per file" in str(exc)


def test_validate_accepts_the_spot_check_runs() -> None:
    topics = str(SPOT_CHECK / "queries.jsonl")
    result = CliRunner().invoke(cli, ["validate", *map(str, SPOT_RUNS), "--topics", topics])
    assert result.exit_code == 0, result.output  # warnings only: run 01 lists no references
    assert "references: empty, but the responses cite 1 doc ids" in result.stderr
    assert "msmarco" not in result.output.lower()
    clean = CliRunner().invoke(cli, ["validate", *map(str, SPOT_RUNS[1:]), "--topics", topics])
    assert clean.exit_code == 0, clean.output


def test_validate_reports_every_problem_of_a_report(tmp_path: Path) -> None:
    bad = report({"d9": "x"}, ["d1", "d1"], topic="t0")
    bad["responses"].append({"text": 5})
    path = write(tmp_path / "run.jsonl", report(["d1"], ["d1"]), bad,
                 {"metadata": {"run_id": "r1"}, "responses": []})
    result = validate_run(path, {"t1", "t0"})
    found = {(p.line, p.field, p.severity) for p in result.problems}
    assert (2, "references[1]", "warning") in found
    assert (2, "responses[1].citations['d9']", "error") in found
    assert (2, "responses[1].citations[0]", "error") in found
    assert (2, "responses[2].text", "error") in found
    assert (3, "metadata.topic_id", "error") in found
    assert result.shape == "report" and result.year is None and result.topics == 2
    many = write(tmp_path / "many.jsonl", report([], [f"x{i}" for i in range(150)]))
    assert validate_run(many).errors == 0  # no RAG reference limit for reports
    assert validate_run(many, ref_limit=100).errors == 1
