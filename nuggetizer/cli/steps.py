"""What the core commands share: the method with its flags, and the showing of a scoring
(the inputs, plans and scoring themselves live in plan/, run/ and score/)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.common import parse_pairs
from nuggetizer.cli.flags import flag_of
from nuggetizer.errors import ConfigError
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.profile import DEFAULT_PROFILE
from nuggetizer.interface.registry import make_method, method_class
from nuggetizer.plan.score import score_plan
from nuggetizer.plan.sources import make_targets as make_targets  # where tests read it
from nuggetizer.run.execute import run_local
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.files import ScoreFiles, ScoreScope, left_out_text
from nuggetizer.scoring.tables import format_leaderboard


def setting_names(name: str) -> set[str]:
    """The settings of the method called `name`."""
    return {f.name for f in dataclasses.fields(method_class(name).config_type)}


def configured(name: str, pairs: tuple[str, ...], profile: str | None = None,
               **flags: Any) -> AnswerKeyMethod:
    """The method `name` with its `--set` pairs and the setting flags that were given,
    scoring under the `--profile` given (None: the default)."""
    given = {k: v for k, v in flags.items() if v is not None}
    known = setting_names(name)
    for setting in given:
        if setting not in known:
            raise ConfigError(f"{flag_of(setting)} is not an option of --method {name}")
    return make_method(name, parse_pairs(pairs, given), profile)


def score_and_report(method: AnswerKeyMethod, paths: Sequence[Path], scope: ScoreScope,
                     files: ScoreFiles, started: float) -> ScoreTable:
    """Score judgment files (the plan of `score`: the tables written); print the leaderboard
    and what was left out."""
    table: ScoreTable = run_local(score_plan(method, paths, scope, files, Shown(started)))[0]
    return table


class Shown:
    """What `score` shows: the leaderboard and what scoring left out, when it ends."""

    def __init__(self, started: float) -> None:
        self.started = started

    def scoring(self, method: AnswerKeyMethod) -> None:
        """Nothing to say before a scoring."""

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None:
        show_scores(method, table, self.started)


def show_scores(method: AnswerKeyMethod, table: ScoreTable, started: float) -> None:
    """Print a method's leaderboard and what scoring left out or resolved."""
    click.echo(format_leaderboard(table))
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    if table.notes:
        shown = "; ".join(table.notes[:3])
        click.echo(f"note: {len(table.notes)} differences between the assessments and the key "
                   f"were resolved, e.g. {shown}", err=True)
    # every unjudged item, by kind: the per-run counts add up to the same, except a run_level
    # method's (battles), whose unjudged verdicts of a battle without a result are no run's
    unjudged = max(sum(table.unjudged.values()), table.kinds.total())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(table.kinds.items()))
    cells = f"{sum(table.not_drawn.values())} (run, topic) cells not drawn (no battle, no " \
        "score)" if method.judging.scoring == "runs" else \
        f"{sum(table.missing.values())} unanswered " + (
            "(scored 0)" if method.profile.unanswered_zero else "(left out)")
    profile = "" if method.profile.name == DEFAULT_PROFILE else \
        f" (profile {method.profile.name})"
    treated = "scored 0 where the profile reads a failure so, else left out" \
        if method.profile.failures_zero else "left out"
    click.echo(
        f"score --method {method.name}{profile}: {len(table.means)} runs, "
        f"{len(table.topics)} topics, "
        f"{cells}, {table.outside} outside the "
        f"answer key, {unjudged} unjudged ({treated}{': ' + kinds if kinds else ''}), "
        f"{left_out_text(table) + ' (left out, no score), ' if table.left_out else ''}"
        f"{time.monotonic() - started:.1f} s",
        err=True,
    )
