"""A measure as a method declares it, as ir_measures declares its measures: name, description,
value of a topic with no judgment, diagnostic or ranked. Defined here, at the bottom, so that
the pure measure modules declare theirs without importing the method interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    """One measure of a method.

    `missing`: its value for a topic in scope that a run has no judgment of (0.0: the mean is
    over every topic; None: the topic is left out, the mean is over the answered topics only,
    as the AutoNuggetizer's L). `diagnostic`: listed only where some judgment gives it, never
    the ranking measure. `higher_better`: False for a measure where less is better."""

    name: str
    description: str
    missing: float | None = 0.0
    diagnostic: bool = False
    higher_better: bool = True

    @property
    def answered_only(self) -> bool:
        """Whether its mean is over the topics a run answered only."""
        return self.missing is None

    def rule(self) -> str:
        """How a run's mean is taken, in words (for `nuggetizer methods`)."""
        if self.missing is None:
            mean = "mean over the topics a run answered"
        else:
            mean = f"mean over every topic (an unanswered one scores {self.missing:g})"
        extras = [mean]
        if self.diagnostic:
            extras.append("diagnostic: listed only where some judgment gives it")
        if not self.higher_better:
            extras.append("lower is better")
        return "; ".join(extras)


def names(measures: Sequence[Measure]) -> tuple[str, ...]:
    """The names of declared measures, in order."""
    return tuple(m.name for m in measures)
