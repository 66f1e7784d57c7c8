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

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import first_field, id_field, iter_jsonl, type_name

ANSWER_KEYS = ("response", "answer")


def read_reports(path: str | Path, run_id: str | None = None) -> tuple[str, dict[str, str]]:
    """A run of plain-text answers: (run id, {qid: text}); the run id is the `run_id` field,
    else `run_id` given, else the file name without its extension."""
    path = Path(path)
    answers: dict[str, str] = {}
    found: str | None = None
    for number, obj in iter_jsonl(path):
        qid = id_field(obj, ("qid", "topic_id", "id"), path, number)
        _, text = first_field(obj, ANSWER_KEYS, str, path, number)
        if "run_id" in obj:
            found = found or id_field(obj, ("run_id",), path, number)
        if qid in answers:
            raise InputError(path, number, f"duplicate topic {qid!r}")
        answers[qid] = text
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
        where = f"example {index}"
        if not isinstance(example, dict):
            raise InputError(path, None, f"{where}: expected an object")
        for name, typ in (("example_id", str), ("question", str), ("passages", list)):
            if not isinstance(example.get(name), typ):
                raise InputError(path, None, f"{where}: field {name!r} must be {type_name(typ)}")
        passages = []
        for k, p in enumerate(example["passages"]):
            if not isinstance(p, dict) or not isinstance(p.get("doc_id"), str) or not isinstance(
                p.get("is_relevant"), bool
            ):
                raise InputError(path, None, f"{where}: passages[{k}] needs a string 'doc_id' "
                                 "and a boolean 'is_relevant'")
            passages.append({"doc_id": p["doc_id"], "text": p.get("text", ""),
                             "is_relevant": p["is_relevant"],
                             "models_info": p.get("models_info", {})})
        record = {"qid": example["example_id"], "query": example["question"],
                  "passages": passages}
        if isinstance(example.get("udcg"), dict):
            record["udcg"] = example["udcg"]
        records.append(record)
    return records
