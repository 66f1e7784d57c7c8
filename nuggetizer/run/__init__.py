"""How a plan runs: the executors (live, dry, batch) and the stage types they run, the LLM
steps' bodies over files with their journals, provenance, progress, usage and votes, and the
factories of assessors and executors that the CLI and the Python API share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.run.batching import Batcher
    from nuggetizer.run.progress import Summary
    from nuggetizer.run.steps import build_keys, judge_targets


__getattr__ = lazy_face(__name__)


__all__ = ["Batcher", "Summary", "build_keys", "judge_targets"]
