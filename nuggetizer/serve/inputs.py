"""A request's records as the toolkit reads its files: each list written by the server into the
request's scratch folder (the payload is data; no path in it is ever opened) and read back by
the same readers and checks as the CLI's files, an error naming the request's field and item."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from nuggetizer.errors import InputError
from nuggetizer.formats.answers import read_runs
from nuggetizer.formats.track_inputs import Passages
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.plan.inputs import answer_targets, cite_targets
from nuggetizer.serve.errors import ApiError
from nuggetizer.types import Answer, Segment

T = TypeVar("T")


def items(payload: Mapping[str, Any], field: str, limit: int, *, required: bool = True
          ) -> list[Any]:
    """The list `payload[field]` (422 when it is missing or not a list; 413 over `limit`)."""
    value = payload.get(field)
    if value is None and not required:
        return []
    if not isinstance(value, list) or (required and not value):
        raise ApiError(422, "invalid_request", f"{field}: a non-empty list is required")
    if len(value) > limit:
        raise ApiError(413, "too_many_items", f"{field}: {len(value)} items; this server takes "
                       f"at most {limit} in one request")
    return value


def text(value: Any, field: str) -> str:
    """A string field (422 otherwise)."""
    if not isinstance(value, str):
        raise ApiError(422, "invalid_request", f"{field}: a string is required")
    return value


def read_back(folder: Path, field: str, records: Sequence[Any],
              read: Callable[[Path], T]) -> T:
    """`records` written as JSONL into `folder` (as `field`.jsonl) and read by `read`; an
    InputError becomes a 422 naming `field` and the item."""
    path = folder / f"{field}.jsonl"
    for number, record in enumerate(records):
        if not isinstance(record, dict):
            raise ApiError(422, "invalid_request", f"{field}[{number}]: an object is required")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    try:
        return read(path)
    except InputError as exc:
        where = f"[{exc.line - 1}]" if exc.line else ""
        raise ApiError(422, "invalid_input", f"{field}{where}: {exc.message}") from None


def keys_of(method: AnswerKeyMethod, folder: Path, records: Sequence[Any],
            lenient: bool = False) -> dict[str, Any]:
    """Key records as the method reads its key file (`lenient`: as `--lenient` does, an
    off-menu label kept as an unjudged item)."""
    return read_back(folder, "keys", records, lambda path: method.read_keys(path, lenient))


def flag(payload: Mapping[str, Any], field: str, default: bool = False) -> bool:
    """A boolean field, `default` when absent (422 when not a boolean)."""
    value = payload.get(field, default)
    if not isinstance(value, bool):
        raise ApiError(422, "invalid_request", f"{field}: true or false")
    return value


def targets_of(method: AnswerKeyMethod, folder: Path, records: Sequence[Any],
               passages: Mapping[str, Any] | None = None) -> dict[str, dict[str, Target]]:
    """Answer records (TREC RAG run lines) as the targets the method judges; a method that reads
    the cited passages takes their texts from `passages` ({docid: text})."""
    by_run: dict[str, list[int]] = {}
    for number, record in enumerate(records):
        if not isinstance(record, dict):
            raise ApiError(422, "invalid_request", f"answers[{number}]: an object is required")
        by_run.setdefault(str(record.get("run_id")), []).append(number)
    paths = []
    for k, numbers in enumerate(by_run.values()):  # one file per run, as runs come
        path = folder / f"answers-{k}.jsonl"
        path.write_text("".join(json.dumps(records[n], ensure_ascii=False) + "\n"
                                for n in numbers), encoding="utf-8")
        paths.append((path, numbers))
    try:
        runs: dict[str, dict[str, Answer]] = read_runs(
            [p for p, _ in paths], keep_unresolved=method.judging.citations)
    except InputError as exc:
        numbers = next((n for p, n in paths if exc.path is not None
                        and Path(exc.path).name == p.name), [])
        where = f"[{numbers[exc.line - 1]}]" if exc.line and exc.line <= len(numbers) else ""
        raise ApiError(422, "invalid_input", f"answers{where}: {exc.message}") from None
    made = answer_targets(runs)
    if method.judging.citations:
        own = {str(d): Segment(id=str(d), text=text(t, f"passages.{d}"))
               for d, t in (passages or {}).items()}
        for by_topic in made.values():
            for target in by_topic.values():
                target.documents = {**own, **target.documents}
        try:
            cite_targets(made, Passages(), True, every=not method.first_citation_only)
        except InputError as exc:
            raise ApiError(422, "invalid_input", f"answers: {exc.message}") from None
    return made


def key_inputs_of(records: Sequence[Any], limit: int) -> list[KeyInput]:
    """Topics with their passages: `{"qid", "query", "passages": [{"docid", "text",
    "grade"?}], "reference"?, "sub_narratives"?}` as the KeyInput of each."""
    made = []
    for number, record in enumerate(records):
        where = f"topics[{number}]"
        if not isinstance(record, dict):
            raise ApiError(422, "invalid_request", f"{where}: an object is required")
        passages = items(record, "passages", limit, required=False)
        documents, grades = [], {}
        for k, passage in enumerate(passages):
            if not isinstance(passage, dict):
                raise ApiError(422, "invalid_request", f"{where}.passages[{k}]: an object")
            docid = text(passage.get("docid", f"d{k}"), f"{where}.passages[{k}].docid")
            documents.append(Segment(id=docid, text=text(passage.get("text"),
                                                         f"{where}.passages[{k}].text")))
            if isinstance(passage.get("grade"), int):
                grades[docid] = int(passage["grade"])
        subs = record.get("sub_narratives") or []
        if not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
            raise ApiError(422, "invalid_request", f"{where}.sub_narratives: a list of strings")
        reference = record.get("reference")
        made.append(KeyInput(qid=text(record.get("qid"), f"{where}.qid"),
                             query=text(record.get("query"), f"{where}.query"),
                             reference=text(reference, f"{where}.reference")
                             if reference is not None else None,
                             documents=documents, grades=grades, sub_narratives=list(subs)))
    qids = [i.qid for i in made]
    if len(set(qids)) != len(qids):
        raise ApiError(422, "invalid_input", "topics: a qid is given twice")
    return made


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file the step wrote (none when it wrote none)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
