"""The stages of the LLM steps (build keys, judge targets) and the plans of `nuggetize` and
`assign`, built once from what the step reads into a Plan (run/stages.py) that any executor
runs (run/execute.py).

    plan = assign_plan(method, keys, targets, Path("out/judgments"))
    execute(plan, assessor, mode="dry")  # or "live", "batch"
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.run.stages import Plan, Stage, Where
from nuggetizer.run.steps import build_keys, judge_targets

NUGGETIZE_NOTE = ("nugget creation is iterative: the first window of each topic is counted "
                  "exactly, later windows as a lower bound (rendered without the nuggets "
                  "created before them); importance calls are estimated, not rendered")
ASSIGN_NOTE = ("exact for answers that parse at once (a re-ask is an extra call a dry run "
               "cannot see)")


def key_stage(method: AnswerKeyMethod, inputs: Sequence[KeyInput], key: Path, *,
              skipped: int = 0, track: str | None = None) -> Stage:
    """Build every topic's key from `inputs` into `key`; `skipped` topics had no passage to
    build from; `track`: the track the keys' provenance names."""

    def work(assessor: Any, where: Where) -> Coroutine[Any, Any, Any]:
        return build_keys(method, inputs, assessor, where.path(key), track, skipped)

    return Stage("nuggetize", work,
                 title=lambda: f"nuggetize --method {method.name} ({len(inputs)} topics)",
                 note=lambda ledgers: NUGGETIZE_NOTE,
                 estimate=lambda: method.unrendered_key_calls(inputs))


def assign_stage(method: AnswerKeyMethod, keys: Callable[[], Mapping[str, Any] | None],
                 targets: Mapping[str, Mapping[str, Target]], output: Path,
                 track: str | None = None,
                 narratives: Callable[[], Mapping[str, str]] = dict) -> Stage:
    """Judge every target against its topic's key (`keys()`, read when the stage starts:
    they may be built by the stage before) into the folder `output`; a method that judges
    its targets together (battles: in pairs, on the topics' `narratives()`) its own way."""

    async def work(assessor: Any, where: Where) -> Any:
        folder = where.path(output)
        together = await method.judge_together(assessor, targets, narratives(), folder, track)
        if together is not None:
            return together
        return await judge_targets(method, keys(), targets, assessor, folder, track)

    return Stage("assign", work, title=lambda: f"assign --method {method.name}",
                 note=lambda ledgers: ASSIGN_NOTE)


def nuggetize_plan(method: AnswerKeyMethod, inputs: Sequence[KeyInput], output: Path | str,
                   skipped: int = 0) -> Plan:
    """The keys of every topic of `inputs`, built into `output` (JSONL); `skipped` topics
    had no passage to build from (counted in the summary)."""
    return Plan([key_stage(method, inputs, Path(output), skipped=skipped)])


def assign_plan(method: AnswerKeyMethod, keys: Mapping[str, Any] | None,
                targets: Mapping[str, Mapping[str, Target]], output: Path | str) -> Plan:
    """Every target judged against its topic's key (`keys` None: a method that judges
    without one), one judgment file per run in the folder `output`."""
    return Plan([assign_stage(method, lambda: keys, targets, Path(output))])
