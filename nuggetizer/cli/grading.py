"""The options that choose UMBRELA's scale and, on 0-4, where the sub-narratives come from
(`relevance`, `nuggetize --grade-pool`), shared by the commands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.names import DEFAULT_SCALE, SCALE_NAMES

if TYPE_CHECKING:
    from nuggetizer.relevance.scales import Grading

FILE_IN = click.Path(dir_okay=False, path_type=Path)


def scale_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """--scale, --narratives, --sub-narratives-from."""
    for option in reversed((
        click.option("--scale", type=click.Choice(list(SCALE_NAMES)), default=DEFAULT_SCALE,
                     show_default=True,
                     help="UMBRELA's scale: 0-3 (query, passage; relevant >= 1) or 0-4 "
                          "(narrative, sub-narratives, passage; TREC RAG 2026; relevant >= 2)"),
        click.option("--narratives", type=FILE_IN, default=None,
                     help="--scale 0-4: JSONL (or a JSON array) of {qid, narrative?, "
                          "sub_narratives: [...]}"),
        click.option("--sub-narratives-from", "sub_narratives_from", type=FILE_IN,
                     default=None,
                     help="--scale 0-4: a nuggets file whose nuggets carry "
                          "mapped_sub_narrative (a topic's distinct ones, in order)"),
    )):
        function = option(function)
    return function


def relevant_default(grading: Grading, min_grade: int | None, settings: Sequence[str]
                     ) -> int | None:
    """The grade keys are built from: --min-grade (or `--set min_grade=`) when given, else
    the scale's relevant grade where it differs from today's default (2 on 0-4)."""
    if min_grade is not None or any(s.split("=", 1)[0].strip() == "min_grade"
                                    for s in settings):
        return min_grade
    return None if grading.scale.name == DEFAULT_SCALE else grading.scale.relevant


def qrels_grading(qrels: Path | None) -> Grading:
    """The grading that qrels read for keys declare in their provenance (0-3 when unknown)."""
    from nuggetizer.relevance.scales import DEFAULT_GRADING, SCALES, Grading, common_scale

    declared = common_scale([qrels]) if qrels is not None else None
    return Grading(SCALES[declared]) if declared in SCALES else DEFAULT_GRADING
