"""Per-sub-narrative coverage (TREC RAG 2026): diagnostic measures beside the AutoNuggetizer's,
for keys whose nuggets carry `mapped_sub_narrative`. They never change V_strict and the rest.

For one answer, group the judged nuggets (assignment not unjudged) by their sub-narrative; a
sub-narrative's share is the fraction of its nuggets labelled `support` (strict: partial
support counts 0, as in V_strict). Then

- SN_cov_vital: the mean, over the sub-narratives with at least one judged vital nugget, of
  the share of their vital nuggets supported;
- SN_cov_all: the same over all nuggets (vital, okay, or of unjudged importance).

A mean over no sub-narrative is 0 (as V is for a topic without a vital nugget); where there are
such nuggets but none was judged, it is NaN (as V then: no score, left out and counted).
Nuggets with no sub-narrative are left out; an answer none of whose nuggets has one gets
neither measure, so a key without sub-narratives scores exactly as before. Like V, a topic
of the key that a run did not answer scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from nuggetizer.labels import STRICT_CREDIT
from nuggetizer.measures.base import Measure, names

SUB_NARRATIVE_DECLARED: tuple[Measure, ...] = (
    Measure("SN_cov_vital", "per topic, the mean over its sub-narratives of the share of "
            "their vital judged nuggets labelled support (keys with sub-narratives; not in "
            "the ranking)", diagnostic=True),
    Measure("SN_cov_all", "per topic, the mean over its sub-narratives of the share of all "
            "their judged nuggets labelled support (keys with sub-narratives; not in the "
            "ranking)", diagnostic=True),
)
SUB_NARRATIVE_MEASURES: tuple[str, ...] = names(SUB_NARRATIVE_DECLARED)


def _mean_share(groups: dict[str, list[float]], present: bool) -> float:
    """The mean share over the groups with a judged nugget; with none, NaN where nuggets
    were `present` (none judged: no score), else 0."""
    shares = [sum(credits) / len(credits) for credits in groups.values() if credits]
    if shares:
        return sum(shares) / len(shares)
    return math.nan if present else 0.0


def sub_narrative_coverage(nuggets: Iterable[tuple[str | None, str, str]]
                           ) -> dict[str, float]:
    """SN_cov_vital and SN_cov_all of one answer from (sub-narrative, importance, assignment)
    triples; {} when no nugget has a sub-narrative."""
    vital: dict[str, list[float]] = {}
    every: dict[str, list[float]] = {}
    mapped = any_vital = False
    for sub, importance, assignment in nuggets:
        if sub is None:
            continue
        mapped = True
        any_vital = any_vital or importance == "vital"
        vital.setdefault(sub, [])
        every.setdefault(sub, [])
        credit = STRICT_CREDIT.get(assignment)
        if credit is None:  # unjudged: left out of numerator and denominator
            continue
        every[sub].append(credit)
        if importance == "vital":
            vital[sub].append(credit)
    if not mapped:
        return {}
    return {"SN_cov_vital": _mean_share(vital, any_vital), "SN_cov_all": _mean_share(every, True)}
