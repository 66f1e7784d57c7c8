"""A measure as a method declares it, as ir_measures declares its measures: name, description,
value of a topic with no judgment, diagnostic or ranked. Defined here, at the bottom, so that
the pure measure modules declare theirs without importing the method interface."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

UNIT = "0-1"  # the scale of a share or a mean of shares


@dataclass(frozen=True)
class Measure:
    """One measure of a method.

    `missing`: its value for a topic in scope that a run has no judgment of (0.0: the mean is
    over every topic; None: the topic is left out, the mean is over the answered topics only,
    as the AutoNuggetizer's L). `diagnostic`: listed only where some judgment gives it, never
    the ranking measure. `higher_better`: False for a measure where less is better, None for
    one that describes the answers and is no better either way (the answer length L).
    `scale`: what its values are (0-1 by default; "words", "count", an Elo-like score):
    values on different scales are never compared as values, only as rankings. `how`: how a
    run's value is made, in words, where it is not a mean over topics (a model fitted on
    every judgment at once)."""

    name: str
    description: str
    missing: float | None = 0.0
    diagnostic: bool = False
    higher_better: bool | None = True
    scale: str = UNIT
    how: str | None = None

    @property
    def answered_only(self) -> bool:
        """Whether its mean is over the topics a run answered only."""
        return self.missing is None

    def rule(self) -> str:
        """How a run's mean is taken, in words (for `nuggetizer methods`)."""
        if self.how is not None:
            mean = self.how
        elif self.missing is None:
            mean = "mean over the topics a run answered"
        else:
            mean = f"mean over every topic (an unanswered one scores {self.missing:g})"
        extras = [mean]
        if self.diagnostic:
            extras.append("diagnostic: listed only where some judgment gives it")
        if self.higher_better is None:
            extras.append("descriptive: neither higher nor lower is better")
        elif not self.higher_better:
            extras.append("lower is better")
        return "; ".join(extras)


def names(measures: Sequence[Measure]) -> tuple[str, ...]:
    """The names of declared measures, in order."""
    return tuple(m.name for m in measures)


def counted(measures: Iterable[Measure]) -> frozenset[str]:
    """The names of the measures declared as counts (battles' wins): written whole."""
    return frozenset(m.name for m in measures if m.scale == "count")
