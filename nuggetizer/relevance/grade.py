"""Relevance assessment with an LLM (UMBRELA): grade (query, passage) pairs 0-3, or (narrative
with its sub-narratives, passage) pairs 0-4 (`--scale 0-4`, relevance/scales.py), write qrels.

The pool of a topic is the passages its answer runs list in `references` (or only those their
sentences cite) and the first `depth` of each retrieval run, de-duplicated in that order. Pairs
already judged in a `fill` qrels file are kept as they are ("fill the holes"); every other pair
is one unit of the journalled flow (run/steps.py: cached, concurrent, resumable), graded with
the published prompt of the scale (prompts/umbrela_grade.user.jinja,
prompts/umbrela_subnarrative.user.jinja). A grade that cannot be read stays
unjudged, with the model's answer and the reason kept in the judgments file: it is never
written as grade 0.

Judgment record, one per graded pair: `{"qid", "docid", "grade": 0-3 (0-4) or null, "attempts",
"raw", "reasoning"? (a reasoning model's thinking), "error"?, "provenance"}`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import DEFAULT_REASKS, Assessor
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.qrels import qrels_text
from nuggetizer.formats.track_inputs import Passages
from nuggetizer.formats.trec_run import TrecRun
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import Outcome
from nuggetizer.relevance.scales import DEFAULT_GRADING, DEFAULT_SCALE, SCALES, Grading
from nuggetizer.run.progress import Summary
from nuggetizer.run.provenance import provenance
from nuggetizer.run.resume import ResumableOutput
from nuggetizer.run.steps import run_journalled
from nuggetizer.run.usage import UsageLedger
from nuggetizer.run.votes import list_disagreements
from nuggetizer.types import Answer, Qrel, Segment, Topic

PROMPT = SCALES[DEFAULT_SCALE].prompt
GRADES = SCALES[DEFAULT_SCALE].grades
# The published answer format as the only choice: a schema-constrained model (the embedded one)
# writes exactly `##final score: N`; an unconstrained one is read by `parse_grade`.
GRADE_SCHEMA = SCALES[DEFAULT_SCALE].schema
MAX_TOKENS = 100
MISSING = "passage not in the corpus"
parse_grade = SCALES[DEFAULT_SCALE].parse  # the 0-3 scale's parser


@dataclass(frozen=True)
class Pair:
    """One (topic, passage) to grade: a unit of the flow."""

    qid: str
    docid: str

    @property
    def key(self) -> str:
        """The journal key of the pair."""
        return f"{self.qid}\t{self.docid}"


def pair_key(record: Mapping[str, Any]) -> str:
    """The journal key of a judgment record."""
    return f"{record['qid']}\t{record['docid']}"


@dataclass
class Pool:
    """Per topic, the passages to grade in pool order; and what was left out of it."""

    docids: dict[str, list[str]]
    outside: dict[str, int] = field(default_factory=dict)  # topics not in --topics: passages

    @property
    def size(self) -> int:
        return sum(len(d) for d in self.docids.values())


def cited(answer: Answer) -> list[str]:
    """The references an answer's sentences cite, in citation order."""
    refs = answer.references
    return [refs[i] for s in answer.sentences for i in s.citations
            if isinstance(i, int) and 0 <= i < len(refs)]


def build_pool(
    topics: Mapping[str, Topic], answer_runs: Mapping[str, Mapping[str, Answer]] | None = None,
    retrieval_runs: Sequence[TrecRun] = (), depth: int = 20, cited_only: bool = False,
) -> Pool:
    """The passages of each topic: the answer runs' references (or cited ones), then the first
    `depth` of each retrieval run; de-duplicated, in that order. Passages of topics not in
    `topics` are counted, not pooled."""
    docids: dict[str, list[str]] = {qid: [] for qid in topics}
    outside: dict[str, list[str]] = {}

    def add(qid: str, found: Sequence[str]) -> None:
        target = docids[qid] if qid in docids else outside.setdefault(qid, [])
        target.extend(found)

    for answers in (answer_runs or {}).values():
        for qid, answer in answers.items():
            add(qid, cited(answer) if cited_only else answer.references)
    for run in retrieval_runs:
        for qid in run.topics:
            add(qid, run.ranking(qid, depth))
    pool = {qid: list(dict.fromkeys(found)) for qid, found in docids.items()}
    return Pool(pool, {qid: len(set(found)) for qid, found in outside.items() if found})


def relevance_stamp(assessor: Assessor, reasks: int, grading: Grading = DEFAULT_GRADING) -> dict:
    """The provenance of every judgment (what decides a grade: assessor, prompt, scale,
    re-asks, where the sub-narratives came from)."""
    config: dict[str, Any] = {"step": "relevance", "reasks": reasks,
                              "scale": grading.scale.name}
    if grading.source is not None:
        config["sub_narratives"] = dict(grading.source)
    return provenance(assessor.provenance(), (grading.scale.prompt,), config=config)


async def grade_pair(assessor: Assessor, query: str, passage: Segment | None, pair: Pair,
                     reasks: int, grading: Grading = DEFAULT_GRADING) -> Outcome:
    """One judgment: the published prompt with the passage on one line, parsed for its grade;
    unjudged (grade null, reason kept) when it never parses, the server refused it, or the
    passage has no text."""
    record: dict[str, Any] = {"qid": pair.qid, "docid": pair.docid}
    if passage is None:
        record.update(grade=None, attempts=0, raw="", error=MISSING)
        return Outcome(record, 1)
    scale = grading.scale
    parsed = await assessor.ask(grading.messages(pair.qid, query, passage.text), scale.parse,
                                schema=scale.schema, max_tokens=MAX_TOKENS, reasks=reasks)
    record.update(grade=parsed.value, attempts=parsed.attempts, **parsed.kept())
    if parsed.value is None:
        record["error"] = parsed.error
        return Outcome(record, 1)
    return Outcome(record, 0)


@dataclass
class Assessed:
    """What the step made: the qrels rows written, the judgments, and the summary."""

    rows: list[Qrel]
    judgments: dict[str, dict[str, Any]]  # pair key -> record
    kept: int  # rows taken from the fill qrels
    summary: Summary
    left_out: dict[str, int] = field(default_factory=dict)  # fill rows of topics not graded

    @property
    def unjudged(self) -> list[dict[str, Any]]:
        return [r for r in self.judgments.values() if r.get("grade") is None]


async def assess_relevance(
    topics: Mapping[str, Topic], pool: Pool, texts: Mapping[str, Segment], assessor: Assessor,
    out: Path, judgments_path: Path, fill: Sequence[Qrel] = (), reasks: int = DEFAULT_REASKS,
    grading: Grading = DEFAULT_GRADING,
) -> Assessed:
    """Grade every pooled pair not in `fill`, one journalled unit each; write the qrels `out`
    (the fill rows of the topics, then the graded pairs, topic by topic in `topics` order) and
    every judgment to `judgments_path` (JSONL, pool order). Unjudged pairs are not in `out`."""
    summary = Summary("relevance", unit="pairs")
    filled = {(q.qid, q.docid) for q in fill}
    pairs = [Pair(qid, d) for qid, docs in pool.docids.items() for d in docs
             if (qid, d) not in filled]
    stamp = relevance_stamp(assessor, reasks, grading)
    output = ResumableOutput(judgments_path, pair_key, stamp)
    todo = []
    for pair in pairs:
        if output.done(pair.key):
            summary.resumed += 1
            summary.unjudged += output.records[pair.key].get("grade") is None
        else:
            todo.append(pair)
    await run_journalled(
        todo, lambda p: grade_pair(assessor, topics[p.qid].text, texts.get(p.docid), p, reasks,
                                   grading),
        lambda p, record: output.add(record), stamp, summary, "relevance", assessor,
        UsageLedger(out, summary.step))
    output.finish(p.key for p in pairs)
    judgments = {p.key: output.records[p.key] for p in pairs}
    list_disagreements(out, judgments.values(), summary)
    by_topic: dict[str, list[Qrel]] = {}
    for q in fill:
        by_topic.setdefault(q.qid, []).append(q)
    rows: list[Qrel] = []
    kept = 0
    for qid in topics:
        rows.extend(by_topic.get(qid, []))
        kept += len(by_topic.get(qid, []))
        for docid in pool.docids.get(qid, []):
            record = judgments.get(f"{qid}\t{docid}")
            if record is not None and record.get("grade") is not None:
                rows.append(Qrel(qid=qid, docid=docid, grade=int(record["grade"])))
    write_text_atomic(out, qrels_text(rows))
    left_out = Counter(q.qid for q in fill if q.qid not in topics)
    return Assessed(rows, judgments, kept, summary, dict(left_out))


@dataclass
class Graded:
    """The relevance step over files: the pool, what was graded, and where it was written."""

    pool: Pool
    assessed: Assessed
    qrels: Path
    judgments: Path
    grading: Grading = DEFAULT_GRADING


def judgments_path_for(qrels: Path) -> Path:
    """Where the judgments of a qrels file go by default: `QRELS.judgments.jsonl`."""
    return qrels.with_name(qrels.name + ".judgments.jsonl")


def pool_texts(pool: Pool, passages: Passages, fill: Sequence[Qrel] = (),
               allow_missing: bool = False) -> dict[str, Segment]:
    """The texts of the pooled passages not already judged in `fill`, from the corpus slice
    read with the inputs; a passage missing from the corpus is an error unless
    `allow_missing` (then it stays unjudged)."""
    filled = {(q.qid, q.docid) for q in fill}
    needed = {d for qid, ds in pool.docids.items() for d in ds if (qid, d) not in filled}
    if not needed:
        return {}
    corpus = passages.corpus
    if corpus is None:
        raise ConfigError("--corpus is needed for the texts of the pooled passages")
    texts = passages.of(needed)
    missing = sorted(needed - set(texts))
    if missing and not allow_missing:
        raise InputError(corpus, None, f"{len(missing)} pooled passages are not in the corpus, "
                         f"e.g. {missing[0]!r} (--allow-missing leaves them unjudged)")
    return texts


def graded_lines(graded: Graded) -> list[str]:
    """What the step tells the organizer: the pool, the grades written, the unjudged pairs."""
    done, pool = graded.assessed, graded.pool
    grades = Counter(q.grade for q in done.rows)
    lines = [f"relevance: pooled {pool.size} pairs of {len(pool.docids)} topics; {done.kept} "
             "qrels kept from --fill; grades written "
             + (", ".join(f"{g}: {n}" for g, n in sorted(grades.items())) or "none")]
    if done.left_out:
        ids = sorted(done.left_out)
        lines.append(f"note: {sum(done.left_out.values())} --fill qrels of {len(ids)} topics "
                     f"not among the topics graded (--topics, --only-topics) are left out of "
                     f"the qrels written: {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}")
    unjudged = done.unjudged
    for record in unjudged[:10]:
        why = record.get("error") or ""
        lines.append(f"unjudged: {record['qid']} {record['docid']} ({why[:120]})")
    if len(unjudged) > 10:
        lines.append(f"unjudged: ... and {len(unjudged) - 10} more (see {graded.judgments})")
    if any(r.get("error") == MISSING for r in unjudged):
        lines.append("note: passages missing from --corpus were left unjudged")
    return lines
