"""ir_measures and ir_datasets interoperability (the optional `ir` extra).

- `read_per_topic`: a per-topic TSV as ir_measures `Metric(query_id, measure, value)` results.
- `MEASURES`: the nugget measures as ir_measures runtime measures. The "qrels" of a topic are its
  nuggets (doc_id = nugget number, relevance 2 vital, 1 okay, 0 unjudged importance) and a run
  holds one system's labels (score 1 support, 0.5 partial_support, 0 not_support; an unjudged
  nugget is absent). `nugget_qrels` and `nugget_run` convert assessments to those shapes; each
  measure calls `nuggetizer.measures.nugget_scores`, so the values are the `score` values (NaN
  for a measure nothing was judged for, which `score` leaves out).
- `load_dataset` / `export_dataset`: topics, qrels and the judged segments of an installed
  ir_datasets id, written as the files `nuggetize` reads.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.writing import dumps, write_text_atomic
from nuggetizer.labels import CREDIT, UNJUDGED
from nuggetizer.measures.nuggets import LABEL_MEASURES, nugget_scores
from nuggetizer.run.provenance import provenance
from nuggetizer.scoring.tables import iter_per_topic
from nuggetizer.types import Assessment, Qrel, Segment, Topic

NUGGET_MEASURE_NAMES = LABEL_MEASURES  # the declared ones computed from labels (not L)
_RELEVANCE = {"vital": 2, "okay": 1, UNJUDGED: 0}
_IMPORTANCE = {v: k for k, v in _RELEVANCE.items()}
_SCORE = CREDIT  # a label's score in the run: its credit in V, W and A
_ASSIGNMENT = {v: k for k, v in _SCORE.items()}


def _ir_measures() -> Any:
    try:
        import ir_measures
    except ImportError:
        raise ConfigError(
            "ir_measures is not installed: pip install 'trec-nuggetizer[ir]'"
        ) from None
    return ir_measures


def _ir_datasets() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise ConfigError(
            "ir_datasets is not installed: pip install 'trec-nuggetizer[ir]'"
        ) from None
    return ir_datasets


def _by_query(name: str, qrels: Any, run: Any) -> float:
    """One topic's value of `name` from ir_measures' per-query frames."""
    labels_by_doc = {str(d): _ASSIGNMENT.get(float(s), UNJUDGED)
                     for d, s in zip(run["doc_id"], run["score"])}
    labels = [(_IMPORTANCE.get(int(rel), UNJUDGED), labels_by_doc.get(str(doc), UNJUDGED))
              for doc, rel in zip(qrels["doc_id"], qrels["relevance"])]
    return nugget_scores(labels)[name]


@functools.cache
def measures() -> dict[str, Any]:
    """The nugget measures registered as ir_measures runtime measures, by name."""
    irm = _ir_measures()
    return {
        name: irm.define_byquery(functools.partial(_by_query, name), name=name,
                                 support_cutoff=False)
        for name in NUGGET_MEASURE_NAMES
    }


def nugget_qrels(assessments: Iterable[Assessment]) -> list[Any]:
    """The nuggets of every topic as ir_measures qrels (first assessment of a topic wins)."""
    irm = _ir_measures()
    done: set[str] = set()
    qrels = []
    for a in assessments:
        if a.qid in done:
            continue
        done.add(a.qid)
        qrels += [irm.Qrel(a.qid, f"n{k}", _RELEVANCE[n.importance])
                  for k, n in enumerate(a.nuggets, 1)]
    return qrels


def nugget_run(assessments: Iterable[Assessment], run_id: str) -> list[Any]:
    """One run's labels as an ir_measures run (unjudged nuggets left out)."""
    irm = _ir_measures()
    return [irm.ScoredDoc(a.qid, f"n{k}", _SCORE[n.assignment])
            for a in assessments if a.run_id == run_id
            for k, n in enumerate(a.nuggets, 1) if n.assignment in _SCORE]


def read_per_topic(path: str | Path) -> dict[str, list[Any]]:
    """A per-topic TSV as {run_id: [ir_measures.Metric(query_id, measure, value)]}.

    Nugget measures are the registered runtime measure objects; other names (L) stay strings.
    The `all` rows are kept, as ir_measures' own per-query output keeps them.
    """
    irm = _ir_measures()
    known = measures()
    result: dict[str, list[Any]] = {}
    for run, topic, name, value in iter_per_topic(path):
        result.setdefault(run, []).append(irm.Metric(topic, known.get(name, name), value))
    return result


def load_dataset(dataset_id: str) -> tuple[dict[str, Topic], list[Qrel], Any]:
    """Topics, qrels and the dataset object of an installed ir_datasets id."""
    irds = _ir_datasets()
    try:
        dataset = irds.load(dataset_id)
    except KeyError:
        raise ConfigError(f"ir_datasets has no dataset {dataset_id!r}") from None
    if not (dataset.has_queries() and dataset.has_qrels()):
        raise ConfigError(f"ir_datasets {dataset_id!r} lacks queries or qrels")
    topics = {q.query_id: Topic(id=q.query_id, text=_text(q)) for q in dataset.queries_iter()}
    qrels = [Qrel(qid=q.query_id, docid=q.doc_id, grade=int(q.relevance), line=k)
             for k, q in enumerate(dataset.qrels_iter(), 1)]
    return topics, qrels, dataset


def _text(record: Any) -> str:
    if hasattr(record, "default_text"):
        return str(record.default_text())
    return str(getattr(record, "text", ""))


def judged_segments(dataset: Any, wanted: set[str]) -> dict[str, Segment]:
    """The segments with ids in `wanted`: from the docs store when there is one, else streamed."""
    found: dict[str, Segment] = {}
    try:
        docs = dataset.docs_store().get_many(wanted)
        found = {d: Segment(id=d, text=_text(doc), title=str(getattr(doc, "title", "") or ""))
                 for d, doc in docs.items()}
    except (NotImplementedError, AttributeError):
        for doc in dataset.docs_iter():
            if doc.doc_id in wanted:
                found[doc.doc_id] = Segment(id=doc.doc_id, text=_text(doc),
                                            title=str(getattr(doc, "title", "") or ""))
    return found


def export_dataset(dataset_id: str, out_dir: Path, min_grade: int = 1) -> dict[str, int]:
    """Write topics.tsv, qrels.txt and corpus.jsonl (judged segments only) for `nuggetize`."""
    topics, qrels, dataset = load_dataset(dataset_id)
    wanted = {q.docid for q in qrels if q.grade >= min_grade}
    segments = judged_segments(dataset, wanted) if dataset.has_docs() else {}
    missing = sorted(wanted - set(segments))
    if missing:
        raise InputError(None, None, f"{len(missing)} judged segments of {dataset_id} are not in "
                         f"its docs (first: {missing[0]})")
    write_text_atomic(out_dir / "topics.tsv", "".join(
        f"{t.id}\t{' '.join(t.text.split())}\n" for t in topics.values()))
    write_text_atomic(out_dir / "qrels.txt", "".join(
        f"{q.qid} 0 {q.docid} {q.grade}\n" for q in qrels))
    stamp = provenance(None, (), config={"ir_datasets": dataset_id, "min_grade": min_grade})
    write_text_atomic(out_dir / "corpus.jsonl", "".join(
        dumps({"id": s.id, "title": s.title, "contents": s.text}) + "\n"
        for s in sorted(segments.values(), key=lambda s: s.id)))
    write_text_atomic(out_dir / "provenance.json", json.dumps(stamp, indent=2) + "\n")
    return {"topics": len(topics), "qrels": len(qrels), "segments": len(segments)}


def aggregate(assessments: Sequence[Assessment], names: Sequence[str] = NUGGET_MEASURE_NAMES,
              ) -> dict[str, dict[str, float]]:
    """{run_id: {measure: mean}} computed through ir_measures (for cross-checking `score`)."""
    irm = _ir_measures()
    qrels = nugget_qrels(assessments)
    result = {}
    for run_id in dict.fromkeys(a.run_id for a in assessments):
        values = irm.calc_aggregate([measures()[n] for n in names], qrels,
                                    nugget_run(assessments, run_id))
        result[run_id] = {str(m): float(v) for m, v in values.items()}
    return result
