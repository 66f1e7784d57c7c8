"""The run-level meta-evaluation as autojudge-evaluate 1.1 computes it, beyond the measures of
`agreement.meta_evaluation`: tau_GAP and tau_GAP@k (over the top k runs of the reference), the
mean per-topic Kendall's tau and Spearman's rho (each topic's ranking of the runs both hold),
the coverage of the reference's runs, and Bland-Altman bias and 95% limits of agreement.

Runs are aligned in run-id order, as autojudge-evaluate aligns them (tau_GAP breaks ties in
the evaluated scores by that order); the top k of the reference are its k highest (ties by run
id).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from nuggetizer.measures.correlation import kendall_tau, spearman
from nuggetizer.measures.meta import bland_altman, coverage, tau_gap

PerTopic = Mapping[str, Mapping[str, float]]  # run -> topic -> value


def tau_gap_at_k(truth: Mapping[str, float], evaluated: Mapping[str, float], k: int) -> float:
    """tau_GAP over the top k runs of the reference `truth` that `evaluated` also scores."""
    top = sorted(truth, key=lambda r: (-truth[r], r))[:k]
    runs = sorted(r for r in top if r in evaluated)
    return tau_gap([truth[r] for r in runs], [evaluated[r] for r in runs])


def per_topic(truth: PerTopic, evaluated: PerTopic) -> dict[str, dict[str, float]]:
    """{topic: {"kendall", "spearman"}} over the runs both score on the topic, for every topic
    both hold (autojudge-evaluate's `evaluate_per_topic`)."""
    topics = sorted({q for v in truth.values() for q in v}
                    & {q for v in evaluated.values() for q in v})
    result = {}
    for q in topics:
        runs = sorted(r for r in set(truth) & set(evaluated)
                      if q in truth[r] and q in evaluated[r])
        x, y = [truth[r][q] for r in runs], [evaluated[r][q] for r in runs]
        result[q] = {"kendall": kendall_tau(x, y), "spearman": spearman(x, y)}
    return result


def _mean_defined(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


def track_measures(truth: Mapping[str, float], evaluated: Mapping[str, float], k: int = 10,
                   truth_topics: PerTopic | None = None,
                   evaluated_topics: PerTopic | None = None) -> dict[str, float]:
    """tau_gap, tau_gap@k, coverage, the Bland-Altman bias and limits, and (per-topic values
    given) the mean of the defined per-topic Kendall and Spearman correlations."""
    runs = sorted(set(truth) & set(evaluated))
    x, y = [truth[r] for r in runs], [evaluated[r] for r in runs]
    result = {"tau_gap": tau_gap(x, y), f"tau_gap@{k}": tau_gap_at_k(truth, evaluated, k),
              "coverage": coverage(truth, evaluated), **bland_altman(x, y)}
    if truth_topics and evaluated_topics:
        topics = per_topic(truth_topics, evaluated_topics)
        result["topic_kendall"] = _mean_defined([v["kendall"] for v in topics.values()])
        result["topic_spearman"] = _mean_defined([v["spearman"] for v in topics.values()])
    return result
