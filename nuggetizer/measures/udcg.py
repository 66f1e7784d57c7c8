"""UDCG measures (as published): passage utility and the utility- and distraction-aware gain.

u = R * (1 - p_NR) with R = +1 for a relevant passage and -1 otherwise; for a context of k
passages UDCG = sigmoid((1/k) * sum(max(u, 0)) + (gamma/k) * sum(min(u, 0))). No positional
discount, no normalisation; passages without a score count in k and add nothing; an empty
context scores 0.0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("UDCG", "sigmoid of the mean positive and gamma-weighted negative utility "
            "u = R (1 - p_NR) of the context's passages"),
)
MEASURES: tuple[str, ...] = names(DECLARED)
GAMMA = 1 / 3
REFERENCE_GAMMA = 0.333  # the reference code's weight of irrelevant passages (-0.333)
NO_RESPONSE = "NO-RESPONSE"


def utility(relevant: bool, p_nr: float) -> float:
    """u = R * (1 - p_NR), R = +1 relevant, -1 not."""
    return (1.0 if relevant else -1.0) * (1.0 - p_nr)


def udcg(utilities: Sequence[float | None], gamma: float = GAMMA) -> float:
    """UDCG of one context: `None` marks a passage without a score (counted in k, adds 0)."""
    k = len(utilities)
    if k == 0:
        return 0.0
    positive = sum(max(u, 0.0) for u in utilities if u is not None)
    negative = sum(min(u, 0.0) for u in utilities if u is not None)
    return 1.0 / (1.0 + math.exp(-(positive / k + gamma * negative / k)))


def _is_prefix_token(token: str, target: str) -> bool:
    stripped = token.strip()
    return bool(stripped) and target.startswith(stripped)


def no_response_probability(
    first_token_logprobs: Mapping[str, float], target: str = NO_RESPONSE
) -> float:
    """p_NR from the first generated token's top alternatives (token -> log-probability).

    A token counts when, stripped of surrounding whitespace (tokenizers mark a leading space,
    e.g. " NO"), it is a non-empty prefix of "NO-RESPONSE" (case-sensitive: "N", "NO", "NO-"):
    the probability mass of every first token a NO-RESPONSE answer can start with. Alternatives
    outside the returned top-k are unknown and count as 0, so p_NR is a lower bound; capped at 1.
    """
    table = first_token_logprobs.items()
    mass = sum(math.exp(lp) for tok, lp in table if _is_prefix_token(tok, target))
    return min(mass, 1.0)
