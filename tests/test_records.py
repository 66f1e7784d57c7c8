"""One validation layer at the file edge (formats/records.py): every method's key and judgment
lines checked against its pydantic model; a bad line is one error naming the file, the line,
the field as a dotted path and the shape its object must have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from shared_data import RAG26_DEV

import nuggetizer
from nuggetizer.cli import cli
from nuggetizer.errors import InputError

RUBRICS = RAG26_DEV / "research-rubrics-dev-rubrics.jsonl"


def real_rubrics() -> dict[str, Any]:
    return json.loads(RUBRICS.read_text(encoding="utf-8").splitlines()[0])


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def keys_error(method: str, records: list[dict[str, Any]], tmp_path: Path) -> str:
    path = write_lines(tmp_path / f"{method}.jsonl", records)
    with pytest.raises(InputError) as caught:
        nuggetizer.load_keys(nuggetizer.method(method), path)
    return str(caught.value)


def judgments_error(method: str, records: list[dict[str, Any]], tmp_path: Path) -> str:
    folder = tmp_path / f"{method}-judged"
    folder.mkdir()
    write_lines(folder / "run.jsonl", records)
    with pytest.raises(InputError) as caught:
        nuggetizer.load_judgments(nuggetizer.method(method), folder)
    return str(caught.value)


def test_a_real_rubric_with_a_weight_in_words(tmp_path: Path) -> None:
    good = real_rubrics()
    bad = json.loads(json.dumps(good))
    bad["rubrics"][3]["weight"] = "heavy"
    text = keys_error("rubrics", [good, bad], tmp_path)
    assert text == (f"{tmp_path / 'rubrics.jsonl'}:2: field 'rubrics[3].weight' must be a "
                    "number, got string; rubrics[3] must be an object with a string "
                    "'criterion', a number 'weight' and an optional string 'axis'")
    assert len(nuggetizer.load_keys(nuggetizer.method("rubrics"),
                                    write_lines(tmp_path / "ok.jsonl", [good]))) == 1


def test_bad_rubric_keys_stop_assign_with_one_line(tmp_path: Path) -> None:
    bad = real_rubrics()
    del bad["rubrics"][0]["criterion"]
    key = write_lines(tmp_path / "key.jsonl", [bad])
    run = write_lines(tmp_path / "run.jsonl", [{
        "run_id": "r", "topic_id": bad["qid"], "topic": "t", "references": [],
        "answer": [{"text": "An answer.", "citations": []}]}])
    result = CliRunner().invoke(cli, ["assign", "--method", "rubrics", "--key", str(key),
                                      "--run", str(run), "-o", str(tmp_path / "j"),
                                      "--assessor", "mock", "--no-cache"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{key}:1: field 'rubrics[0].criterion' is missing" in result.output
    assert not (tmp_path / "j").exists()


@pytest.mark.parametrize(("method", "record", "expected"), [
    ("crux", {"qid": "d1", "query": "q", "questions": [{"text": "who?"}, {"text": "why?"}],
              "ratings": {"p1": [3, 6]}},
     ":1: field 'ratings.p1[1]' should be less than or equal to 5"),
    ("crux", {"qid": "d1", "query": "q", "questions": [{"text": "who?"}],
              "ratings": {"p1": [3, 4]}},
     ":1: ratings['p1'] must list 1 ratings (integers 0-5 or null), got 2"),
    ("kpr", {"qid": "t", "query": "q", "key_points": [{"text": "a"}, {"text": 7}]},
     ":1: field 'key_points[1].text' must be a string, got integer; key_points[1] must be an "
     "object with a string 'text'"),
    ("udcg", {"qid": "t", "query": "q", "passages": [{"text": "no id"}]},
     ":1: field 'passages[0].doc_id' is missing"),
    ("nuggets", {"qid": "", "query": "q", "nuggets": []}, ":1:"),
])
def test_bad_keys_of_every_method(tmp_path: Path, method: str, record: dict[str, Any],
                                  expected: str) -> None:
    text = keys_error(method, [record], tmp_path)
    assert text.startswith(str(tmp_path / f"{method}.jsonl") + ":1:") and expected in text


@pytest.mark.parametrize(("method", "record", "expected"), [
    ("support", {"run_id": "r", "qid": "t", "sentences": [{"pairs": [{"label": None}]}]},
     "field 'sentences[0].pairs[0].label' must be a string, got null; sentences[0].pairs[0] "
     "must be an object with a string 'label'"),
    ("rubrics", {"run_id": "r", "qid": "t", "criteria": [
        {"criterion": "c", "weight": True, "axis": "a", "label": "satisfied"}]},
     "field 'criteria[0].weight' must be a number, got boolean"),
    ("battles", {"qid": "t", "run_a": "a", "run_b": "b", "orders": []},
     "field 'orders' list should have at least 1 item"),
    ("crux", {"qid": "t", "answer_text": "x"}, "field 'run_id' is missing"),
])
def test_bad_judgments_of_every_method(tmp_path: Path, method: str, record: dict[str, Any],
                                       expected: str) -> None:
    text = judgments_error(method, [record], tmp_path)
    assert f"run.jsonl:1: {expected}" in text
