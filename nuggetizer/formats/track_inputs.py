"""A track's inputs (or one step's), read in one pass before anything is planned: the topics,
the qrels, the sub-narratives, the answer runs (checked against their track's rules), the
retrieval runs and the runs a key is built from, and the one slice of the corpus all of them
need. Each file is checked by its reader, every error naming file and line; the plan
(nuggetizer/plan/) receives the value and reads no input file.

    wanted = Wanted(topics=Path("topics.tsv"), qrels=..., corpus=..., runs=(...),
                    passages=Demand(judged=1, references=True))
    inputs = read_track_inputs(wanted)   # every file read once, the corpus streamed once
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nuggetizer.formats.answers import read_runs, repeated_citations
from nuggetizer.formats.corpus import read_corpus
from nuggetizer.formats.narratives import sub_narrative_source
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.track_rules import Limits, TrackRules, cut, enforce, request_limits
from nuggetizer.formats.trec_run import TrecRun, read_trec_run, read_trec_runs
from nuggetizer.types import Answer, Qrel, Segment, Topic


@dataclass(frozen=True)
class Demand:
    """Which passages of the corpus the steps will read: every passage an answer lists in its
    references (the ones it cites, the ones a relevance pool grades), those the qrels grade
    >= `judged`, the first `retrieved` of each topic of each retrieval run, and the first
    `docs_depth` (None: all) of each run a key is built from."""

    references: bool = False
    judged: int | None = None
    retrieved: int = 0
    docs_depth: int | None = None


@dataclass(frozen=True)
class Wanted:
    """What to read (a path None, or no paths: not read). `track_rules`, `requests` and
    `length_limit` check the answer runs against their track's rules (formats/track_rules.py);
    `keep_unresolved` keeps a citation outside an answer's references for the method to count
    unjudged; `depth` and `allow_missing` are the command's, for the plan; `passages`: which
    passages of the corpus."""

    topics: Path | None = None
    qrels: Path | None = None
    corpus: Path | None = None
    runs: Sequence[Path] = ()
    retrieval_runs: Sequence[Path] = ()
    docs_runs: Sequence[Path] = ()
    narratives: Path | None = None
    sub_narratives_from: Path | None = None
    track_rules: str = "none"
    requests: Path | None = None
    length_limit: int | None = None
    keep_unresolved: bool = False
    depth: int | None = None
    allow_missing: bool = False
    passages: Demand = Demand()


@dataclass
class Passages:
    """A slice of the corpus: the texts of the passages asked for (an id the corpus lacks is
    absent) and the corpus they came from (None: none was given)."""

    corpus: Path | None = None
    texts: dict[str, Segment] = field(default_factory=dict)

    def of(self, ids: set[str]) -> dict[str, Segment]:
        """The texts of `ids` the corpus holds."""
        return {d: self.texts[d] for d in ids if d in self.texts}


def read_passages(corpus: Path | None, ids: set[str]) -> Passages:
    """The passages `ids` of `corpus`, streamed once (nothing read when none is asked for or
    no corpus is given)."""
    if corpus is None or not ids:
        return Passages(corpus)
    return Passages(corpus, read_corpus(corpus, ids))


@dataclass
class TrackInputs:
    """Everything a track (or a step) reads, read and checked: `rules` (per report run file
    whose track cuts reports to a length limit) and `rule_warnings` come from the track's
    rules, `repeated` names each citation of a reference its answer object already cites
    (file:line); `passages` is the slice of the corpus the steps need."""

    wanted: Wanted
    topics: dict[str, Topic] | None = None
    qrels: list[Qrel] = field(default_factory=list)
    sub_narratives: tuple[dict[str, list[str]], dict[str, str]] | None = None
    answers: dict[str, dict[str, Answer]] = field(default_factory=dict)
    rule_warnings: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    rules: dict[str, tuple[TrackRules, Limits]] = field(default_factory=dict)
    retrieval: dict[str, TrecRun] = field(default_factory=dict)
    docs: list[TrecRun] = field(default_factory=list)
    passages: Passages = field(default_factory=Passages)

    def cut_answers(self) -> tuple[dict[str, dict[str, Answer]], int]:
        """The answers as their track scores them: a report over its topic's length limit
        cut to it (a copy; the answers read stay whole), and how many were cut."""
        if not self.rules:
            return self.answers, 0
        copies = {run: {q: a.model_copy() for q, a in by_topic.items()}
                  for run, by_topic in self.answers.items()}
        return copies, cut(copies, self.rules)

    def lines(self) -> list[str]:
        """What was read, one line per kind: how many, and from which files."""
        wanted, found = self.wanted, []
        if self.topics is not None:
            found.append(f"{len(self.topics)} topics ({wanted.topics})")
        if self.qrels:
            found.append(f"{len(self.qrels)} judgments of "
                         f"{len({q.qid for q in self.qrels})} topics ({wanted.qrels})")
        if self.sub_narratives is not None:
            subs, source = self.sub_narratives
            found.append(f"sub-narratives of {len(subs)} topics ({source['path']})")
        if self.answers:
            count = sum(len(by_topic) for by_topic in self.answers.values())
            found.append(f"{count} answers of {len(self.answers)} runs "
                         f"({', '.join(map(str, wanted.runs))})")
        if self.retrieval:
            found.append(f"{len(self.retrieval)} retrieval runs "
                         f"({', '.join(map(str, wanted.retrieval_runs))})")
        if self.docs:
            found.append(f"{len(self.docs)} runs to build keys from "
                         f"({', '.join(map(str, wanted.docs_runs))})")
        if self.passages.texts:
            found.append(f"{len(self.passages.texts)} passages of the corpus "
                         f"({self.passages.corpus})")
        return [f"read: {line}" for line in found]


def read_track_inputs(wanted: Wanted) -> TrackInputs:
    """Read every file `wanted` names, each once and checked, in this order: topics, qrels,
    sub-narratives, answer runs (their track's rules first), retrieval runs, the runs keys are
    built from; then the corpus, streamed once for every passage they name that the steps
    read (`wanted.passages`)."""
    read = TrackInputs(wanted)
    if wanted.topics is not None:
        read.topics = read_topics(wanted.topics)
    if wanted.qrels is not None:
        read.qrels = read_qrels(wanted.qrels)
    read.sub_narratives = sub_narrative_source(wanted.narratives, wanted.sub_narratives_from)
    if wanted.runs:
        limits = request_limits(wanted.requests) if wanted.requests else {}
        read.rules, read.rule_warnings = enforce(wanted.runs, wanted.track_rules, limits,
                                                 wanted.length_limit)
        read.answers = read_runs(wanted.runs, keep_unresolved=wanted.keep_unresolved)
        read.repeated = repeated_citations(read.answers)
    read.retrieval = read_trec_runs(wanted.retrieval_runs)
    read.docs = [read_trec_run(p) for p in wanted.docs_runs]
    read.passages = read_passages(wanted.corpus, _named(read, wanted.passages))
    return read


def _named(read: TrackInputs, demand: Demand) -> set[str]:
    """The ids of every passage the inputs name that `demand` asks for."""
    ids: set[str] = set()
    if demand.references:
        ids.update(d for by_topic in read.answers.values() for a in by_topic.values()
                   for d in a.references)
    if demand.judged is not None:
        ids.update(q.docid for q in read.qrels if q.grade >= demand.judged)
    if demand.retrieved:
        ids.update(d for run in read.retrieval.values() for qid in run.topics
                   for d in run.ranking(qid, demand.retrieved))
    for run in read.docs:
        ids.update(d for qid in run.topics for d in run.ranking(qid, demand.docs_depth))
    return ids
