"""What a step will do, decided before any LLM call: its inputs read and checked (inputs,
sources), its stages (steps), the graded plans of UMBRELA (graded), and a track's config and
its plan for `evaluate` (track, evaluate). Executors in nuggetizer/run/ run what is planned here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.plan.graded import KeySpec, PoolSpec, grade_then_build_plan
    from nuggetizer.plan.inputs import answer_targets, cite_targets, key_inputs
    from nuggetizer.plan.sources import key_inputs_for, make_targets
    from nuggetizer.plan.steps import assign_plan, nuggetize_plan
    from nuggetizer.plan.track import load_track


__getattr__ = lazy_face(__name__)


__all__ = [
    "KeySpec", "PoolSpec", "answer_targets", "assign_plan", "cite_targets",
    "grade_then_build_plan", "key_inputs", "key_inputs_for", "load_track", "make_targets",
    "nuggetize_plan",
]
