"""Scoring profiles: which reading of the published definitions a score takes where they leave
a choice, named in every output's provenance (`profile`).

- `guideline` (the default): the TREC RAG 2026 guideline's reading (TREC-RAG/trec-rag-skills
  rag-task.md at f281e88) and the rules this project applies to every method
  (scoring/engine.py): what a judge could not label is left out and counted, never scored;
  a topic a run did not answer scores 0.
- `ragdoll`: the numbers of castorini's RAGDoll, the track's scorer (github castorini/RAGDoll at
  1f06719, read from its metric code and tests: `support/metrics.py`, `nuggetizer/metrics.py`,
  `rubric/metrics.py`, `arena/stages.py`), so that an organizer can reproduce the published
  2026 numbers. Each flag below is one place where the two differ; the guide's page
  docs/explanation/scoring-profiles.md sets them side by side with the guideline's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nuggetizer.errors import ConfigError


@dataclass(frozen=True)
class Profile:
    """One reading of the definitions (module docstring).

    `unanswered_zero`: a topic in scope that a run did not answer scores 0 in its run's mean
    (else the mean is over the topics the run answered). `failures_zero`: a nugget or rubric
    criterion the judge could not label counts as unsupported / not satisfied, its weight
    kept in the denominator, and an answer with nothing labelled scores (else such an item
    is left out and counted, and such an answer has no score). `support_object_mean`: citation
    support is, per answer object, the mean weight of its judged citations, and precision the
    mean of those over the objects (else precision pools every judged citation, micro, and an
    object's recall weight is its best citation's). `ragdoll_order`: a battle is judged in one
    presentation order drawn as RAGDoll draws it (else both orders, MT-Bench's rule, or one
    order drawn by this project's seeded hash). `empty_rubric_nan`: a rubric with no positive
    weight has no score (else 0)."""

    name: str
    description: str
    unanswered_zero: bool
    failures_zero: bool
    support_object_mean: bool
    ragdoll_order: bool
    empty_rubric_nan: bool
    # method settings whose default the profile changes: {method: {setting: value}}; a
    # setting given explicitly wins
    defaults: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

    def settings_of(self, method: str) -> dict[str, Any]:
        """The defaults the profile gives the method `method`'s settings."""
        return dict(dict(self.defaults).get(method, ()))


GUIDELINE = Profile(
    "guideline", "the TREC RAG 2026 guideline's reading; judge failures left out and "
    "counted; an unanswered topic scores 0", unanswered_zero=True, failures_zero=False,
    support_object_mean=False, ragdoll_order=False, empty_rubric_nan=False)
RAGDOLL = Profile(
    "ragdoll", "castorini RAGDoll's numbers (the TREC RAG 2026 scorer): support per answer "
    "object, judge failures scored 0, run means over the topics present, one presentation "
    "order per battle", unanswered_zero=False, failures_zero=True, support_object_mean=True,
    ragdoll_order=True, empty_rubric_nan=True,
    # RAGDoll judges one order per battle, and its arena's default seed is 13
    defaults=(("battles", (("both_orders", False), ("seed", 13))),))
PROFILES: dict[str, Profile] = {p.name: p for p in (GUIDELINE, RAGDOLL)}
DEFAULT_PROFILE = GUIDELINE.name


def get_profile(name: str | None) -> Profile:
    """The profile called `name` (None: the default); ConfigError naming the known ones."""
    if name is None:
        return GUIDELINE
    if name not in PROFILES:
        raise ConfigError(f"unknown scoring profile {name!r}: one of {', '.join(PROFILES)}")
    return PROFILES[name]
