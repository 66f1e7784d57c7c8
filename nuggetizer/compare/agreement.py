"""Agreement between two evaluations of the same runs (as the TREC 2024 RAG Track compares
automatic and manual evaluations).

Kendall's tau-b on a measure (V_strict by default; or on two different measures, one of each
side, e.g. V_strict against support_recall) three ways: at run level (run means), over
all (topic, run) pairs, and as the mean of per-topic taus; Spearman's rho alongside. Either side
is an assessment set (files or folders, scored by `score`; a battles folder by its
Bradley-Terry ranking, e.g. `--measure-a bt_score --measure-b V_strict`), a per-topic TSV, a
leaderboard TSV (run level only), or a leaderboard of the TREC AutoJudge framework
(`run_id measure topic value`).

At run level, the meta-evaluation of the TREC AutoJudge track too, with A the reference (the
truth) and B the evaluated leaderboard: tau_AP (Yilmaz, Aslam and Robertson 2008), its
tie-aware symmetric form tau_AP-b as autojudge-evaluate computes it, Kendall@k (tau-b over the
top k runs of A) and Pearson's r; and autojudge-evaluate 1.1's tau_GAP, tau_GAP@k, per-topic
Kendall and Spearman, coverage and Bland-Altman agreement (compare/meta_evaluate.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.compare.meta_evaluate import track_measures
from nuggetizer.errors import InputError
from nuggetizer.formats.autojudge import (
    is_autojudge_leaderboard,
    iter_leaderboard,
    measure_column,
)
from nuggetizer.formats.ragdoll import SUPPORT_METRICS
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.registry import (
    DEFAULT_METHOD,
    make_method,
    method_class,
    method_holding,
    method_names,
)
from nuggetizer.measures.correlation import kendall_tau, pearson, spearman
from nuggetizer.scoring.engine import ScoreTable, score_paths
from nuggetizer.scoring.tables import is_per_topic, iter_per_topic, read_leaderboard

PerTopic = dict[str, dict[str, float]]  # run -> topic -> value


@dataclass
class Scores:
    """One evaluation's values of one measure: run means and, when known, per-topic values."""

    name: str
    means: dict[str, float]
    per_topic: PerTopic | None = None


@dataclass
class Agreement:
    """The correlations of two evaluations over their common runs and topics."""

    measure: str
    runs: list[str]
    topics: list[str]
    run_tau: float
    run_spearman: float
    pair_tau: float | None = None
    pair_spearman: float | None = None
    topic_tau: float | None = None
    topic_taus: dict[str, float] = field(default_factory=dict)
    undefined_topics: list[str] = field(default_factory=list)
    meta: dict[str, float] = field(default_factory=dict)  # run-level meta-evaluation
    refused: str | None = None  # why value comparisons were left out (different scales)

    def rows(self) -> list[tuple[str, str, int, str, str]]:
        """(level, what, n, Kendall tau, Spearman rho) rows for a table."""

        def fmt(x: float | None) -> str:
            return "-" if x is None or math.isnan(x) else f"{x:.4f}"

        rows = [("run", "run means", len(self.runs), fmt(self.run_tau), fmt(self.run_spearman))]
        if self.pair_tau is not None:
            n = len(self.runs) * len(self.topics)
            rows.append(("pairs", "all (topic, run) pairs", n, fmt(self.pair_tau),
                         fmt(self.pair_spearman)))
            rows.append(("topic", f"mean of per-topic taus ({len(self.topic_taus)} defined)",
                         len(self.topic_taus), fmt(self.topic_tau), "-"))
        return rows

    def tsv(self) -> str:
        lines = ["level\twhat\tn\tkendall_tau\tspearman_rho"]
        lines += ["\t".join(str(c) for c in row) for row in self.rows()]
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        from nuggetizer.report.board import markdown_cell

        lines = [f"Agreement on {self.measure} over {len(self.runs)} runs and "
                 f"{len(self.topics)} topics", "",
                 "| level | what | n | Kendall tau | Spearman rho |", "|---|---|---:|---:|---:|"]
        lines += ["| " + " | ".join(markdown_cell(str(c)) for c in row) + " |"
                  for row in self.rows()]
        if self.meta:
            lines += ["", "Run-level meta-evaluation (A the reference):", "",
                      "| measure | value |", "|---|---:|"]
            lines += [f"| {name} | {_fmt(v)} |" for name, v in self.meta.items()]
        if self.refused:
            lines += ["", self.refused]
        return "\n".join(lines) + "\n"

    def latex(self) -> str:
        """The correlations (and the run-level meta-evaluation) as LaTeX booktabs tables, as
        TREC overview papers print them."""
        from nuggetizer.report.board import latex_table

        caption = (f"Agreement on {self.measure} over {len(self.runs)} runs and "
                   f"{len(self.topics)} topics")
        text = latex_table(["level", "what", "n", "Kendall tau", "Spearman rho"],
                           [[str(c) for c in row] for row in self.rows()], caption,
                           "tab:agreement", text_columns=2)
        if self.meta:
            text += latex_table(["measure", "value"],
                                [[name, _fmt(v)] for name, v in self.meta.items()],
                                "Run-level meta-evaluation (A the reference)"
                                + (f". {self.refused}" if self.refused else ""),
                                "tab:meta-evaluation")
        return text

    def meta_tsv(self) -> str:
        """`measure value` rows of the run-level meta-evaluation."""
        return "measure\tvalue\n" + "".join(f"{k}\t{_fmt(v)}\n" for k, v in self.meta.items())


def _fmt(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.4f}"


def tau_ap(truth: Sequence[float], evaluated: Sequence[float]) -> float:
    """tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008) of the ranking by `evaluated` against
    the ranking by `truth` (higher ranks first):
    2/(N-1) * sum over positions i = 2..N of the evaluated ranking of C(i)/(i-1) - 1, where
    C(i) counts the items above position i that the truth also ranks above item i. Asymmetric,
    and for rankings without ties: ties in `evaluated` are broken by list order, a pair tied in
    `truth` counts as not concordant. NaN for fewer than 2 items."""
    n = len(truth)
    if n != len(evaluated):
        raise ValueError(f"unequal lengths: {n} != {len(evaluated)}")
    if n < 2:
        return math.nan
    order = sorted(range(n), key=lambda k: (-evaluated[k], k))
    total = 0.0
    for i in range(1, n):
        above = sum(truth[order[j]] > truth[order[i]] for j in range(i))
        total += above / i
    return 2.0 / (n - 1) * total - 1.0


def _tau_ap_ties(truth: Sequence[float], evaluated: Sequence[float]) -> float:
    """One direction of tau_AP-b: positions in `evaluated`, whose tie groups count as one
    position (an item is compared only with the items strictly above its group, divided by
    their number); a pair tied in `truth` is not concordant; the top group is left out."""
    n = len(truth)
    total, counted = 0.0, 0
    for i in range(n):
        above = [j for j in range(n) if evaluated[j] > evaluated[i]]
        if not above:
            continue
        counted += 1
        total += sum(truth[j] > truth[i] for j in above) / len(above)
    if counted == 0:
        return 0.0  # all tied, as autojudge-evaluate returns
    return 2.0 / counted * total - 1.0


def tau_ap_b(truth: Sequence[float], evaluated: Sequence[float]) -> float:
    """The tie-aware symmetric tau_AP as autojudge-evaluate computes it (`tauap_b`, after
    pyircore): the mean of the tie-aware tau_AP in both directions. Without ties it is the mean
    of tau_ap(truth, evaluated) and tau_ap(evaluated, truth)."""
    if len(truth) != len(evaluated):
        raise ValueError(f"unequal lengths: {len(truth)} != {len(evaluated)}")
    if len(truth) < 2:
        return math.nan
    return (_tau_ap_ties(truth, evaluated) + _tau_ap_ties(evaluated, truth)) / 2


def top_k(truth: Mapping[str, float], k: int) -> list[str]:
    """The k runs the reference ranks highest (ties by run id)."""
    return sorted(truth, key=lambda r: (-truth[r], r))[:k]


def kendall_at_k(truth: Mapping[str, float], evaluated: Mapping[str, float], k: int) -> float:
    """Kendall@k: tau-b over the top k runs of the reference `truth` (and in `evaluated`)."""
    runs = [r for r in top_k(truth, k) if r in evaluated]
    return kendall_tau([truth[r] for r in runs], [evaluated[r] for r in runs])


def meta_evaluation(truth: Mapping[str, float], evaluated: Mapping[str, float],
                    k: int = 10) -> dict[str, float]:
    """The track's run-level measures over the runs both leaderboards hold."""
    runs = sorted(set(truth) & set(evaluated))
    x, y = [truth[r] for r in runs], [evaluated[r] for r in runs]
    return {"kendall": kendall_tau(x, y), "spearman": spearman(x, y), "pearson": pearson(x, y),
            "tau_ap": tau_ap(x, y), "tau_ap_b": tau_ap_b(x, y),
            f"kendall@{k}": kendall_at_k(dict(zip(runs, x)), dict(zip(runs, y)), k)}


def from_table(table: ScoreTable, measure: str, name: str) -> Scores:
    """The values of `measure` in a score table."""
    if not table.means:
        raise InputError(name, None, "no runs to compare")
    if measure not in next(iter(table.means.values())):
        raise InputError(name, None, f"unknown measure {measure!r}")
    per_topic = {r: {q: row[measure] for q, row in rows.items() if measure in row}
                 for r, rows in table.per_topic.items()}
    return Scores(name, {r: m[measure] for r, m in table.means.items()}, per_topic)


def _read_tsv(path: Path, measure: str) -> Scores:
    """A per-topic TSV (`run_id topic_id measure value`), a leaderboard TSV, or a leaderboard
    without header: the AutoJudge framework's (`run_id measure topic value`) or one in
    ir_measures' order (`run_id topic measure value`, as castorini RAGDoll's `support
    metric-rows` writes, its run means then over the topics present)."""
    autojudge = is_autojudge_leaderboard(path)
    if not autojudge and not is_per_topic(path):
        return Scores(str(path), read_leaderboard(path, measure))
    means: dict[str, float] = {}
    per_topic: PerTopic = {}
    rows = iter_leaderboard(path, measure_column(path, known_measures())) if autojudge \
        else iter_per_topic(path)
    found: dict[str, None] = {}
    for run, topic, name, value in rows:
        found.setdefault(name)
        if name != measure:
            continue
        if topic == "all":
            means[run] = value
        else:
            per_topic.setdefault(run, {})[topic] = value
    for run, values in per_topic.items():
        means.setdefault(run, sum(values.values()) / len(values))
    if not means:
        shown = ", ".join(list(found)[:12]) + (", ..." if len(found) > 12 else "")
        raise InputError(path, None, f"no rows for measure {measure!r} (the file's measures: "
                         f"{shown})")
    return Scores(str(path), means, per_topic or None)  # only `all` rows: run level only


def known_measures() -> set[str]:
    """Every measure a registered method declares, and those of castorini RAGDoll's
    `support metric-rows`: the names that tell a leaderboard's measure column."""
    names = {m.name for n in method_names() for m in method_class(n).declared}
    return names | set(SUPPORT_METRICS)


def load_scores(paths: Sequence[Path], measure: str, *, keys: Mapping[str, Any] | None = None,
                lenient: bool = False, method: AnswerKeyMethod | None = None) -> Scores:
    """One side of a comparison: a TSV, or judgment files/folders of `method` (default: the
    registry's default method) scored with `score` (against its `keys` when given)."""
    if len(paths) == 1 and paths[0].is_file() and (
            paths[0].suffix.lower() in (".tsv", ".txt")
            or (".jsonl" not in paths[0].name.lower() and is_autojudge_leaderboard(paths[0]))):
        return _read_tsv(paths[0], measure)
    if method is None:  # the default method's, or those of the method they unmistakably are
        method = make_method(method_holding(paths) or DEFAULT_METHOD)
        keys = keys if method.judging.needs_key else None
    table = score_paths(method, list(paths), keys, lenient)
    return from_table(table, measure, " ".join(str(p) for p in paths))


VALUE_COMPARISONS = ("pearson", "ba_bias", "ba_loa_low", "ba_loa_high")


def scale_of(measure: str) -> str | None:
    """The scale a registered method declares for `measure` (None: no method declares it, as
    the measures of an AutoJudge leaderboard)."""
    for name in method_names():
        for declared in method_class(name).declared:
            if declared.name == measure:
                return declared.scale
    return None


def compare(a: Scores, b: Scores, measure: str = "V_strict", k: int = 10,
            scales: tuple[str | None, str | None] = (None, None)) -> Agreement:
    """Correlate two evaluations over the runs (and topics) both hold; A is the reference of
    the run-level meta-evaluation (Kendall@`k`). `scales`: those of A's and B's measures;
    when both are known and differ, only rankings are compared (Kendall, Spearman, tau_AP
    ...): Pearson's r and Bland-Altman, which compare values, are left out and
    `refused` says why."""
    runs = sorted(set(a.means) & set(b.means))
    if len(runs) < 2:
        raise InputError(b.name, None, f"only {len(runs)} run(s) in common with {a.name}: "
                         "agreement needs at least two")
    xa, xb = [a.means[r] for r in runs], [b.means[r] for r in runs]
    result = Agreement(measure, runs, [], kendall_tau(xa, xb), spearman(xa, xb))
    result.meta = meta_evaluation(a.means, b.means, k)
    result.meta.update(track_measures(a.means, b.means, k, a.per_topic, b.per_topic))
    if None not in scales and scales[0] != scales[1]:
        for name in VALUE_COMPARISONS:
            result.meta.pop(name, None)
        result.refused = (f"Pearson's r and Bland-Altman left out: they compare values, and "
                          f"A's are on the scale {scales[0]}, B's on {scales[1]}; the rankings "
                          "(Kendall's tau, Spearman's rho, tau_AP) compare across scales.")
    if a.per_topic is None or b.per_topic is None:
        return result
    topics = sorted(set.intersection(*(set(per_topic.get(r, {}))
                                       for per_topic in (a.per_topic, b.per_topic)
                                       for r in runs)))
    result.topics = topics
    if not topics:
        return result
    pa = [a.per_topic[r][q] for q in topics for r in runs]
    pb = [b.per_topic[r][q] for q in topics for r in runs]
    result.pair_tau, result.pair_spearman = kendall_tau(pa, pb), spearman(pa, pb)
    for q in topics:
        tau = kendall_tau([a.per_topic[r][q] for r in runs], [b.per_topic[r][q] for r in runs])
        if math.isnan(tau):
            result.undefined_topics.append(q)
        else:
            result.topic_taus[q] = tau
    if result.topic_taus:
        result.topic_tau = sum(result.topic_taus.values()) / len(result.topic_taus)
    return result


def scatter_png(a: Scores, b: Scores, agreement: Agreement, path: Path,
                measures: tuple[str, str] | None = None) -> None:
    """Run means (left) and (topic, run) points (right) of A against B, as the overview draws."""
    from nuggetizer.report.figures import figure, save

    fig, axes = figure(1, 2 if agreement.topics else 1, width=10 if agreement.topics else 5)
    runs = agreement.runs
    ax = axes[0]
    ax.scatter([a.means[r] for r in runs], [b.means[r] for r in runs], s=24)
    ax.set_title(f"runs: tau {agreement.run_tau:.3f}")
    if agreement.topics and a.per_topic and b.per_topic:
        ax2 = axes[1]
        ax2.scatter([a.per_topic[r][q] for q in agreement.topics for r in runs],
                    [b.per_topic[r][q] for q in agreement.topics for r in runs], s=8, alpha=0.4)
        ax2.set_title(f"(topic, run) pairs: tau {agreement.pair_tau or math.nan:.3f}")
    first, second = measures or (agreement.measure, agreement.measure)
    for axis in axes:
        axis.set_xlabel(f"{first}: {Path(a.name).name}")
        axis.set_ylabel(f"{second}: {Path(b.name).name}")
        axis.plot([0, 1], [0, 1], color="grey", linewidth=0.5)
    save(fig, path)
