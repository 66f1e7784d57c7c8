"""Files of the alternative answer keys (CRUX, KPR, UDCG): readers strict, file:line errors.

- key topics: JSONL with an id (`topic_id`/`qid`/`id`/`example_id`), a query (`request`/
  `query`/`title`/`text`/`question`/`narrative`) and, for CRUX, the reference (`summary`).
- keys and judgments: JSONL, one line per topic (keys) or per (run, topic) (judgments), with
  the fields each method writes (keys/crux.py, keys/kpr.py, keys/udcg.py) and a provenance block.
- report runs: JSONL answers as plain text, `{"qid"/"topic_id", "response"/"answer"}`, such
  as the CRUX DUC reports; TREC RAG answer runs are read by formats/runs.py.
- the UDCG reference sample: a JSON array of `{"example_id", "question", "passages": [{"doc_id",
  "text", "is_relevant", "models_info": {model: {"no_res_prob"}}}]}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import field as get_field
from nuggetizer.formats.jsonl import first_field, id_field, iter_jsonl, type_name

ID_KEYS = ("topic_id", "qid", "id", "example_id")
QUERY_KEYS = ("request", "query", "title", "text", "question", "narrative")
REFERENCE_KEYS = ("summary", "reference")
ANSWER_KEYS = ("response", "answer")
# Fields each method's key records must carry, with their JSON types.
KEY_FIELDS: dict[str, dict[str, type]] = {
    "crux": {"questions": list, "ratings": dict},
    "kpr": {"key_points": list},
    "udcg": {"passages": list},
}


@dataclass
class KeyTopic:
    """A topic as the answer-key builders read it."""

    qid: str
    query: str
    reference: str | None = None
    line: int | None = None  # 1-based line in the topics file


def read_key_topics(path: str | Path) -> dict[str, KeyTopic]:
    """Topics with optional reference texts, in file order; duplicates are errors."""
    path = Path(path)
    topics: dict[str, KeyTopic] = {}
    for number, obj in iter_jsonl(path):
        qid = id_field(obj, ID_KEYS, path, number)
        _, query = first_field(obj, QUERY_KEYS, str, path, number)
        _, reference = first_field(obj, REFERENCE_KEYS, str, path, number, default=None)
        if qid in topics:
            raise InputError(path, number, f"duplicate topic id {qid!r}")
        topics[qid] = KeyTopic(qid, query.strip(), reference, number)
    if not topics:
        raise InputError(path, None, "no topics in file")
    return topics


def read_keys(path: str | Path, method: str) -> dict[str, dict[str, Any]]:
    """A method's key file: {qid: record}, each checked for the fields the method writes."""
    path = Path(path)
    keys: dict[str, dict[str, Any]] = {}
    for number, obj in iter_jsonl(path):
        qid = id_field(obj, ("qid",), path, number)
        get_field(obj, "query", str, path, number)
        for name, typ in KEY_FIELDS.get(method, {}).items():
            get_field(obj, name, typ, path, number)
        _check_items(obj, method, path, number)
        if qid in keys:
            raise InputError(path, number, f"duplicate qid {qid!r}")
        keys[qid] = obj
    if not keys:
        raise InputError(path, None, f"no {method} keys in file")
    return keys


def _check_items(obj: dict[str, Any], method: str, path: Path, line: int) -> None:
    lists = {"crux": ("questions", "text"), "kpr": ("key_points", "text"),
             "udcg": ("passages", "doc_id")}
    if method not in lists:
        return
    name, inner = lists[method]
    for k, item in enumerate(obj[name]):
        if not isinstance(item, dict) or not isinstance(item.get(inner), str):
            raise InputError(path, line, f"{name}[{k}] must be an object with a string "
                             f"{inner!r}, got {type_name(item)}")
    if method == "crux":
        n = len(obj["questions"])
        for docid, row in obj["ratings"].items():
            ok = isinstance(row, list) and len(row) == n and all(
                r is None or (isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= 5)
                for r in row)
            if not ok:
                raise InputError(path, line, f"ratings[{docid!r}] must list {n} ratings "
                                 "(integers 0-5 or null)")


def read_judgments(path: str | Path) -> list[dict[str, Any]]:
    """Judgment records of any method: each needs `run_id` and `qid`."""
    path = Path(path)
    records = []
    for number, obj in iter_jsonl(path):
        id_field(obj, ("run_id",), path, number)
        id_field(obj, ("qid",), path, number)
        records.append(obj)
    return records


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
