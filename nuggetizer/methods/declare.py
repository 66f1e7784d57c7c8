"""What a method declares once, as ir_measures declares its measures: its measures (name,
description, value of a topic with no judgment, diagnostic or ranked) and its settings (a
frozen dataclass whose fields carry a one-line help, their choices and, for the few the CLI
gives an option of its own, that option).

Everything else is generated from these: the `--set` help, the method's own CLI flags, the
score engine's rules for a missing topic (flow/scoring.py), the report's glossary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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


def setting(default: Any, help: str, *, choices: Sequence[str] | None = None,
            flag: str | None = None) -> Any:
    """A field of a method's settings dataclass, declared with its one-line help, its
    choices (for a text setting) and `flag`, the CLI option of its own it has besides
    `--set NAME=VALUE` (e.g. "--window"), if any."""
    return dataclasses.field(default=default, metadata={
        "help": help, "choices": tuple(choices) if choices else None, "flag": flag})


@dataclass(frozen=True)
class Setting:
    """A declared setting as the CLI and the docs see it."""

    name: str
    default: Any
    help: str
    choices: tuple[str, ...] | None
    flag: str | None

    @property
    def kind(self) -> str:
        """The type's name of the setting (from its default): bool, int, float or str."""
        return "str" if self.default is None else type(self.default).__name__

    def line(self) -> str:
        """`name=DEFAULT  help [choices]`, for the `--set` help."""
        choices = f" ({'|'.join(self.choices)})" if self.choices else ""
        return f"{self.name}={self.default!r}: {self.help}{choices}"


def settings_of(config_type: type) -> list[Setting]:
    """The declared settings of a settings dataclass, in field order (a field declared
    without `setting()` has no help: its name stands for it)."""
    found = []
    for f in dataclasses.fields(config_type):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        meta = f.metadata
        found.append(Setting(f.name, default, str(meta.get("help") or f.name.replace("_", " ")),
                             meta.get("choices"), meta.get("flag")))
    return found
