"""What the core commands share: the method with its flags, the inputs its keys are built
from (graded by the LLM where no qrels exist), the targets it judges, and scoring with its
report."""


from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import click

from nuggetizer.cli.common import parse_pairs
from nuggetizer.errors import ConfigError, NothingJudgedError
from nuggetizer.flow.provenance import hash_ahead, write_sidecar
from nuggetizer.flow.scoring import ScoreTable, judgment_files, read_judged, score_judged
from nuggetizer.flow.sources import make_targets as make_targets  # where tests read it
from nuggetizer.flow.sources import note_unknown
from nuggetizer.flow.tables import format_leaderboard, write_tables
from nuggetizer.formats.leaderboards import table_rows, write_leaderboard
from nuggetizer.formats.topics import read_topics
from nuggetizer.methods.base import AnswerKeyMethod
from nuggetizer.methods.registry import make_method, method_class

# Flags of the core commands that stand for a method setting: (flag, setting).
SETTING_FLAGS = {"min_grade": "--min-grade", "window": "--window", "max_nuggets":
                 "--max-nuggets", "keep": "--keep", "label": "--no-labels",
                 "assign_batch": "--batch", "render": "--render"}


@runtime_checkable
class DiversityQrels(Protocol):
    """A method that writes diversity qrels (`score --diversity-qrels`; crux does)."""

    def diversity_qrels(self, keys: Mapping[str, Any], files: Sequence[Path], out: Path
                        ) -> None: ...


def setting_names(name: str) -> set[str]:
    """The settings of the method called `name`."""
    return {f.name for f in dataclasses.fields(method_class(name).config_type)}


def configured(name: str, pairs: tuple[str, ...], **flags: Any) -> AnswerKeyMethod:
    """The method `name` with its `--set` pairs and the setting flags that were given."""
    given = {k: v for k, v in flags.items() if v is not None}
    known = setting_names(name)
    for setting in given:
        if setting not in known:
            raise ConfigError(f"{SETTING_FLAGS[setting]} is not an option of --method {name}")
    return make_method(name, parse_pairs(pairs, given))


def score_and_report(method: AnswerKeyMethod, paths: Sequence[Path], key: Path | None,
                     output: Path | None, per_topic: Path | None, lenient: bool,
                     started: float, diversity: Path | None = None,
                     topics: Path | None = None, autojudge: Path | None = None,
                     only: set[str] | None = None, autojudge_format: str = "tot"
                     ) -> ScoreTable:
    """Score judgment files against the key (else over the `topics` file's topics, else every
    topic judged); write the tables; print the leaderboard."""
    if key is None and not method.scores_without_key:
        raise ConfigError(f"--method {method.name} needs --key (its answer key file)")
    if diversity is not None and not isinstance(method, DiversityQrels):
        raise ConfigError(f"--diversity-qrels: --method {method.name} writes no diversity qrels")
    files = judgment_files(list(paths))
    keys = method.read_keys(key, lenient) if key is not None else None
    universe = list(read_topics(topics)) if topics is not None and keys is None else None
    inputs = [p for p in (key, topics) if p is not None] + files
    hashing = hash_ahead(inputs) if output or per_topic or autojudge or diversity else None
    judged = read_judged(method, files, lenient, scoring=True)
    if only is not None:  # scored on the chosen topics only
        if keys is not None:
            note_unknown(only, set(keys), f"the answer key {key}")
            keys = {q: k for q, k in keys.items() if q in only}
        elif universe is not None:
            note_unknown(only, set(universe), f"the topics file {topics}")
            universe = [q for q in universe if q in only]
        else:
            judged = (j for j in judged if j.qid in only)
    table = score_judged(method, judged, keys, lenient, universe)
    if only is not None and keys is None and universe is None and not table.topics:
        raise ConfigError("--only-topics: none of the chosen topics is judged in "
                          f"{', '.join(map(str, paths))}")
    if table.judged_nothing:
        raise NothingJudgedError(
            f"score --method {method.name}: nothing was judged in {len(files)} judgment "
            f"files ({left_out_text(table)}); no leaderboard written: judge again with an "
            "assessor that answers")
    if hashing is not None:
        hashing.join()
    write_tables(table, output, per_topic)
    if autojudge is not None:
        write_leaderboard(autojudge, table_rows(table), autojudge_format)
    if diversity is not None and isinstance(method, DiversityQrels):
        method.diversity_qrels(keys or {}, files, diversity)
        write_sidecar(diversity, inputs)
    for path in (output, per_topic, autojudge):
        if path is not None:
            write_sidecar(path, inputs, table.left_out)
    click.echo(format_leaderboard(table))
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    if table.notes:
        shown = "; ".join(table.notes[:3])
        click.echo(f"note: {len(table.notes)} differences between the assessments and the key "
                   f"were resolved, e.g. {shown}", err=True)
    unjudged = sum(table.unjudged.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(table.kinds.items()))
    click.echo(
        f"score --method {method.name}: {len(table.means)} runs, {len(table.topics)} topics, "
        f"{sum(table.missing.values())} unanswered (scored 0), {table.outside} outside the "
        f"answer key, {unjudged} unjudged (left out{': ' + kinds if kinds else ''}), "
        f"{left_out_text(table) + ' (left out, no score), ' if table.left_out else ''}"
        f"{time.monotonic() - started:.1f} s",
        err=True,
    )
    return table


def left_out_text(table: ScoreTable) -> str:
    """`2 answers with nothing judged, 1 topics with nothing judged`, or ""."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(table.left_out.items()))

