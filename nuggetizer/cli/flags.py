"""CLI options generated from the methods' declarations (interface/declare.py): each method's
own flags (its settings declared with `flag=` and the commands that take them, e.g. nuggets'
`--window` on nuggetize) and the `--set` help, which lists every registered method's settings.

Both are asked of the methods' declarations (interface/index.py: kept between runs, so that a
command's help need not load the methods) when first needed, not at import, so that a plugin
method's settings and flags are there too (and a plugin that cannot be loaded is one error
line).
"""

from __future__ import annotations

from typing import Any

import click

from nuggetizer.errors import ConfigError
from nuggetizer.interface.declare import Setting
from nuggetizer.interface.index import declared

FLAG_PARAM = "setting__"  # prefix of a generated option's parameter name (never a clash)
_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str}


def declared_flags(command: str) -> list[Setting]:
    """The settings that registered methods declare with a flag on `command`, one per flag
    (two methods may share a flag for a setting of the same name); ConfigError when two
    give one flag to different settings."""
    found: dict[str, tuple[str, Setting]] = {}
    for name, settings in declared().items():
        for s in settings:
            if not s.flag or command not in s.commands:
                continue
            first, known = found.setdefault(s.flag, (name, s))
            if known.name != s.name:
                raise ConfigError(f"methods {first!r} and {name!r} both declare {s.flag} on "
                                  f"{command}, for different settings ({known.name}, {s.name})")
    return [s for _, s in found.values()]


def flag_of(setting: str) -> str:
    """The option that stands for `setting` on the command line: its declared flag, else
    `--NAME` (for the setting options a command has of its own, e.g. --min-grade)."""
    for settings in declared().values():
        for s in settings:
            if s.name == setting and s.flag:
                return s.flag
    return "--" + setting.replace("_", "-")


def flag_option(setting: Setting) -> click.Option:
    """The click option of a setting's flag: a switch for a bool (a `--no-...` one sets it
    False), else a value typed after its default (its choices for a text setting); not given,
    it is None, and the method's default holds."""
    decls = [str(setting.flag), FLAG_PARAM + setting.name]
    if setting.kind == "bool":
        return click.Option(decls, is_flag=True, help=setting.option_help())
    kind = click.Choice(setting.choices) if setting.choices else _TYPES.get(setting.kind, str)
    return click.Option(decls, type=kind, default=None, help=setting.option_help())


class FlagsCommand(click.Command):
    """A command that takes, besides its own options, the flags the registered methods
    declare for it (by its name), placed after `--set`. The callback receives them as one
    `flags` dict: {setting: value, None when its flag is not given}."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._flags: dict[str, Setting] | None = None

    def method_flags(self) -> dict[str, Setting]:
        """{parameter name: setting} of the generated options (added on the first call)."""
        if self._flags is None:
            taken = {opt for p in self.params for opt in p.opts}
            settings = declared_flags(str(self.name))
            for setting in settings:
                if setting.flag in taken:
                    raise ConfigError(f"a method declares {setting.flag} for its setting "
                                      f"{setting.name}, but {self.name} has that option already")
            options = [flag_option(setting) for setting in settings]
            at = next((k + 1 for k, p in enumerate(self.params) if p.name == "settings"),
                      len(self.params))
            self.params[at:at] = options
            self._flags = {str(o.name): s for o, s in zip(options, settings, strict=True)}
        return self._flags

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        self.method_flags()
        return super().get_params(ctx)

    def invoke(self, ctx: click.Context) -> Any:
        flags: dict[str, Any] = {}
        for param, setting in self.method_flags().items():
            value = ctx.params.pop(param, None)
            if setting.kind == "bool":
                value = (not setting.negated) if value else None
            flags[setting.name] = value
        ctx.params["flags"] = flags
        return super().invoke(ctx)


def settings_help() -> str:
    """The `--set` help: what it takes, and every registered method's settings by name."""
    listed = "; ".join(f"{name}: {', '.join(s.name for s in settings)}"
                       for name, settings in declared().items())
    return ("a setting of the method, NAME=VALUE; repeatable (`nuggetizer methods` gives each "
            f"one's default and help). The settings: {listed}")


class SettingsOption(click.Option):
    """`--set`, whose help lists the registered methods' settings when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = settings_help()
        return super().get_help_record(ctx)
