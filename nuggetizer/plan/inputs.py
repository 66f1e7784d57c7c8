"""What the steps read, built once for every method from the inputs read
(formats/track_inputs.py): each topic's passages (the one pool builder) and the targets a run
is judged on (answers, retrieval contexts). Nothing here opens a file: the passages' texts come
from the slice of the corpus read with the other inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.interface.base import KeyInput, Target, citation_problem, resolve
from nuggetizer.types import Answer, Qrel, Segment, Sentence, Topic

if TYPE_CHECKING:
    from nuggetizer.formats.track_inputs import Passages, TrackInputs
    from nuggetizer.formats.trec_run import TrecRun


def judged_pool(qrels: Sequence[Qrel], min_grade: int) -> dict[str, list[Qrel]]:
    """Judged passages per topic with grade >= min_grade, grade descending then doc id."""
    pool: dict[str, list[Qrel]] = {}
    for qrel in qrels:
        if qrel.grade >= min_grade:
            pool.setdefault(qrel.qid, []).append(qrel)
    for judged in pool.values():
        judged.sort(key=lambda q: (-q.grade, q.docid))
    return pool


def key_inputs(topics: Mapping[str, Topic], inputs: TrackInputs, min_grade: int = 1,
               skip_without_documents: bool = False) -> tuple[list[KeyInput], int]:
    """Per topic: its passages (the first `depth` of each run keys are built from, their
    union in order; else the qrels' judged ones with grade >= min_grade, grade descending then
    doc id), their texts from the corpus slice and qrels grades, all of `inputs`. Returns the
    inputs and how many topics were left out for having no passage (only with
    `skip_without_documents`)."""
    qrels, docs_runs, depth = inputs.qrels, inputs.docs, inputs.wanted.depth
    grades: dict[str, dict[str, int]] = {}
    for q in qrels:
        grades.setdefault(q.qid, {})[q.docid] = q.grade
    pool = judged_pool(qrels, min_grade)
    wanted: dict[str, list[str]] = {}
    for qid in topics:
        if docs_runs:
            wanted[qid] = list(dict.fromkeys(d for r in docs_runs for d in r.ranking(qid, depth)))
        else:
            wanted[qid] = [q.docid for q in pool.get(qid, [])]
    texts = _texts(wanted, inputs, pool if not docs_runs else {})
    made = [
        KeyInput(qid=qid, query=t.text, reference=t.reference,
                 documents=[texts[d] for d in wanted[qid]], grades=grades.get(qid, {}))
        for qid, t in topics.items()
        if wanted[qid] or not skip_without_documents
    ]
    return made, len(topics) - len(made)


def _texts(wanted: dict[str, list[str]], inputs: TrackInputs, pool: dict[str, list[Qrel]]
           ) -> dict[str, Segment]:
    """The texts of every wanted passage; each must be in the corpus (an error names the qrels
    line that judged the first missing one, else the corpus)."""
    needed = {d for ds in wanted.values() for d in ds}
    if not needed:
        return {}
    corpus, qrels_path = inputs.passages.corpus, inputs.wanted.qrels
    if corpus is None:
        raise ConfigError("this method reads passage texts: give --corpus")
    texts = inputs.passages.of(needed)
    missing = needed - set(texts)
    if not missing:
        return texts
    judged = [q for qs in pool.values() for q in qs if q.docid in missing]
    if judged and qrels_path is not None:
        first = min(judged, key=lambda q: q.line or 0)
        raise InputError(qrels_path, first.line, f"segment {first.docid} (judged for topic "
                         f"{first.qid}) is not in the corpus {corpus}; {len(judged)} judged "
                         "segments are missing: use the corpus the qrels were made on")
    example = sorted(missing)[0]
    raise InputError(corpus, None, f"{len(missing)} passages are not in the corpus, e.g. "
                     f"{example!r}: use the corpus the qrels/run were made on")


def answer_targets(runs: Mapping[str, Mapping[str, Answer]]) -> dict[str, dict[str, Target]]:
    """Every answer of every run as a target, with its sentences, citations and references
    (what a method measures of them, e.g. the AutoNuggetizer's length L, it measures itself)."""
    return {
        run_id: {
            qid: Target(run_id=run_id, qid=qid, answer=answer.text, query=answer.topic,
                        sentences=answer.sentences, references=answer.references,
                        word_limit=answer.word_limit,
                        documents=answer.documents, path=answer.path, line=answer.line)
            for qid, answer in answers.items()
        }
        for run_id, answers in runs.items()
    }


def carry_documents(targets: Mapping[str, Mapping[str, Target]]) -> bool:
    """Whether any answer carries its own passages (a report's `documents`)."""
    return any(t.documents for by_topic in targets.values() for t in by_topic.values())


def cited_ids(targets: Mapping[str, Mapping[str, Target]], every: bool = True) -> set[str]:
    """The passages the answers cite (the first citation of each sentence unless `every`)."""
    needed: set[str] = set()
    for by_topic in targets.values():
        for target in by_topic.values():
            for k, sentence in enumerate(target.sentences):
                for j in range(len(sentence.citations) if every else
                               min(1, len(sentence.citations))):
                    docid, _ = resolve(target, k, j)
                    if docid is not None:
                        needed.add(docid)
    return needed


def cite_targets(targets: Mapping[str, Mapping[str, Target]], passages: Passages,
                 allow_missing: bool = False, every: bool = True) -> list[str]:
    """Give each answer target the texts of the passages it cites (the first citation of each
    sentence unless `every`), from the corpus slice `passages` (for an id it lacks, or without
    a corpus, from the report's own `documents`). A citation that does not resolve
    (outside the references: only read under --allow-missing, else the run reader stops on it)
    or whose passage the corpus lacks is an InputError naming the run file, line, topic and
    sentence; with `allow_missing` it is kept, for the method to record as unjudged, and named
    in the returned list."""
    needed = cited_ids(targets, every)
    corpus = passages.corpus
    texts = passages.of(needed)
    carried = {d for by_topic in targets.values() for t in by_topic.values()
               for d in t.documents}
    missing = needed - set(texts) - carried
    problems: list[str] = []
    for by_topic in targets.values():
        for target in by_topic.values():
            own = {**target.documents, **texts}
            target.cited = {d: own[d] for s in target.sentences for d in
                            _ids(target, s) if d in own}
            for k, sentence in enumerate(target.sentences):
                count = len(sentence.citations) if every else min(1, len(sentence.citations))
                for j in range(count):
                    why = citation_problem(target, k, j)
                    if why is None:
                        continue
                    if not allow_missing:
                        total = f"; {len(missing)} cited passages are missing" if missing else ""
                        where = f" {corpus}" if (resolve(target, k, j)[0] and corpus
                                                and not target.documents) else ""
                        raise InputError(target.path, target.line, f"topic {target.qid!r}, "
                                         f"sentence {k + 1}, citations[{j}]: {why}{where}"
                                         f"{total} (--allow-missing judges the rest and counts "
                                         "these unjudged)")
                    problems.append(f"{target.where}, sentence {k + 1}, citations[{j}]: {why}")
    return problems


def _ids(target: Target, sentence: Sentence) -> list[str]:
    refs = target.references
    return [refs[c] for c in sentence.citations if isinstance(c, int) and 0 <= c < len(refs)]


def ranked_ids(runs: Mapping[str, TrecRun], k: int) -> set[str]:
    """The first `k` passages of every topic of every run."""
    return {d for r in runs.values() for q in r.topics for d in r.ranking(q, k)}


def context_targets(runs: Mapping[str, TrecRun], passages: Passages, k: int,
                    allow_missing: bool = False) -> dict[str, dict[str, Target]]:
    """Each run's first `k` passages per topic, with their texts from the corpus slice
    `passages`. A passage missing from the corpus is an error; with `allow_missing` it stays
    in the context with an empty text, which no method sends to the LLM (it is unjudged and
    gains nothing)."""
    needed = ranked_ids(runs, k)
    texts = passages.of(needed)
    missing = sorted(needed - set(texts))
    if missing and not allow_missing:
        raise InputError(passages.corpus, None, f"{len(missing)} retrieved passages are not in "
                         f"the corpus, e.g. {missing[0]!r} (--allow-missing judges the rest)")
    for docid in missing:
        texts[docid] = Segment(id=docid, text="")
    return {
        tag: {q: Target(run_id=tag, qid=q, passages=[texts[d] for d in run.ranking(q, k)])
              for q in run.topics}
        for tag, run in runs.items()
    }
