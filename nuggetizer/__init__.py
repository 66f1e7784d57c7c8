"""nuggetizer: TREC-style nugget evaluation of retrieval-augmented generation.

The names below are the stable entry points; each is imported on first use, so that
`import nuggetizer` stays instant (the CLI and every sub-module import what they need):

- `make_assessor(spec, cache=...)`: an LLM assessor (`local`, `openai:MODEL`, `vllm:MODEL`,
  `mock`), and `register_backend` for a kind of your own;
- `make_method(name, settings)`, `method_names()`, and the `register` class decorator for a
  method of your own (`nuggetizer.interface.base.AnswerKeyMethod`);
- for a method of your own: `AnswerKeyMethod`, `KeyInput`, `Target`, `Outcome` (the
  interface), `Measure` and `setting` (its declarations), `ReportPart`, `ReportSection` and
  `ReportFigure` (its part of the report), `KeyIds` and `JudgmentIds` (pydantic bases of
  its key and judgment records: `key_model`, `judgment_model`);
- the notebook API of `nuggetizer.api`: `load_topics`, `load_runs`, `load_qrels`,
  `load_keys`, `load_judgments`, `method`, `assessor`, `build_keys`, `judge`, `score` (a
  `Scores` table).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "make_assessor": "nuggetizer.assessors",
    "register_backend": "nuggetizer.assessors",
    "make_method": "nuggetizer.interface.registry",
    "method_names": "nuggetizer.interface.registry",
    "register": "nuggetizer.interface.registry",
    **{name: "nuggetizer.interface.base" for name in (
        "AnswerKeyMethod", "KeyInput", "Outcome", "Target")},
    "Measure": "nuggetizer.measures.base",
    "setting": "nuggetizer.interface.declare",
    **{name: "nuggetizer.formats.records" for name in ("JudgmentIds", "KeyIds")},
    **{name: "nuggetizer.interface.report_part" for name in (
        "ReportFigure", "ReportPart", "ReportSection")},
    **{name: "nuggetizer.api" for name in (
        "Scores", "assessor", "build_keys", "judge", "load_judgments", "load_keys", "load_qrels",
        "load_runs", "load_topics", "method", "score")},
}

__all__ = [
    "AnswerKeyMethod", "JudgmentIds", "KeyIds", "KeyInput", "Measure", "Outcome",
    "ReportFigure", "ReportPart", "ReportSection", "Target", "setting",
    "Scores", "__version__", "assessor", "build_keys", "judge", "load_judgments", "load_keys",
    "load_qrels", "load_runs", "load_topics", "make_assessor", "make_method", "method",
    "method_names", "register", "register_backend", "score",
]

if TYPE_CHECKING:
    from nuggetizer.api import (
        Scores,
        assessor,
        build_keys,
        judge,
        load_judgments,
        load_keys,
        load_qrels,
        load_runs,
        load_topics,
        method,
        score,
    )
    from nuggetizer.assessors import make_assessor, register_backend
    from nuggetizer.formats.records import JudgmentIds, KeyIds
    from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target
    from nuggetizer.interface.declare import setting
    from nuggetizer.interface.registry import make_method, method_names, register
    from nuggetizer.interface.report_part import ReportFigure, ReportPart, ReportSection
    from nuggetizer.measures.base import Measure


def __getattr__(name: str) -> Any:
    """The entry points of `_LAZY`, imported when first asked for (as nuggetizer.faces does
    for the packages; written out here so that `import nuggetizer` loads no submodule)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nuggetizer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
