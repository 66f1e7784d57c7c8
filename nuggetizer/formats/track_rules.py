"""Per-track rules for report-shape runs (RAGTIME, NeuCLIR, DRAGUN, AutoJudge), each named in
what it reports, with where it comes from.

Sources (read for this module; the URL or repository and path is given for each rule):
- RAGTIME / NeuCLIR length: the organizers' shared validator, hltcoe/rag-run-validator,
  rag_run_validator/__init__.py `validate_length`: the `text` of every response joined by one
  space, counted as NFKC characters (`len(unicodedata.normalize('NFKC', text))`), or as words
  (`len(text.split())`), against the report request's `limit`; over the limit is a warning
  unless `--strict_on_length`. The request `limit` is per topic, e.g. NeuCLIR's
  NeuCLIR/neuclir.github.io assets/data/report-generation-sample.request.zh.jsonl.
- RAGTIME citations: trec-auto-judge/auto-judge-base src/autojudge_base/report.py
  (`RagtimeReportSentence`, `verify_ragtime`): citations are a {doc id: confidence} map,
  confidence in 0..100 (outside: warned, clamped); the references are exactly the cited ids (an
  error there); doc ids look like `47601789-65d8-4706-9bde-fc89fccfdf14_159897` (a warning);
  `metadata.task` is `english` or `multilingual` (an error there: a warning here, since the
  track's own validator does not ask for it). Its `get_sentences_with_citations` orders a map by
  confidence, highest first, ties in map order: formats/runs.py reads every map that way, so
  a sentence's "first" citation is its most confident one.
- RAGTIME truncation before scoring: stated in this project's issue 20 ("RAGTIME scores
  reports truncated to the track's character limit"). No public guideline text saying so was
  found (the RAGTIME guidelines are a document on trec-ragtime.github.io that could not be
  read); the measure is the validator's above.
- NeuCLIR doc ids are UUIDs (NeuCLIR/neuclir.github.io
  assets/data/report-generation-sample.eval.zh.jsonl); citations a list ordered by priority
  (auto-judge-base README, `NeuclirReportSentence`). The unit of NeuCLIR's `limit` is in its
  Report Generation Guidelines (a Google document linked from neuclir.github.io index.md) that
  could not be read: characters are assumed, the shared validator's default.
- DRAGUN 2025: trec-dragun/trec-dragun.github.io content/_index.md ("Task 2: Report
  Generation") and static/trec_dragun_validate.py (`validate_task2`): at most 3 citations per
  sentence, MS MARCO V2.1 segment ids; at most 250 words in all (`len(text.split())` summed),
  both errors; no `references` in the format; metadata `team_id`, `run_id`, `topic_id`, `type`
  (automatic | manual) and `use_starter_kit` (0 | 1).
- AutoJudge: auto-judge-base src/autojudge_base/report.py (`ReportMetaData`: `team_id` and
  `run_id` required; `Report`: `references` optional) and request.py (`Request.limit`,
  `Request.word_limit`). The framework sets no citation cap and no length limit of its own.
- Citation caps for RAGTIME, NeuCLIR and AutoJudge: none found in the sources above.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, PlainValidator
from pydantic_core import PydanticCustomError

from nuggetizer.errors import InputError
from nuggetizer.formats.findings import Finding
from nuggetizer.formats.jsonl import base_suffix, iter_jsonl, iter_objects
from nuggetizer.formats.records import IdText, Record, validated
from nuggetizer.formats.runs import REPORT_TOPIC_KEYS, is_report
from nuggetizer.formats.topics import ID_KEYS

SEGMENT_ID = re.compile(r"^msmarco_v2\.1_doc_\d+_\d+#\d+_\d+$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
RAGTIME_DOC = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+){4}_[A-Za-z0-9]+$")
TRACK_NAMES = ("ragtime", "neuclir", "dragun", "autojudge")


@dataclass(frozen=True)
class TrackRules:
    """What one track asks of a report run; severities are "error" or "warning"."""

    name: str
    unit: str = "characters"  # of the length limit: "characters" (NFKC) or "words"
    default_limit: int | None = None  # when the topic's request gives none
    over_limit: str = "warning"
    truncates: bool = False  # the report is cut to the limit before scoring
    max_citations: int | None = None  # per sentence
    doc_id: re.Pattern[str] | None = None
    doc_id_form: str = ""
    doc_id_severity: str = "warning"
    references: str = "optional"  # "cited": exactly the cited ids; "absent": not in the format
    metadata: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)
    metadata_severity: str = "error"
    confidence_range: tuple[float, float] | None = None


TRACKS = {
    "ragtime": TrackRules(
        "ragtime", truncates=True, doc_id=RAGTIME_DOC,
        doc_id_form="UUID_N, e.g. 47601789-65d8-4706-9bde-fc89fccfdf14_159897",
        references="cited", metadata={"task": ("english", "multilingual")},
        metadata_severity="warning", confidence_range=(0.0, 100.0)),
    "neuclir": TrackRules("neuclir", doc_id=UUID, doc_id_form="a UUID"),
    "dragun": TrackRules(
        "dragun", unit="words", default_limit=250, over_limit="error", max_citations=3,
        doc_id=SEGMENT_ID, doc_id_form="an MS MARCO V2.1 segment id (msmarco_v2.1_doc_N_N#N_N)",
        doc_id_severity="error", references="absent",
        metadata={"team_id": None, "type": ("automatic", "manual"),
                  "use_starter_kit": (0, 1)}),
    "autojudge": TrackRules("autojudge", metadata={"team_id": None}),
}


def detect(obj: dict[str, Any]) -> str | None:
    """The track a report line shows unmistakably: DRAGUN's `use_starter_kit`, RAGTIME's
    `task` (english | multilingual); None otherwise (then only the shape's own checks)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return None
    if "use_starter_kit" in meta:
        return "dragun"
    if meta.get("task") in ("english", "multilingual"):
        return "ragtime"
    return None


@dataclass
class Limit:
    """A topic's length limit in its unit."""

    value: int
    unit: str

    def __str__(self) -> str:
        return f"{self.value} {self.unit}"


def limit_for(rules: TrackRules, topic: str | None, limits: dict[str, Limit],
              given: int | None) -> Limit | None:
    """The length limit of a topic: its request's (`limits`), else `given` (--length-limit, in
    the track's unit), else the track's own (DRAGUN 250 words); None when none is known."""
    if topic is not None and topic in limits:
        return limits[topic]
    value = given if given is not None else rules.default_limit
    return None if value is None else Limit(value, rules.unit)


def _limit_in(unit: str) -> PlainValidator:
    """A length limit in `unit`: absent (null) or a positive integer."""
    def check(value: Any) -> int | None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise PydanticCustomError("rule", "must be a positive integer (the report's length "
                                      "limit in {unit}), got {value}",
                                      {"unit": unit, "value": repr(value)})
        return value
    return PlainValidator(check)


class Request(Record):
    """A report request (topic) line: its id and its length limit, in words or characters."""

    topic_id: IdText = Field(validation_alias=AliasChoices(*ID_KEYS))
    word_limit: Annotated[int | None, _limit_in("words")] = None
    limit: Annotated[int | None, _limit_in("characters")] = None


def request_limits(path: str | Path) -> dict[str, Limit]:
    """Per-topic length limits of a report requests (topics) JSONL: `word_limit` in words,
    else `limit` in characters (auto-judge-base request.py); none from a TSV."""
    path = Path(path)
    if base_suffix(path) not in (".jsonl", ".json"):
        return {}
    found: dict[str, Limit] = {}
    for index, (number, record) in enumerate(iter_objects(path, "an object with an id")):
        where = "" if number is not None else f"item {index}: "
        request = validated(Request, record, path, number, where=where)
        if request.word_limit is not None:
            found[request.topic_id] = Limit(request.word_limit, "words")
        elif request.limit is not None:
            found[request.topic_id] = Limit(request.limit, "characters")
    return found


def length(texts: Sequence[str], unit: str) -> int:
    """The report's length as the validator counts it: the texts joined by one space, NFKC
    characters or whitespace-separated words."""
    joined = " ".join(texts)
    if unit == "words":
        return len(joined.split())
    return len(unicodedata.normalize("NFKC", joined))


def truncate(texts: Sequence[str], limit: Limit) -> list[str]:
    """The texts cut to `limit` as `length` counts it: whole sentences while they fit, the
    one that straddles the limit cut there (NFKC text, or its first words), the rest
    dropped; a sentence cut to nothing is dropped."""
    out: list[str] = []
    used = 0
    for text in texts:
        sep = 1 if out else 0
        if limit.unit == "words":
            words = text.split()
            room = limit.value - used
            if len(words) <= room:
                out.append(text)
                used += len(words)
                continue
            if room > 0:
                out.append(" ".join(words[:room]))
            break
        norm = unicodedata.normalize("NFKC", text)
        if used + sep + len(norm) <= limit.value:
            out.append(text)
            used += sep + len(norm)
            continue
        room = limit.value - used - sep
        if room > 0 and norm[:room].strip():
            out.append(norm[:room])
        break
    return out


def _found(rules: TrackRules, rule: str, fld: str, text: str, severity: str) -> Finding:
    name = f"{rules.name} {rule}"
    return Finding(fld, f"{text} [{name}]", severity, name)


def check_report(rules: TrackRules, obj: dict[str, Any], limit: Limit | None) -> list[Finding]:
    """What the track's rules find in one report line (already checked for shape by the
    caller: this looks only at the track's own rules), each naming its rule."""
    found: list[Finding] = []
    meta = held if isinstance(held := obj.get("metadata"), dict) else {}
    for key, allowed in rules.metadata.items():
        value = meta.get(key)
        if key not in meta or (allowed is None and (not isinstance(value, str)
                                                    or not value.strip())):
            want = "one of " + ", ".join(map(repr, allowed)) if allowed else "a non-empty string"
            found.append(_found(rules, "metadata", f"metadata.{key}",
                                f"missing: expected {want}", rules.metadata_severity))
        elif allowed is not None and (value not in allowed or isinstance(value, bool)):
            found.append(_found(rules, "metadata", f"metadata.{key}", f"is {value!r}, "
                                f"expected one of {', '.join(map(repr, allowed))}",
                                rules.metadata_severity))
    items = listed if isinstance(listed := obj.get("responses"), list) else []
    cited: list[str] = []
    texts: list[str] = []
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            texts.append(item["text"])
        cites = item.get("citations", [])
        where = f"responses[{k}].citations"
        if isinstance(cites, dict) and rules.confidence_range is not None:
            low, high = rules.confidence_range
            for docid, conf in cites.items():
                if isinstance(conf, int | float) and not isinstance(conf, bool) \
                        and not low <= conf <= high:
                    found.append(_found(rules, "confidence", f"{where}[{docid!r}]",
                                        f"confidence {conf} is outside {low:g}..{high:g}",
                                        "warning"))
        ids = [c for c in (list(cites) if isinstance(cites, dict | list) else [])
               if isinstance(c, str)]
        if rules.max_citations is not None and len(ids) > rules.max_citations:
            found.append(_found(rules, "citations-per-sentence", where,
                                f"{len(ids)} citations, over the limit of "
                                f"{rules.max_citations} per sentence", "error"))
        for j, docid in enumerate(ids):
            if rules.doc_id is not None and not rules.doc_id.match(docid):
                found.append(_found(rules, "doc-id", f"{where}[{j}]",
                                    f"{docid!r} is not {rules.doc_id_form}",
                                    rules.doc_id_severity))
        cited.extend(ids)
    found += _references(rules, obj, cited)
    if limit is not None:
        size = length(texts, limit.unit)
        if size > limit.value:
            cut = " (cut to the limit before scoring)" if rules.truncates else ""
            found.append(_found(rules, "length", "responses", f"{size} {limit.unit}, over "
                                f"the limit of {limit}{cut}", rules.over_limit))
    return found


def _references(rules: TrackRules, obj: dict[str, Any], cited: list[str]) -> list[Finding]:
    refs = obj.get("references")
    if rules.references != "cited" or not isinstance(refs, list) or not refs:
        return []
    uncited = [r for r in refs if isinstance(r, str) and r not in set(cited)]
    if not uncited:
        return []
    return [_found(rules, "references-cited", "references", f"{len(uncited)} doc ids no "
                   f"sentence cites, e.g. {uncited[0]!r}: the references must be exactly the "
                   "cited ids", "error")]


def rules_named(track: str, obj: dict[str, Any]) -> TrackRules | None:
    """The rules of `track` ("auto": the track the line shows; "none": no rules)."""
    return TRACKS.get((detect(obj) if track == "auto" else track) or "")


def enforce(paths: Sequence[str | Path], track: str, limits: dict[str, Limit],
            given: int | None) -> tuple[dict[str, tuple[TrackRules, Limits]], list[str]]:
    """Check the report runs among `paths` against their track's rules before judging: the
    first error stops with file, line and field (exit 2); the warnings are returned, said
    once each. Returns, per report run file with rules, its rules and limits (for `cut`)."""
    chosen: dict[str, tuple[TrackRules, Limits]] = {}
    warnings: list[str] = []
    if track == "none":
        return chosen, warnings
    for path in map(Path, paths):
        rules: TrackRules | None = None
        for number, obj in iter_jsonl(path):
            if not is_report(obj):
                break
            rules = rules or rules_named(track, obj)
            if rules is None:
                break
            meta = held if isinstance(held := obj.get("metadata"), dict) else {}
            topic = next((str(meta[k]) for k in REPORT_TOPIC_KEYS if k in meta), None)
            for found in check_report(rules, obj, limit_for(rules, topic, limits, given)):
                if found.severity == "error":
                    raise InputError(path, number, f"{found.field}: {found.message}")
                warnings.append(f"{path}:{number}: {found.field}: {found.message}")
        if rules is not None and rules.truncates:
            chosen[str(path)] = (rules, Limits(limits, given))
    return chosen, warnings


@dataclass
class Limits:
    """The per-topic limits of the requests, and the one given for the others."""

    by_topic: dict[str, Limit]
    given: int | None


def cut(runs: Any, chosen: dict[str, tuple[TrackRules, Limits]]) -> int:
    """Cut, in place, the answers of the runs whose track truncates (RAGTIME) to their
    topic's limit, as the track scores them; the number of answers cut."""
    count = 0
    for answers in runs.values():
        for answer in answers.values():
            if answer.path not in chosen:
                continue
            rules, limits = chosen[answer.path]
            limit = limit_for(rules, answer.topic_id, limits.by_topic, limits.given)
            texts = [s.text for s in answer.sentences]
            if limit is None or length(texts, limit.unit) <= limit.value:
                continue
            kept = truncate(texts, limit)
            answer.sentences = [s.model_copy(update={"text": text})
                                for s, text in zip(answer.sentences, kept)]
            count += 1
    return count
