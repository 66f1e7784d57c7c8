"""The validation layer at the file edge: for every answer-key method, a good key and judgment
file scores, and one bad field, in a key line or a judgment line, stops `score` with exit 2
and one line naming the file, the line and the dotted field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from shared_data import RAG26_DEV

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import JudgmentIds, validated

RUBRICS = RAG26_DEV / "research-rubrics-dev-rubrics.jsonl"
Records = list[dict[str, Any]]


def rubrics_case() -> tuple[Records, Records]:
    """Two real ResearchRubrics lines as the key; every criterion judged on one answer."""
    keys = [json.loads(line) for line in RUBRICS.read_text().splitlines()[:2]]
    judged = [{"run_id": "r1", "qid": k["qid"], "answer_text": "an answer",
               "criteria": [{"criterion": c["criterion"], "weight": c["weight"],
                             "axis": c.get("axis", ""), "label": "satisfied"}
                            for c in k["rubrics"]], "unjudged": 0} for k in keys]
    return keys, judged


def crux_case() -> tuple[Records, Records]:
    keys = [{"qid": "t1", "query": "who built it?",
             "questions": [{"text": "Who?", "answerable": True},
                           {"text": "When?", "answerable": True}],
             "ratings": {"d1": [5, None]}, "tokens": {"d1": 4}}]
    judged = [{"run_id": "r1", "qid": "t1", "target": "answer", "answer_text": "Eiffel built it",
               "ratings": [5, 1], "tokens": 3, "unjudged": 0}]
    return keys, judged


def kpr_case() -> tuple[Records, Records]:
    keys = [{"qid": "t1", "query": "who built it?",
             "key_points": [{"text": "Eiffel built it"}, {"text": "in 1889"}]}]
    judged = [{"run_id": "r1", "qid": "t1", "answer_text": "Eiffel built it",
               "key_points": [{"text": "Eiffel built it", "label": "yes"},
                              {"text": "in 1889", "label": "no"}], "unjudged": 0}]
    return keys, judged


def udcg_case() -> tuple[Records, Records]:
    keys = [{"qid": "t1", "query": "who built it?",
             "passages": [{"doc_id": "d1", "text": "Eiffel built it", "is_relevant": True,
                           "models_info": {}}]}]
    judged = [{"run_id": "r1", "qid": "t1", "model": "m", "docids": ["d1", "d2"],
               "utilities": [0.5, None], "unjudged": 1}]
    return keys, judged


def support_case() -> tuple[Records, Records]:
    judged = [{"run_id": "r1", "qid": "t1",
               "sentences": [{"text": "Eiffel built it.", "citations": ["d1"],
                              "pairs": [{"docid": "d1", "label": "full_support"}]}],
               "unjudged": 0}]
    return [], judged


def battles_case() -> tuple[Records, Records]:
    judged = [{"qid": "t1", "run_a": "r1", "run_b": "r2", "narrative": "who built it?",
               "orders": [{"first": "r1", "verdict": "A"}, {"first": "r2", "verdict": "B"}],
               "result": "a", "flipped": False, "unjudged": 0}]
    return [], judged


def set_at(records: Records, where: tuple[Any, ...], value: Any) -> Records:
    """A copy of `records` with the value at `where` (line index, then keys) replaced, or
    removed when `value` is `...`."""
    out = copy.deepcopy(records)
    node: Any = out
    for step in where[:-1]:
        node = node[step]
    if value is ...:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return out


# method: (good records, (where in the key, value, message), (where in the judgments, ...))
CASES: dict[str, tuple[Callable[[], tuple[Records, Records]], tuple[Any, ...] | None,
                       tuple[Any, ...]]] = {
    "crux": (crux_case, ((0, "ratings", "d1", 1), 9, "field 'ratings.d1[1]' must be at most 5"),
             ((0, "ratings", 1), "high", "field 'ratings[1]' must be integer, got string")),
    "kpr": (kpr_case, ((0, "key_points", 1, "text"), ...,
                       "missing field 'key_points[1].text' (expected string)"),
            ((0, "key_points", 0, "label"), 1, "field 'key_points[0].label' must be string")),
    "udcg": (udcg_case, ((0, "passages", 0, "doc_id"), None,
                         "field 'passages[0].doc_id' must be string, got null"),
             ((0, "utilities", 0), "x", "field 'utilities[0]' must be number, got string")),
    "rubrics": (rubrics_case, ((1, "rubrics", 2, "weight"), "x",
                               "field 'rubrics[2].weight' must be number, got string"),
                ((1, "criteria", 3, "weight"), True, "field 'criteria[3].weight' must be number")),
    "support": (support_case, None, (
        (0, "sentences", 0, "pairs", 0, "label"), ...,
        "missing field 'sentences[0].pairs[0].label' (expected string)")),
    "battles": (battles_case, None, ((0, "orders"), [],
                                     "field 'orders' must hold at least 1 item(s), got 0")),
}


def write(path: Path, records: Records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def score(method: str, key: Path | None, judged: Path, out: Path) -> Result:
    args = ["score", "--method", method, str(judged), "-o", str(out)]
    return CliRunner().invoke(cli, args + (["--key", str(key)] if key else []))


def one_line(result: Result, where: str, what: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert where in result.output and what in result.output, result.output


@pytest.mark.parametrize("method", sorted(CASES))
def test_a_bad_field_is_named_by_file_line_and_path(tmp_path: Path, method: str) -> None:
    make, bad_key, bad_judgment = CASES[method]
    keys, judged = make()
    key = write(tmp_path / "key.jsonl", keys) if keys else None
    good = write(tmp_path / "judged.jsonl", judged)
    board = tmp_path / "board.tsv"
    scored = score(method, key, good, board)
    assert scored.exit_code == 0, scored.output
    assert "r1" in board.read_text()
    if bad_key is not None:
        where, value, what = bad_key
        bad = write(tmp_path / "bad-key.jsonl", set_at(keys, where, value))
        one_line(score(method, bad, good, tmp_path / "b1.tsv"), f"{bad}:{where[0] + 1}:", what)
    where, value, what = bad_judgment
    bad = write(tmp_path / "bad-judged.jsonl", set_at(judged, where, value))
    one_line(score(method, key, bad, tmp_path / "b2.tsv"), f"{bad}:{where[0] + 1}:", what)
    assert not (tmp_path / "b1.tsv").exists() and not (tmp_path / "b2.tsv").exists()


def test_crux_context_judgments_are_checked_too(tmp_path: Path) -> None:
    keys, _ = crux_case()
    context = {"run_id": "r2", "qid": "t1", "target": "context", "docids": ["d1", "d9"],
               "ratings": {"d1": [5, None]}, "tokens": {"d1": 4, "d9": 2}, "unjudged": 0}
    key = write(tmp_path / "key.jsonl", keys)
    bad = write(tmp_path / "judged.jsonl", [context])
    one_line(score("crux", key, bad, tmp_path / "b.tsv"), f"{bad}:1:",
             "docids lists 'd9' but ratings does not rate it")
    context["docids"] = ["d1"]
    write(bad, [context])
    assert score("crux", key, bad, tmp_path / "b.tsv").exit_code == 0


@pytest.mark.parametrize(("record", "message"), [
    ({"qid": "t1"}, "missing field 'run_id' (expected string or integer)"),
    ({"run_id": "", "qid": "t1"}, "field 'run_id' is empty"),
    ({"run_id": True, "qid": "t1"}, "field 'run_id' must be string or integer, got boolean"),
    ({"run_id": "r1", "qid": [1]}, "field 'qid' must be string or integer, got array"),
])
def test_ids_in_plain_words(record: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        validated(JudgmentIds, record, Path("j.jsonl"), 4)
    assert str(info.value).startswith(f"j.jsonl:4: {message}")
    assert validated(JudgmentIds, {"run_id": 7, "qid": "t1", "x": 1}, Path("j"), 1).qid == "t1"
