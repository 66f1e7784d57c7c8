"""What a method declares once, as ir_measures declares its measures: its measures (their
`Measure` is in measures/base.py, where the pure measure modules import it) and its settings (a
frozen dataclass whose fields carry a one-line help, their choices and, for the few the CLI
gives an option of its own, that option and the commands that take it).

Everything else is generated from these: the `--set` help and `nuggetizer methods`, the
method's own CLI flags (cli/flags.py), the score engine's rule for a missing topic
(scoring/engine.py), the check of a text setting's choices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nuggetizer.errors import ConfigError


def setting(default: Any, help: str, *, choices: Sequence[str] | None = None,
            flag: str | None = None, commands: Sequence[str] = (),
            flag_help: str | None = None, minimum: float | None = None) -> Any:
    """A field of a method's settings dataclass, declared with its one-line help, its
    choices (for a text setting), its `minimum` (for a number) and `flag`, the CLI option of
    its own it has besides `--set NAME=VALUE` (e.g. "--window"), if any, on the `commands`
    named (e.g. ("nuggetize",)). A bool setting whose flag is `--no-...` is set False by it;
    `flag_help` replaces the help under the flag."""
    return dataclasses.field(default=default, metadata={
        "help": help, "choices": tuple(choices) if choices else None, "flag": flag,
        "commands": tuple(commands), "flag_help": flag_help, "minimum": minimum})


@dataclass(frozen=True)
class Setting:
    """A declared setting as the CLI and the docs see it."""

    name: str
    default: Any
    help: str
    choices: tuple[str, ...] | None
    flag: str | None
    commands: tuple[str, ...] = ()
    flag_help: str | None = None
    minimum: float | None = None

    @property
    def kind(self) -> str:
        """The type's name of the setting (from its default): bool, int, float or str."""
        return "str" if self.default is None else type(self.default).__name__

    @property
    def negated(self) -> bool:
        """A bool setting whose flag (`--no-...`) sets it False."""
        return self.kind == "bool" and bool(self.flag) and str(self.flag).startswith("--no-")

    def line(self) -> str:
        """`name=DEFAULT: help (choices)`, for the `--set` help."""
        choices = f" ({'|'.join(self.choices)})" if self.choices else ""
        return f"{self.name}={self.default!r}: {self.help}{choices}"

    def option_help(self) -> str:
        """The help of its own CLI option: `flag_help`, else the help with the default."""
        if self.flag_help:
            return self.flag_help
        return f"{self.help} [default: {self.default}]"


def settings_of(config_type: type) -> list[Setting]:
    """The declared settings of a settings dataclass, in field order (a field declared
    without `setting()` has no help: its name stands for it)."""
    found = []
    for f in dataclasses.fields(config_type):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        meta = f.metadata
        found.append(Setting(f.name, default, str(meta.get("help") or f.name.replace("_", " ")),
                             meta.get("choices"), meta.get("flag"),
                             tuple(meta.get("commands") or ()), meta.get("flag_help"),
                             meta.get("minimum")))
    return found


def check_choices(config: Any) -> None:
    """ConfigError naming the first setting of `config` (a settings dataclass) whose value is
    not one of its declared choices (a text setting) or under its declared minimum (a
    number); a config's `__post_init__` calls it."""
    for s in settings_of(type(config)):
        value = getattr(config, s.name)
        if s.minimum is not None and isinstance(value, int | float) and value < s.minimum:
            raise ConfigError(f"setting {s.name} must be at least {s.minimum:g}, got {value!r}")
        if s.choices and value not in s.choices:
            allowed = " or ".join(s.choices) if len(s.choices) == 2 else \
                "one of " + ", ".join(s.choices)
            raise ConfigError(f"setting {s.name} must be {allowed}, got {value!r}")
