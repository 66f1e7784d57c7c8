"""Key, judgment and report files of the answer-key methods: strict, file:line errors.

- keys and judgments: JSONL, one line per topic (keys) or per (run, topic) (judgments), with
  the fields each method writes (its pydantic records: methods/records.py) and a provenance block.
- report runs: JSONL answers as plain text, `{"qid"/"topic_id", "response"/"answer"}`, such
  as the CRUX DUC reports; TREC RAG answer runs are read by formats/runs.py.
- the UDCG reference sample: a JSON array of `{"example_id", "question", "passages": [{"doc_id",
  "text", "is_relevant", "models_info": {model: {"no_res_prob"}}}]}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, StrictBool, StrictStr, model_validator
from pydantic_core import PydanticCustomError

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import IdText, Record, type_name, validated


class ReportAnswer(Record):
    """A plain-text answer: its topic, its text and, optionally, its run."""

    qid: IdText = Field(validation_alias=AliasChoices("qid", "topic_id", "id"))
    text: StrictStr = Field(validation_alias=AliasChoices("response", "answer"))
    run_id: IdText | None = None


class UdcgPassage(Record):
    """A passage of the UDCG reference sample: its id and whether it is relevant."""

    doc_id: StrictStr
    is_relevant: StrictBool

    @model_validator(mode="before")
    @classmethod
    def _both(cls, value: Any) -> Any:
        """Both fields, in one message: the sample's passages are made by a script."""
        if not (isinstance(value, dict) and isinstance(value.get("doc_id"), str)
                and isinstance(value.get("is_relevant"), bool)):
            raise PydanticCustomError("rule", "needs a string 'doc_id' and a boolean "
                                      "'is_relevant'")
        return value


class UdcgExample(Record):
    """An example of the UDCG reference sample: its id, question and passages."""

    example_id: StrictStr
    question: StrictStr
    passages: list[UdcgPassage]


def read_reports(path: str | Path, run_id: str | None = None) -> tuple[str, dict[str, str]]:
    """A run of plain-text answers: (run id, {qid: text}); the run id is the `run_id` field,
    else `run_id` given, else the file name without its extension."""
    path = Path(path)
    answers: dict[str, str] = {}
    found: str | None = None
    for number, obj in iter_jsonl(path):
        answer = validated(ReportAnswer, obj, path, number)
        found = found or answer.run_id
        if answer.qid in answers:
            raise InputError(path, number, f"duplicate topic {answer.qid!r}")
        answers[answer.qid] = answer.text
    if not answers:
        raise InputError(path, None, "no answers in file")
    return run_id or found or path.name.split(".")[0], answers


def read_udcg_dataset(path: str | Path) -> list[dict[str, Any]]:
    """The UDCG reference sample as key records (`qid` = example_id, `query` = question);
    passages keep their `text`. Every problem names the file and the example."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except ValueError as exc:
        raise InputError(path, None, f"not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise InputError(path, None, f"expected a JSON array of examples, got {type_name(data)}")
    records = []
    for index, example in enumerate(data):
        checked = validated(UdcgExample, example, path, None, where=f"example {index}: ")
        passages = [{"doc_id": p.doc_id, "text": raw.get("text", ""),
                     "is_relevant": p.is_relevant, "models_info": raw.get("models_info", {})}
                    for p, raw in zip(checked.passages, example["passages"], strict=True)]
        record = {"qid": example["example_id"], "query": example["question"],
                  "passages": passages}
        if isinstance(example.get("udcg"), dict):
            record["udcg"] = example["udcg"]
        records.append(record)
    return records
