"""Readers and writers on the real TREC RAG 2024 files, and each strict error on a broken copy.

The real files are read from ../shared/data beside the project, never copied into it.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections import Counter
from pathlib import Path

import pytest
from shared_data import RAG24

from nuggetizer.errors import InputError
from nuggetizer.formats import (
    Journal,
    assessment_record,
    field,
    iter_jsonl,
    nuggets_record,
    read_assessments,
    read_corpus,
    read_nuggets,
    read_qrels,
    read_run,
    read_runs,
    read_topics,
    write_jsonl_atomic,
    write_text_atomic,
)
from nuggetizer.types import AssessedNugget, Assessment

DATA = RAG24
RUNS = sorted((DATA / "runs").glob("*.jsonl"))
QRELS = DATA / "qrels.rag24.test.txt"
TOPICS = DATA / "topics.rag24.test.tsv"
NUGGETS = DATA / "nuggets.mistral.jsonl"



def raises_input_error(call, *args, **kwargs) -> InputError:
    """Run `call` and return the InputError it must raise."""
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    return info.value


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run_lines() -> list[str]:
    """The raw lines of one real run file."""
    return RUNS[0].read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def lenient_nuggets():
    return read_nuggets(NUGGETS, lenient=True)


# --- the real files ---------------------------------------------------------------------------


def test_real_runs_read_cleanly():
    assert len(RUNS) == 3
    runs = read_runs(RUNS)
    assert sorted(runs) == sorted(p.stem for p in RUNS)
    for path in RUNS:
        run_id, answers = read_run(path)
        assert run_id == path.stem
        assert len(answers) == 301
        first = next(iter(answers.values()))
        assert first.topic_id == "2024-105741"
        assert first.topic.startswith("is it dangerous to have wbc")
        assert first.response_length and first.sentences and first.text
        for answer in answers.values():
            assert answer.run_id == run_id
            for sentence in answer.sentences:
                assert all(0 <= c < len(answer.references) for c in sentence.citations)


def test_real_qrels():
    qrels = read_qrels(QRELS)
    assert len(qrels) == 20_429
    assert len({q.qid for q in qrels}) == 89
    assert [q.line for q in qrels[:3]] == [1, 2, 3] and qrels[-1].line == 20_429
    assert Counter(q.grade for q in qrels) == {0: 7712, 1: 6305, 2: 4663, 3: 1749}


def test_real_topics():
    topics = read_topics(TOPICS)  # CRLF line endings
    assert len(topics) == 301
    first = next(iter(topics.values()))
    assert first.id == "2024-145979"
    assert first.text == "what is vicarious trauma and how can it be coped with?"
    assert not any("\r" in t.text or "\t" in t.text for t in topics.values())


def test_real_nuggets_strict_names_the_first_bad_label():
    # The mistral file holds castorini's "failed" and other stray labels the scorer LLM wrote.
    err = raises_input_error(read_nuggets, NUGGETS)
    assert err.path == str(NUGGETS) and err.line == 31
    assert "nuggets[20].importance" in err.message and "'failed'" in err.message


def test_real_nuggets_lenient(lenient_nuggets, caplog):
    with caplog.at_level(logging.WARNING, logger="nuggetizer.formats.nuggets"):
        nuggets = read_nuggets(NUGGETS, lenient=True)
    assert len(nuggets) == 301  # 301 lines, the last one without a newline
    counts = Counter(n.importance for nl in nuggets.values() for n in nl.nuggets)
    assert counts == {"vital": 3557, "okay": 2548, "unjudged": 40}
    warned = [r.getMessage() for r in caplog.records]
    # one warning for the file, with the count (issue 28: it was one per line, seven)
    assert len(warned) == 1 and warned[0].startswith(
        f"{NUGGETS}: 40 importance label(s) not recognised on 7 line(s), the first on line 31")
    topic = nuggets["2024-105741"]
    assert topic.query == "is it dangerous to have wbc over 15,000 without treatment?"
    assert topic.nuggets[0].text == "High WBC (15,000) may indicate illness"


# --- writers and round trips ------------------------------------------------------------------


def test_nuggets_round_trip(lenient_nuggets, tmp_path):
    provenance = {"assessor": "openai:test", "template_sha256": "0" * 64}
    out = tmp_path / "deep" / "nuggets.jsonl"
    records = [nuggets_record(nl, provenance) for nl in lenient_nuggets.values()]
    write_jsonl_atomic(out, records)
    first = out.read_bytes()
    assert read_nuggets(out) == lenient_nuggets  # strict now: every label is a known one
    assert json.loads(first.splitlines()[0])["provenance"] == provenance
    assert list(json.loads(first.splitlines()[0])) == ["qid", "query", "nuggets", "provenance"]
    write_jsonl_atomic(out, records)
    assert out.read_bytes() == first  # deterministic, byte for byte
    assert "provenance" not in nuggets_record(next(iter(lenient_nuggets.values())), None)
    assert os.listdir(out.parent) == ["nuggets.jsonl"]  # no temp file left behind


def test_assessments_round_trip(lenient_nuggets, tmp_path):
    _, answers = read_run(RUNS[0])
    labels = ["support", "partial_support", "not_support", "unjudged"]
    assessments = []
    for qid, nl in list(lenient_nuggets.items())[:20]:
        answer = answers[qid]
        nuggets = [
            AssessedNugget(
                text=n.text,
                importance=n.importance,
                assignment=labels[k % 4],
                raw="I cannot tell" if k % 4 == 3 else None,
            )
            for k, n in enumerate(nl.nuggets)
        ]
        assessments.append(
            Assessment(
                run_id=answer.run_id,
                qid=qid,
                query=nl.query,
                answer_text=answer.text,
                length=answer.response_length,
                nuggets=nuggets,
            )
        )
    out = tmp_path / "assessments.jsonl"
    write_jsonl_atomic(out, (assessment_record(a, {"track": "rag24"}) for a in assessments))
    assert read_assessments(out) == assessments
    record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert list(record) == [
        "run_id", "qid", "query", "answer_text", "length", "nuggets", "provenance",
    ]
    assert list(record["nuggets"][0]) == ["text", "importance", "assignment"]
    assert list(record["nuggets"][3]) == ["text", "importance", "assignment", "raw"]


def test_assessments_read_castorini_shape(tmp_path):
    line = {
        "query": "q", "qid": "7", "answer_text": "a", "response_length": 12, "run_id": "r",
        "nuggets": [{"text": "n", "importance": "vital", "assignment": "support"}],
    }
    (a,) = read_assessments(write_lines(tmp_path / "c.jsonl", [json.dumps(line)]))
    assert (a.run_id, a.qid, a.length, a.nuggets[0].assignment) == ("r", "7", 12, "support")


def test_write_atomic_keeps_old_file_on_failure(tmp_path):
    out = tmp_path / "out.jsonl"
    write_jsonl_atomic(out, [{"a": "é"}])
    assert out.read_bytes() == '{"a": "é"}\n'.encode()

    def broken():
        yield {"b": 1}
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(out, broken())
    assert out.read_bytes() == '{"a": "é"}\n'.encode()
    assert os.listdir(tmp_path) == ["out.jsonl"]
    write_text_atomic(tmp_path / "sub" / "t.tsv", "run\tV\nr\t0.5\n")
    assert (tmp_path / "sub" / "t.tsv").read_text(encoding="utf-8") == "run\tV\nr\t0.5\n"


# --- the journal ------------------------------------------------------------------------------


def test_journal_append_load_and_torn_line(tmp_path):
    path = tmp_path / "assessments.jsonl.partial"
    journal = Journal(path)
    assert journal.load() == []
    records = [{"run_id": "r", "qid": str(i), "text": "naïve"} for i in range(3)]
    for record in records:
        journal.append(record)
    journal.close()
    whole = path.read_bytes()
    assert whole.count(b"\n") == 3

    with open(path, "ab") as fh:  # a crash in the middle of a write
        fh.write(b'{"run_id": "r", "qid": "3", "te')
    assert Journal(path).load() == records
    assert path.read_bytes() == whole  # the torn tail is truncated away

    with open(path, "ab") as fh:  # complete JSON but the newline never made it
        fh.write(b'{"run_id": "r", "qid": "3"}')
    assert Journal(path).load() == records
    assert path.read_bytes() == whole

    with open(path, "ab") as fh:
        fh.write(b'{"broken\n')  # a newline-terminated but invalid last line
    journal = Journal(path)
    assert journal.load() == records
    journal.append({"qid": "3"})
    journal.close()
    assert Journal(path).load() == [*records, {"qid": "3"}]

    journal.remove()
    assert not path.exists() and Journal(path).load() == []


def test_journal_append_repairs_a_torn_tail_first(tmp_path):
    path = tmp_path / "j.partial"
    path.write_bytes(b'{"a": 1}\n{"a": 2, "b')
    with Journal(path) as journal:
        journal.append({"a": 3})
    assert path.read_bytes() == b'{"a": 1}\n{"a": 3}\n'


def test_journal_damage_before_the_end_is_an_error(tmp_path):
    path = write_lines(tmp_path / "j.partial", ['{"a": 1}', "not json", '{"a": 3}'])
    err = raises_input_error(Journal(path).load)
    assert (err.path, err.line) == (str(path), 2)
    assert path.read_bytes().count(b"\n") == 3  # nothing truncated


# --- JSONL errors -----------------------------------------------------------------------------


def test_malformed_json_line(run_lines, tmp_path):
    path = write_lines(tmp_path / "run.jsonl", [run_lines[0], run_lines[1][:80], run_lines[2]])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line) == (str(path), 2)
    assert "expected a JSON object" in err.message and "invalid JSON" in err.message
    assert '{"run_id": "baseline_rag24' in err.message  # an excerpt of what was found
    assert str(err).startswith(f"{path}:2: ")


def test_json_line_that_is_not_an_object(tmp_path):
    path = write_lines(tmp_path / "x.jsonl", ['{"a": 1}', "", "[1, 2]"])
    err = raises_input_error(lambda: list(iter_jsonl(path)))
    assert (err.line, err.path) == (3, str(path))
    assert "expected a JSON object, found a JSON array: '[1, 2]'" in err.message


def test_missing_file(tmp_path):
    err = raises_input_error(read_run, tmp_path / "nope.jsonl")
    assert (err.path, err.line, err.message) == (str(tmp_path / "nope.jsonl"), None, "no such file")


def test_field_rejects_a_boolean_for_an_integer():
    err = raises_input_error(field, {"grade": True}, "grade", int, "f.jsonl", 4)
    assert str(err) == "f.jsonl:4: field 'grade' must be integer, got boolean 'true'"


# --- run errors -------------------------------------------------------------------------------


def edited(line: str, edit) -> str:
    obj = json.loads(line)
    edit(obj)
    return json.dumps(obj)


def test_run_missing_field(run_lines, tmp_path):
    bad = edited(run_lines[1], lambda o: o.pop("answer"))
    path = write_lines(tmp_path / "run.jsonl", [run_lines[0], bad])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line) == (str(path), 2)
    assert err.message == "missing field 'answer' (expected array)"


def test_run_citations_as_a_string(run_lines, tmp_path):
    def edit(obj):
        obj["answer"][2]["citations"] = "0, 1"

    path = write_lines(tmp_path / "run.jsonl", [*run_lines[:4], edited(run_lines[4], edit)])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line) == (str(path), 5)
    assert "'answer[2].citations' must be array, got string" in err.message


def test_run_citation_outside_references(run_lines, tmp_path):
    def edit(obj):
        obj["answer"][0]["citations"] = [len(obj["references"])]

    path = write_lines(tmp_path / "run.jsonl", [edited(run_lines[0], edit)])
    err = raises_input_error(read_run, path)
    assert err.line == 1 and "answer[0].citations[0]" in err.message
    assert "outside references" in err.message


def test_run_duplicate_topic(run_lines, tmp_path):
    path = write_lines(tmp_path / "run.jsonl", [run_lines[0], run_lines[1], run_lines[0]])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line) == (str(path), 3)
    assert err.message == "duplicate topic '2024-105741' (also on line 1)"


def test_run_two_run_ids(run_lines, tmp_path):
    other = edited(run_lines[1], lambda o: o.update(run_id="someone-else"))
    path = write_lines(tmp_path / "run.jsonl", [run_lines[0], other])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line) == (str(path), 2)
    assert err.message == (
        f"line 2 has run id 'someone-else' but line 1 has '{RUNS[0].stem}': one run per file"
    )


def test_run_empty_file(tmp_path):
    path = write_lines(tmp_path / "run.jsonl", ["", "  "])
    err = raises_input_error(read_run, path)
    assert (err.path, err.line, err.message) == (str(path), None, "run file is empty")


def test_same_run_id_in_two_files(tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(RUNS[0].read_bytes())
    err = raises_input_error(read_runs, [RUNS[0], copy])
    assert err.path == str(copy) and str(RUNS[0]) in err.message


def test_run_2025_shape(run_lines, tmp_path):
    """The TREC RAG 2025 shape, citing by segment id, reads as the same answer."""
    obj = json.loads(run_lines[0])
    refs = obj["references"]
    shaped = {
        "metadata": {
            "team_id": "t",
            "run_id": obj["run_id"],
            "narrative_id": obj["topic_id"],
            "narrative": obj["topic"],
            "type": "automatic",
        },
        "references": refs,
        "answer": [
            {"text": s["text"], "citations": [refs[c] for c in s["citations"]]}
            for s in obj["answer"]
        ],
    }
    path = write_lines(tmp_path / "run25.jsonl", [json.dumps(shaped)])
    run_id, answers = read_run(path)
    (answer,) = answers.values()
    _, original = read_run(write_lines(tmp_path / "run24.jsonl", [run_lines[0]]))
    expected = original[obj["topic_id"]].model_copy(update={"response_length": None})
    assert run_id == obj["run_id"] and answer == expected

    shaped["answer"][0]["citations"] = ["msmarco_v2.1_doc_00_0#0_0"]
    path = write_lines(tmp_path / "run25.jsonl", [json.dumps(shaped)])
    err = raises_input_error(read_run, path)
    assert err.line == 1 and "not in references" in err.message


# --- qrels errors -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qrels_lines() -> list[str]:
    with open(QRELS, encoding="utf-8") as fh:
        return [next(fh).rstrip("\n") for _ in range(5)]


def test_qrels_three_columns(qrels_lines, tmp_path):
    qid, _, docid, grade = qrels_lines[2].split()
    path = write_lines(tmp_path / "q.qrels", [*qrels_lines[:2], f"{qid} {docid} {grade}"])
    err = raises_input_error(read_qrels, path)
    assert (err.path, err.line) == (str(path), 3)
    assert "expected 4 columns (qid iter docid grade), found 3" in err.message


def test_qrels_non_integer_grade(qrels_lines, tmp_path):
    qid, it, docid, _ = qrels_lines[3].split()
    path = write_lines(tmp_path / "q.qrels", [*qrels_lines[:3], f"{qid}\t{it}\t{docid}\t1.5"])
    err = raises_input_error(read_qrels, path)
    assert (err.path, err.line) == (str(path), 4)
    assert err.message == "grade must be an integer, got '1.5'"


def test_qrels_negative_grade_and_tabs(qrels_lines, tmp_path):
    qid, it, docid, _ = qrels_lines[0].split()
    qrels = read_qrels(write_lines(tmp_path / "q.qrels", ["", f"{qid}\t{it}\t{docid}\t-1"]))
    assert [(q.qid, q.docid, q.grade, q.line) for q in qrels] == [(qid, docid, -1, 2)]


def test_qrels_twice_judged_and_empty(qrels_lines, tmp_path):
    path = write_lines(tmp_path / "q.qrels", [*qrels_lines, qrels_lines[1]])
    err = raises_input_error(read_qrels, path)
    assert err.line == 6 and "also on line 2" in err.message
    err = raises_input_error(read_qrels, write_lines(tmp_path / "e.qrels", []))
    assert (err.line, err.message) == (None, "no judgments in file")


# --- corpus -----------------------------------------------------------------------------------


def corpus_lines() -> list[str]:
    return [
        json.dumps({"docid": "d#0", "title": "T0", "segment": "zero", "url": "u"}),
        json.dumps({"id": "d#1", "contents": "one", "meta": {"id": "d#0"}}),
        "",
        json.dumps({"_id": 2, "text": "two \"quoted\" id\": \"d#1\"", "title": None}),
        json.dumps({"segment_id": "d\\#3", "segment": "three"}),
    ]


def test_corpus_reads_all_and_wanted(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", corpus_lines())
    every = read_corpus(path)
    assert list(every) == ["d#0", "d#1", "2", "d\\#3"]
    assert every["d#0"].title == "T0" and every["2"].title == ""
    assert every["2"].text == 'two "quoted" id": "d#1"'
    assert list(read_corpus(path, {"d#1", "missing"})) == ["d#1"]
    assert list(read_corpus(path, {"2", "d\\#3"})) == ["2", "d\\#3"]
    assert read_corpus(path, set()) == {}


def test_corpus_gzip(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(corpus_lines()) + "\n")
    assert list(read_corpus(path, {"d#0"})) == ["d#0"]


def test_corpus_tsv(tmp_path):
    path = write_lines(tmp_path / "c.tsv", ["a\tfirst passage", "b\tsecond passage"])
    assert read_corpus(path, {"b"})["b"].text == "second passage"
    path = write_lines(tmp_path / "bad.tsv", ["a\tx", "b"])
    err = raises_input_error(read_corpus, path)
    assert err.line == 2 and "found 1" in err.message


def test_corpus_empty(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ["", "   "])
    err = raises_input_error(read_corpus, path)
    assert (err.path, err.line, err.message) == (str(path), None, "corpus is empty")
    err = raises_input_error(read_corpus, write_lines(tmp_path / "c2.jsonl", []), {"x"})
    assert err.message == "corpus is empty"


def test_corpus_errors(tmp_path):
    lines = corpus_lines()
    path = write_lines(tmp_path / "c.jsonl", [*lines, lines[0]])
    err = raises_input_error(read_corpus, path)
    assert err.line == 6 and err.message == "duplicate segment id 'd#0' (also on line 1)"
    path = write_lines(tmp_path / "t.jsonl", [lines[0], lines[1][:30]])  # truncated
    err = raises_input_error(read_corpus, path, {"d#0"})
    assert err.line == 2 and "expected a JSON object" in err.message
    path = write_lines(tmp_path / "n.jsonl", [json.dumps({"docid": "x", "body": "?"})])
    err = raises_input_error(read_corpus, path)
    assert "'contents' / 'segment' / 'text'" in err.message


# --- topics -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def topic_lines() -> list[str]:
    return TOPICS.read_text(encoding="utf-8").splitlines()[:4]


def test_topics_duplicate(topic_lines, tmp_path):
    path = write_lines(tmp_path / "t.tsv", [*topic_lines, topic_lines[1]])
    err = raises_input_error(read_topics, path)
    assert (err.path, err.line) == (str(path), 5)
    topic_id = topic_lines[1].split("\t")[0]
    assert err.message == f"duplicate topic id {topic_id!r} (also on line 2)"


def test_topics_bad_lines(topic_lines, tmp_path):
    path = write_lines(tmp_path / "t.tsv", [topic_lines[0], topic_lines[1].replace("\t", " ")])
    err = raises_input_error(read_topics, path)
    assert err.line == 2 and "expected 2 tab-separated columns" in err.message
    path = write_lines(tmp_path / "t.tsv", [topic_lines[0], "x\t  "])
    assert raises_input_error(read_topics, path).message == "empty text for topic 'x'"
    path = write_lines(tmp_path / "t.tsv", [""])
    assert raises_input_error(read_topics, path).message == "no topics in file"


def test_topics_jsonl(tmp_path):
    lines = [
        json.dumps({"id": 1, "title": "one"}),
        json.dumps({"qid": "2", "query": "two"}),
        json.dumps({"id": "3", "narrative": "I am trying to understand three."}),
    ]
    topics = read_topics(write_lines(tmp_path / "t.jsonl", lines))
    assert [t.id for t in topics.values()] == ["1", "2", "3"]
    assert topics["2"].text == "two" and topics["3"].text.startswith("I am trying")


# --- labels -----------------------------------------------------------------------------------


def test_bad_importance_label(tmp_path):
    with open(NUGGETS, encoding="utf-8") as fh:
        lines = [next(fh).rstrip("\n") for _ in range(3)]

    def edit(obj):
        obj["nuggets"][1]["importance"] = "essential"
        del obj["nuggets"][2]["importance"]

    path = write_lines(tmp_path / "n.jsonl", [lines[0], edited(lines[1], edit)])
    err = raises_input_error(read_nuggets, path)
    assert (err.path, err.line) == (str(path), 2)
    assert err.message == (
        "nuggets[1].importance label 'essential' is not one of vital, okay, unjudged "
        "(--lenient records off-menu labels as unjudged items)"
    )
    lenient = read_nuggets(path, lenient=True)[json.loads(lines[1])["qid"]]
    assert [n.importance for n in lenient.nuggets[:3]] == ["vital", "unjudged", "unjudged"]
    path = write_lines(tmp_path / "d.jsonl", [lines[0], lines[2], lines[0]])
    err = raises_input_error(read_nuggets, path)
    assert err.line == 3 and "also on line 1" in err.message


def test_bad_assignment_label(tmp_path):
    def line(assignment: str) -> str:
        return json.dumps({
            "run_id": "r", "qid": "q1", "query": "q", "answer_text": "a",
            "nuggets": [
                {"text": "n1", "importance": "vital", "assignment": "support"},
                {"text": "n2", "importance": "okay", "assignment": assignment},
            ],
        })

    path = write_lines(tmp_path / "a.jsonl", [line("supported")])
    err = raises_input_error(read_assessments, path)
    assert (err.path, err.line) == (str(path), 1)
    assert err.message == (
        "nuggets[1].assignment label 'supported' is not one of "
        "support, partial_support, not_support, unjudged "
        "(--lenient records off-menu labels as unjudged items)"
    )
    (lenient,) = read_assessments(path, lenient=True)
    assert [n.assignment for n in lenient.nuggets] == ["support", "unjudged"]
    path = write_lines(tmp_path / "b.jsonl", [line("support"), line("not_support")])
    err = raises_input_error(read_assessments, path)
    assert err.line == 2 and "assessed twice (also on line 1)" in err.message
