"""What a step will do, decided before any LLM call, from its inputs read in one pass
(formats/track_inputs.py): what to read for the methods and what they make of it, checked
(sources, inputs), its stages (steps), the graded plans of UMBRELA (graded), and a track's
config and its plan for `evaluate` (track, evaluate). Planning reads no input file; the stages,
as they run, read what the stages before them wrote (keys, grades, judgments). Executors in
nuggetizer/run/ run what is planned here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.plan.graded import KeySpec, PoolSpec, grade_then_build_plan, wanted_to_grade
    from nuggetizer.plan.inputs import answer_targets, cite_targets, cited_ids, key_inputs
    from nuggetizer.plan.sources import (
        key_inputs_for,
        make_targets,
        wanted_to_build,
        wanted_to_judge,
    )
    from nuggetizer.plan.steps import assign_plan, nuggetize_plan
    from nuggetizer.plan.track import load_track


__getattr__ = lazy_face(__name__)


__all__ = [
    "KeySpec", "PoolSpec", "answer_targets", "assign_plan", "cite_targets", "cited_ids",
    "grade_then_build_plan", "key_inputs", "key_inputs_for", "load_track", "make_targets",
    "nuggetize_plan", "wanted_to_build", "wanted_to_grade", "wanted_to_judge",
]
