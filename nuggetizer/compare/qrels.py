"""Agreement of two qrels (e.g. an LLM's UMBRELA grades against human judgments): label
agreement over the (topic, passage) pairs both judge, and the effect on system rankings.
Of N qrels: every pair so, and Krippendorff's alpha over all of them (`compare_many_qrels`).

- Cohen's kappa on the grades, and binary at grade >= 1 and >= 2;
- Krippendorff's alpha (ordinal);
- precision, recall, F1 and Jaccard of B's relevant set (grade >= `relevant`) against A's;
- the confusion matrix (rows: A's grades, columns: B's);
- given retrieval runs: each run's mean of an ir_measures measure (nDCG@10 by default) under
  each qrels, over the topics both qrels judge, and Kendall's tau-b between the two orderings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.compare.judges import (
    JudgesAgreement,
    judges_agreement,
    overall_alpha,
)
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.trec_run import TrecRun
from nuggetizer.measures import agreement as ma
from nuggetizer.measures.correlation import kendall_tau
from nuggetizer.types import Qrel


@dataclass
class QrelsAgreement:
    """The agreement of qrels A and B."""

    a: str
    b: str
    pairs: int  # judged by both
    only_a: int
    only_b: int
    topics: list[str]  # judged by both (at least one common pair)
    measures: dict[str, float]  # kappa, kappa>=1, kappa>=2, alpha_ordinal, precision, ...
    relevant: int
    grades: list[int]
    matrix: dict[tuple[int, int], int]
    measure: str | None = None
    run_scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    ranking_tau: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "a": self.a, "b": self.b, "pairs": self.pairs, "only_a": self.only_a,
            "only_b": self.only_b, "topics": len(self.topics), "relevant_at": self.relevant,
            "measures": {k: _num(v) for k, v in self.measures.items()},
            "confusion": {f"{x},{y}": self.matrix.get((x, y), 0)
                          for x in self.grades for y in self.grades},
            "ranking": None if self.measure is None else {
                "measure": self.measure, "kendall_tau": _num(self.ranking_tau),
                "runs": {r: {"a": _num(sa), "b": _num(sb)}
                         for r, (sa, sb) in self.run_scores.items()}},
        }

    def tsv(self) -> str:
        """`measure<TAB>value` rows."""
        rows: list[tuple[str, object]] = [
            ("pairs", self.pairs), ("only_a", self.only_a), ("only_b", self.only_b),
            ("topics", len(self.topics))]
        rows += [(k, _fmt(v)) for k, v in self.measures.items()]
        if self.measure is not None:
            rows.append((f"kendall_tau({self.measure})", _fmt(self.ranking_tau)))
        return "measure\tvalue\n" + "".join(f"{k}\t{v}\n" for k, v in rows)

    def markdown(self) -> str:
        """The report printed by `qrels-agreement`."""
        m = self.measures
        lines = [
            f"Agreement of {self.b} with {self.a} over {self.pairs} (topic, passage) pairs "
            f"judged by both, {len(self.topics)} topics ({self.only_a} pairs only in A, "
            f"{self.only_b} only in B)", "",
            "| measure | value |", "|---|---:|",
            f"| Cohen's kappa (grades) | {_fmt(m['kappa'])} |",
            f"| Cohen's kappa (grade >= 1) | {_fmt(m['kappa_ge1'])} |",
            f"| Cohen's kappa (grade >= 2) | {_fmt(m['kappa_ge2'])} |",
            f"| Krippendorff's alpha (ordinal) | {_fmt(m['alpha_ordinal'])} |",
            f"| precision (grade >= {self.relevant}) | {_fmt(m['precision'])} |",
            f"| recall (grade >= {self.relevant}) | {_fmt(m['recall'])} |",
            f"| F1 (grade >= {self.relevant}) | {_fmt(m['f1'])} |",
            f"| Jaccard (grade >= {self.relevant}) | {_fmt(m['jaccard'])} |",
            "", "Confusion matrix (rows: A, columns: B)", "",
            "| A \\ B | " + " | ".join(str(g) for g in self.grades) + " |",
            "|---|" + "---:|" * len(self.grades),
        ]
        for x in self.grades:
            lines.append(f"| {x} | " + " | ".join(str(self.matrix.get((x, y), 0))
                                                for y in self.grades) + " |")
        if self.measure is not None:
            lines += ["", f"Run orderings on {self.measure}: Kendall's tau "
                      f"{_fmt(self.ranking_tau)} over {len(self.run_scores)} runs", "",
                      "| run | A | B |", "|---|---:|---:|"]
            for run, (sa, sb) in sorted(self.run_scores.items(), key=lambda kv: -kv[1][0]):
                lines.append(f"| {run} | {_fmt(sa)} | {_fmt(sb)} |")
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def _fmt(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.4f}"


def _by_pair(qrels: Sequence[Qrel]) -> dict[tuple[str, str], int]:
    return {(q.qid, q.docid): q.grade for q in qrels}


def label_agreement(a: Sequence[Qrel], b: Sequence[Qrel], relevant: int = 1,
                    names: tuple[str, str] = ("A", "B")) -> QrelsAgreement:
    """Label agreement over the pairs both qrels judge (in A's order)."""
    ga, gb = _by_pair(a), _by_pair(b)
    common = [p for p in ga if p in gb]
    if not common:
        raise InputError(names[1], None, f"no (topic, passage) pair is judged in both it and "
                         f"{names[0]}")
    xa, xb = [ga[p] for p in common], [gb[p] for p in common]
    measures = {
        "kappa": ma.cohen_kappa(xa, xb),
        "kappa_ge1": ma.cohen_kappa(ma.binary(xa, 1), ma.binary(xb, 1)),
        "kappa_ge2": ma.cohen_kappa(ma.binary(xa, 2), ma.binary(xb, 2)),
        "alpha_ordinal": ma.krippendorff_alpha_ordinal(xa, xb),
    }
    sets = ma.set_agreement(xa, xb, relevant)
    measures.update({k: float(sets[k]) for k in ("precision", "recall", "f1", "jaccard")})
    topics = list(dict.fromkeys(q for q, _ in common))
    return QrelsAgreement(
        a=names[0], b=names[1], pairs=len(common), only_a=len(ga) - len(common),
        only_b=len(gb) - len(common), topics=topics, measures=measures, relevant=relevant,
        grades=sorted(set(xa) | set(xb)), matrix=ma.confusion(xa, xb))


def run_scores(qrels: Sequence[Qrel], runs: Sequence[TrecRun], measure: str,
               topics: set[str]) -> dict[str, float]:
    """Each run's mean `measure` (ir_measures) under `qrels`, over `topics`."""
    try:
        import ir_measures
    except ImportError as exc:  # pragma: no cover - ir_measures is a dependency of [ir]
        raise ConfigError("--retrieval-run needs ir_measures (pip install "
                          "'trec-nuggetizer[ir]')") from exc
    try:
        parsed = ir_measures.parse_measure(measure)
    except (ValueError, NameError, SyntaxError) as exc:
        raise ConfigError(f"--measure {measure!r} is not an ir_measures measure: {exc}") from None
    judged = [ir_measures.Qrel(q.qid, q.docid, q.grade) for q in qrels if q.qid in topics]
    scores = {}
    for run in runs:
        scored = [ir_measures.ScoredDoc(qid, docid, score)
                  for qid, rows in run.rows.items() if qid in topics for docid, score in rows]
        value = ir_measures.calc_aggregate([parsed], judged, scored).get(parsed) if scored else None
        scores[run.tag] = math.nan if value is None else float(value)
    return scores


def compare_qrels(a: Path, b: Path, runs: Sequence[TrecRun] = (), measure: str = "nDCG@10",
                  relevant: int = 1) -> QrelsAgreement:
    """Agreement of the qrels files `a` and `b`; with `runs`, also the ranking tau."""
    return _compare(read_qrels(a), read_qrels(b), (str(a), str(b)), runs, measure, relevant)


def _compare(qa: Sequence[Qrel], qb: Sequence[Qrel], names: tuple[str, str],
             runs: Sequence[TrecRun], measure: str, relevant: int) -> QrelsAgreement:
    """Agreement of two read qrels (see `compare_qrels`)."""
    result = label_agreement(qa, qb, relevant, names)
    if runs:
        topics = {q.qid for q in qa} & {q.qid for q in qb}
        sa = run_scores(qa, runs, measure, topics)
        sb = run_scores(qb, runs, measure, topics)
        result.measure = measure
        result.run_scores = {r: (sa[r], sb[r]) for r in sa}
        tags = [r for r in sa if not (math.isnan(sa[r]) or math.isnan(sb[r]))]
        result.ranking_tau = kendall_tau([sa[r] for r in tags], [sb[r] for r in tags])
    return result


def compare_many_qrels(paths: Sequence[Path], runs: Sequence[TrecRun] = (),
                       measure: str = "nDCG@10", relevant: int = 1) -> JudgesAgreement:
    """Agreement of N qrels files: every pair as `compare_qrels` reports it, and
    Krippendorff's alpha over all of them (compare/judges.py), binary at grade
    >= 1, >= 2 and >= `relevant`."""
    qrels = [read_qrels(p) for p in paths]
    names = [str(p) for p in paths]

    def pair(i: int, j: int) -> tuple[int, dict[str, float]]:
        result = _compare(qrels[i], qrels[j], (names[i], names[j]), runs, measure, relevant)
        measures = dict(result.measures)
        if result.measure is not None:
            measures[f"kendall_tau({measure})"] = math.nan if result.ranking_tau is None \
                else result.ranking_tau
        return result.pairs, measures

    thresholds = sorted({1, 2, relevant})
    return judges_agreement(names, [_by_pair(q) for q in qrels], pair,
                            lambda units: overall_alpha(units, thresholds),
                            "(topic, passage) pairs")


def many_labels(relevant: int, measure: str | None) -> dict[str, str]:
    """The pair measures the report of N qrels shows, with their headings."""
    shown = {"kappa": "kappa (grades)", "kappa_ge1": "kappa >= 1", "kappa_ge2": "kappa >= 2",
             "alpha_ordinal": "alpha (ordinal)", "f1": f"F1 >= {relevant}"}
    if measure is not None:
        shown[f"kendall_tau({measure})"] = f"tau ({measure})"
    return shown
