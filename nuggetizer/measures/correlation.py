"""Correlations of two lists of scores (pure, on scipy): Kendall's tau-b, Spearman's rho and
Pearson's r, each NaN where it is undefined (fewer than two values, or a constant list)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (ties in either list handled); NaN when a list is constant."""
    if len(x) < 2:
        return math.nan
    return float(stats.kendalltau(x, y, variant="b").statistic)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho; NaN when a list is constant."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r; NaN when a list is constant."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(stats.pearsonr(x, y).statistic)
