"""The payloads castorini's servers take (nuggetizer 0.0.6 `serve`, umbrela `serve`), read
into plain records: the direct forms, Anserini REST search results, umbrela judgments, ragnarok
answer records, and `castorini.cli.v1` envelopes wrapping any of them; and the envelope they
answer with. Written from their documented contracts; a bad payload is a ValueError whose
message names the field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nuggetizer.formats import rag26
from nuggetizer.measures.nuggets import LENGTH_LIMIT, answer_length

SCHEMA = "castorini.cli.v1"
DEFAULT_MIN_JUDGMENT = 2

CREATE_OVERRIDES = frozenset({
    "model", "creator_model", "scorer_model", "window_size", "max_nuggets", "min_judgment",
    "execution_mode", "log_level", "use_azure_openai", "use_openrouter", "reasoning_effort",
    "include_trace", "include_reasoning", "redact_prompts"})
ASSIGN_OVERRIDES = frozenset({
    "model", "execution_mode", "log_level", "use_azure_openai", "use_openrouter",
    "reasoning_effort", "include_trace", "include_reasoning", "redact_prompts",
    "lenient"})  # this server's own: off-menu importance labels judged (as --lenient)
JUDGE_OVERRIDES = frozenset({
    "backend", "model", "prompt_file", "prompt_type", "few_shot_count", "execution_mode",
    "max_concurrency", "use_azure_openai", "use_openrouter", "reasoning_effort", "device",
    "include_reasoning", "include_trace", "redact_prompts"})


def envelope(repo: str, command: str, *, status: str = "success", exit_code: int = 0,
             inputs: dict[str, Any] | None = None, resolved: dict[str, Any] | None = None,
             artifacts: list[dict[str, Any]] | None = None,
             validation: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None,
             errors: list[dict[str, Any]] | None = None,
             warnings: list[str] | None = None) -> dict[str, Any]:
    """A `castorini.cli.v1` response envelope."""
    return {"schema_version": SCHEMA, "repo": repo, "command": command, "mode": "execute",
            "status": status, "exit_code": exit_code, "inputs": inputs or {},
            "resolved": resolved or {}, "artifacts": artifacts or [],
            "validation": validation or {}, "metrics": metrics or {},
            "warnings": warnings or [], "errors": errors or []}


def data_artifact(name: str, data: Any) -> dict[str, Any]:
    return {"name": name, "kind": "data", "data": data}


def error_envelope(repo: str, command: str, code: str, message: str,
                   retryable: bool = False) -> dict[str, Any]:
    """The envelope of a refused request (validation_error, exit code 5, as theirs) or of one
    that failed (runtime_error, exit code 6: an LLM that failed, `retryable` when a later
    try may succeed)."""
    runtime = code in ("runtime_error", "internal_error", "llm_error", "failed")
    return envelope(repo, command, status="runtime_error" if runtime else "validation_error",
                    exit_code=6 if runtime else 5,
                    errors=[{"code": "runtime_error" if runtime else "validation_error",
                             "message": message, "details": {"reason": code},
                             "retryable": retryable}])


def _artifact_data(payload: dict[str, Any], name: str | None) -> Any:
    """The data of the envelope's artifact `name` (None: the first one holding a record)."""
    for artifact in payload.get("artifacts") or []:
        if isinstance(artifact, dict) and (name is None or artifact.get("name") == name):
            return artifact.get("data", artifact.get("value"))
    raise ValueError(f"the {SCHEMA} envelope has no artifact {name!r}")


def is_envelope(payload: Any) -> bool:
    return (isinstance(payload, dict) and payload.get("schema_version") == SCHEMA
            and isinstance(payload.get("artifacts"), list))


def _one_record(data: Any, what: str) -> dict[str, Any]:
    if isinstance(data, list):
        if len(data) != 1:
            raise ValueError(f"{what}: the envelope must hold exactly one record")
        data = data[0]
    if not isinstance(data, dict):
        raise ValueError(f"{what}: the envelope's artifact must hold a record object")
    return data


def unwrap_query_record(payload: dict[str, Any], what: str) -> dict[str, Any]:
    """A direct record, or the one record with `query` and `candidates` (or umbrela's
    `judgments`) an envelope wraps."""
    if not is_envelope(payload):
        return payload
    for artifact in payload["artifacts"]:
        if not isinstance(artifact, dict):
            continue
        data = artifact.get("data", artifact.get("value"))
        if artifact.get("name") == "judgments" and what == "create":
            if not isinstance(data, list):
                raise ValueError("judgments: the envelope's artifact must hold a list")
            return {"judgments": data}
        if isinstance(data, dict) and {"query", "candidates"} <= data.keys():
            return data
        if isinstance(data, list) and data and isinstance(data[0], dict) \
                and {"query", "candidates"} <= data[0].keys():
            return _one_record(data, what)
    raise ValueError(f"{what}: the envelope holds no record with query and candidates")


def overrides(payload: dict[str, Any], allowed: frozenset[str], command: str
              ) -> dict[str, Any]:
    """The request's `overrides` (top level, and inside a wrapped record); unknown fields are
    an error, as castorini's servers say."""
    combined: dict[str, Any] = {}
    sources = [payload]
    if is_envelope(payload):
        try:
            sources.append(unwrap_query_record(payload, command))
        except ValueError:
            pass
    for source in sources:
        given = source.get("overrides", {})
        if not isinstance(given, dict):
            raise ValueError("overrides must be an object when provided")
        combined.update(given)
    unknown = sorted(set(combined) - allowed)
    if unknown:
        repo = "judge" if command == "judge" else "nuggetizer"
        raise ValueError(f"unsupported {repo} override field(s): {', '.join(unknown)}")
    if combined.get("use_azure_openai") and combined.get("use_openrouter"):
        raise ValueError("use_azure_openai and use_openrouter cannot both be true in overrides")
    return combined


def _query(query: Any) -> tuple[str, str]:
    """(qid, text) of a query given as a string or an object with `text` (and `qid`)."""
    if isinstance(query, str):
        return "q0", query
    if isinstance(query, dict) and isinstance(query.get("text"), str):
        return str(query.get("qid", "q0")), query["text"]
    raise ValueError("query: a string or an object with `text` is required")


@dataclass
class Candidate:
    docid: str
    text: str
    judgment: float | None = None


@dataclass
class QueryRecord:
    """One query with its candidate passages (create's and judge's input)."""

    qid: str
    query: str
    candidates: list[Candidate] = field(default_factory=list)


def _candidate(candidate: Any, index: int) -> Candidate:
    docid = f"d{index}"
    if isinstance(candidate, str):
        return Candidate(docid, candidate)
    if not isinstance(candidate, dict):
        raise ValueError(f"candidates[{index}]: a string or an object is required")
    docid = str(candidate.get("docid", docid))
    doc = candidate.get("doc")
    found = candidate.get("text") if isinstance(candidate.get("text"), str) else None
    if found is None and isinstance(doc, str):
        found = doc
    if found is None and isinstance(doc, dict):
        found = next((doc[k] for k in ("segment", "contents") if isinstance(doc.get(k), str)),
                     None)
    if found is None:
        raise ValueError(f"candidates[{index}]: give `text`, `doc` as a string, `doc.segment` "
                         "or `doc.contents`")
    judgment = candidate.get("judgment")
    if judgment is not None and (isinstance(judgment, bool)
                                 or not isinstance(judgment, int | float)):
        raise ValueError(f"candidates[{index}].judgment: a number is required")
    return Candidate(docid, found, judgment)


def query_record(payload: dict[str, Any], command: str) -> QueryRecord:
    """create's or judge's input: {query, candidates} (Anserini REST results included), or
    (create) umbrela's {judgments: [{query, passage, judgment}]}, direct or in an envelope."""
    record = unwrap_query_record(payload, command)
    if command == "create" and "judgments" in record:
        judgments = record["judgments"]
        if not isinstance(judgments, list) or not judgments:
            raise ValueError("judgments: a non-empty list is required")
        made = QueryRecord("q0", "")
        for index, j in enumerate(judgments):
            if not isinstance(j, dict) or not isinstance(j.get("query"), str) \
                    or not isinstance(j.get("passage"), str):
                raise ValueError(f"judgments[{index}]: `query` and `passage` strings required")
            if index == 0:
                made.query = j["query"]
            elif j["query"] != made.query:
                raise ValueError("judgments: every judgment must share the same query")
            made.candidates.append(_candidate({"docid": j.get("docid", f"d{index}"),
                                               "text": j["passage"],
                                               **({"judgment": j["judgment"]}
                                                  if "judgment" in j else {})}, index))
        return made
    if "query" not in record:
        raise ValueError("query: required")
    qid, text = _query(record["query"])
    candidates = record.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise ValueError("candidates: a non-empty list is required")
    return QueryRecord(qid, text, [_candidate(c, i) for i, c in enumerate(candidates)])


@dataclass
class AssignItem:
    """One answer to judge against one nugget list."""

    query: str
    context: str
    nuggets: list[dict[str, str]]
    qid: str = "q0"
    run_id: str = "direct-assign"
    response_length: int = 0
    nugget_query: str = ""
    length: int | None = None  # L of a ragnarok answer record, from its answer objects


def _nuggets(record: Any, what: str) -> list[dict[str, str]]:
    if not isinstance(record, dict) or not isinstance(record.get("nuggets"), list):
        raise ValueError(f"{what}: an object with a `nuggets` list is required")
    made = []
    for index, nugget in enumerate(record["nuggets"]):
        if isinstance(nugget, str):
            nugget = {"text": nugget}
        if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str):
            raise ValueError(f"{what}.nuggets[{index}]: an object with `text` is required")
        made.append({"text": nugget["text"],
                     "importance": str(nugget.get("importance", "vital"))})
    return made


def _answer(record: Any, what: str) -> tuple[str, str]:
    """(topic, context) of a ragnarok answer record: its sentences' texts joined."""
    if not isinstance(record, dict) or not isinstance(record.get("topic"), str):
        raise ValueError(f"{what}: `topic` as a string is required")
    answer = record.get("answer")
    if not isinstance(answer, list) or not all(isinstance(s, dict)
                                               and isinstance(s.get("text"), str)
                                               for s in answer):
        raise ValueError(f"{what}.answer: a list of objects with string `text` is required")
    return record["topic"], " ".join(s["text"] for s in answer)


def record_length(record: dict[str, Any]) -> int:
    """L of a ragnarok answer record, counted from its answer objects as `validate` and
    `assign` count a run's (measures/nuggets.answer_length, a TREC RAG 2026 record's at its
    limit), so that `score` never has to split the joined text again."""
    texts = [s["text"] for s in record["answer"]]
    limit = rag26.WORD_LIMIT if rag26.is_rag26(record) else LENGTH_LIMIT
    return answer_length(texts, limit)


def assign_items(payload: dict[str, Any]) -> tuple[list[AssignItem], bool]:
    """assign's input as items, and whether it was a batch (answer_records)."""
    if {"query", "context", "nuggets"} <= payload.keys():
        if not isinstance(payload["query"], str) or not isinstance(payload["context"], str):
            raise ValueError("query and context: strings are required")
        return [AssignItem(payload["query"], payload["context"],
                           _nuggets(payload, "payload"))], False
    if {"answer_record", "nugget_record"} <= payload.keys() or \
            {"answer_envelope", "nugget_envelope"} <= payload.keys():
        if "answer_record" in payload:
            answer, nuggets = payload["answer_record"], payload["nugget_record"]
        else:
            answer = _one_record(_artifact_data(payload["answer_envelope"],
                                                "generation-results"), "answer_envelope")
            nuggets = _one_record(_artifact_data(payload["nugget_envelope"], "create-result"),
                                  "nugget_envelope")
        topic, context = _answer(answer, "answer_record")
        return [AssignItem(topic, context, _nuggets(nuggets, "nugget_record"))], False
    if {"answer_records", "nugget_record"} <= payload.keys() or \
            {"answers_envelope", "nugget_envelope"} <= payload.keys():
        if "answer_records" in payload:
            answers, nuggets = payload["answer_records"], payload["nugget_record"]
        else:
            answers = _artifact_data(payload["answers_envelope"], "generation-results")
            nuggets = _one_record(_artifact_data(payload["nugget_envelope"], "create-result"),
                                  "nugget_envelope")
        if not isinstance(answers, list) or not answers:
            raise ValueError("answer_records: a non-empty list is required")
        if not isinstance(nuggets, dict) or not isinstance(nuggets.get("qid"), str):
            raise ValueError("nugget_record: `qid` as a string is required")
        listed = _nuggets(nuggets, "nugget_record")
        items = []
        for index, answer in enumerate(answers):
            what = f"answer_records[{index}]"
            topic, context = _answer(answer, what)
            if answer.get("topic_id") != nuggets["qid"]:
                raise ValueError(f"{what}.topic_id must match nugget_record.qid")
            length = answer.get("response_length", 0)
            run_id = answer.get("run_id", "direct-assign")
            if not isinstance(length, int) or not isinstance(run_id, str):
                raise ValueError(f"{what}: response_length an integer, run_id a string")
            items.append(AssignItem(topic, context, listed, nuggets["qid"], run_id, length,
                                    str(nuggets.get("query", topic)), record_length(answer)))
        return items, True
    raise ValueError("assign takes `query`/`context`/`nuggets`, `answer_record`/"
                     "`nugget_record`, `answer_envelope`/`nugget_envelope`, `answer_records`/"
                     "`nugget_record` or `answers_envelope`/`nugget_envelope`")
