"""What the AutoJudge judge checks before it writes anything: its settings (the workflow's
`settings`, a `--variant`'s, `--set NAME=VALUE`), the framework's reports (parsed by our own
report reader, errors naming the responses file), and the passages the steps read.

On TIRA the judge runs with no `--corpus`: the 2026 reports carry their cited documents in
`documents` {doc id: {id, text, title, url}}. The passages are the given corpus's texts of every
doc id the reports reference or cite, else (no corpus, or an id the corpus lacks) the reports'
own `documents`; an id in neither is a one-line error naming run, topic and id (with the
setting `allow_missing` it is left out, and the steps record it unjudged with that reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.corpus import read_corpus
from nuggetizer.formats.runs import parse_report
from nuggetizer.types import Answer, Segment

# settings -> our options, per step (a variant may set any of them)
ASSESSOR_SETTINGS = {"cache": "--cache", "temperature": "--temperature",
                     "max_tokens": "--max-tokens", "concurrency": "--concurrency",
                     "structured": "--structured", "model_path": "--model-path",
                     "reasoning_effort": "--reasoning-effort", "token_field": "--token-field",
                     "reasoning_tokens": "--reasoning-tokens",
                     "max_tokens_cap": "--max-tokens-cap"}
RELEVANCE_SETTINGS = {"reasks": "--reasks"}
RELEVANCE_FLAGS = ("cited_only", "allow_missing")
NUGGET_SETTINGS = {"min_grade": "--min-grade", "window": "--window",
                   "max_nuggets": "--max-nuggets", "keep": "--keep"}
ASSIGN_SETTINGS = {"batch": "--batch"}
ASSIGN_FLAGS = ("lenient",)
OWN_SETTINGS = ("assessor", "no_cache", "corpus_path", "workdir")
FRAMEWORK_SETTINGS = ("filebase", "outdir")  # set or injected by auto-judge run
KNOWN_SETTINGS = frozenset([*ASSESSOR_SETTINGS, *RELEVANCE_SETTINGS, *RELEVANCE_FLAGS,
                            *NUGGET_SETTINGS, *ASSIGN_SETTINGS, *ASSIGN_FLAGS, *OWN_SETTINGS,
                            *FRAMEWORK_SETTINGS])
FALSE_WORDS = ("", "0", "false", "no", "off")
CACHE_FILE = "nuggetizer-llm-cache.sqlite"  # the judge's LLM cache under $CACHE_DIR


def check_settings(settings: Mapping[str, Any]) -> None:
    """Every setting is one we map to an option (a typo in a variant is an error, not a
    silently ignored name)."""
    unknown = sorted(set(settings) - KNOWN_SETTINGS)
    if unknown:
        raise ConfigError(f"autojudge: unknown setting {unknown[0]!r} (workflow.yml, a "
                          f"--variant or --set); known: {', '.join(sorted(KNOWN_SETTINGS))}")


def is_on(value: Any) -> bool:
    """A flag setting's value: true, 1, yes (a `--set` string or a YAML boolean)."""
    if isinstance(value, str):
        return value.strip().lower() not in FALSE_WORDS
    return bool(value)


def cache_setting(settings: Mapping[str, Any], llm_config: Any) -> str | None:
    """The LLM cache file: the setting `cache`, else CACHE_FILE under the framework's cache
    folder ($CACHE_DIR or $LLM_CACHE_DIR, the LLM configuration's `cache_dir`), else None
    (the toolkit's default)."""
    if settings.get("cache"):
        return str(settings["cache"])
    folder = getattr(llm_config, "cache_dir", None)
    return str(Path(folder).expanduser() / CACHE_FILE) if folder else None


def corpus_file(corpus: str | None) -> Path | None:
    """The passages' corpus: a JSONL(.gz) file, a folder holding corpus.jsonl(.gz), or None
    (no --corpus: the reports' own `documents`)."""
    if not corpus:
        return None
    path = Path(corpus).expanduser()
    if path.is_dir():
        for name in ("corpus.jsonl.gz", "corpus.jsonl"):
            if (path / name).is_file():
                return path / name
        raise ConfigError(f"autojudge: {path} holds no corpus.jsonl(.gz)")
    if not path.is_file():
        raise ConfigError(f"autojudge: corpus {corpus} not found (a file, or a folder with "
                          "corpus.jsonl.gz; ir-datasets ids are not read)")
    return path


@dataclass
class Reports:
    """The framework's reports, checked: our records by run (as the run files hold them), and
    the answers they parse to."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    answers: list[tuple[Answer, str, int]] = field(default_factory=list)  # with file, line


def check_reports(reports: Iterable[Any], record: Any) -> Reports:
    """Each report as our record (`record(report)`), parsed by our report reader; an error
    names the responses file and the report's line in it (its count among the file's
    reports). A run answering a topic twice is an error too."""
    checked = Reports()
    counts: dict[str, int] = {}
    seen: dict[tuple[str, str], str] = {}
    for report in reports:
        source = str(getattr(report, "path", None) or "<responses>")
        counts[source] = counts.get(source, 0) + 1
        obj = record(report)
        answer = parse_report(obj, Path(source), counts[source])
        where = f"{source}:{counts[source]}"
        key = (answer.run_id, answer.topic_id)
        if key in seen:
            raise InputError(source, counts[source], f"run {answer.run_id!r} answers topic "
                             f"{answer.topic_id!r} twice (also at {seen[key]})")
        seen[key] = where
        checked.records.setdefault(answer.run_id, []).append(obj)
        checked.answers.append((answer, source, counts[source]))
    if not checked.records:
        raise ConfigError("autojudge: no responses: the nuggetizer judge pools the runs' "
                          "references (keep nugget_depends_on_responses: true)")
    return checked


def _wanted(answer: Answer) -> list[str]:
    cited = [answer.references[c] for s in answer.sentences for c in s.citations
             if isinstance(c, int) and 0 <= c < len(answer.references)]
    return list(dict.fromkeys([*answer.references, *cited]))


def passages(reports: Reports, corpus: Path | None, allow_missing: bool = False
             ) -> dict[str, Segment]:
    """The text of every doc id the reports reference or cite: from `corpus` when given, else
    (or where it lacks the id) from the reports' `documents`."""
    needed = {d for answer, _, _ in reports.answers for d in _wanted(answer)}
    texts = read_corpus(corpus, needed) if corpus is not None and needed else {}
    carried: dict[str, Segment] = {}  # a doc id names one document, whichever report has it
    for answer, _, _ in reports.answers:
        for docid, segment in answer.documents.items():
            carried.setdefault(docid, segment)
    for answer, source, line in reports.answers:
        for docid in _wanted(answer):
            if docid in texts:
                continue
            if docid in carried:
                texts[docid] = carried[docid]
            elif not allow_missing:
                where = (f"neither in the corpus {corpus} nor in the report's documents"
                         if corpus is not None else
                         "not in the report's documents (and no --corpus was given)")
                raise InputError(source, line, f"run {answer.run_id!r} topic "
                                 f"{answer.topic_id!r} cites {docid!r}, which is {where}; "
                                 "the setting allow_missing judges the rest and counts it "
                                 "unjudged")
    return texts
