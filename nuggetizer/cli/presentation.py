"""How every command's `--help` reads: its options in groups (the command's own first, then the
shared ones: topics, method, assessor, dry run and cost), each environment variable shown beside
the option it stands for (nuggetizer/environment.py), and the exit codes (errors.EXIT_CODES).

The shared option sets (cli/common.py) tag the options they add with their group
(`tag_group`); `present(command)` gives a command this help, and the root group applies it to
every command it is given.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

import click

from nuggetizer.cli.flags import FLAG_PARAM
from nuggetizer.environment import by_option
from nuggetizer.errors import EXIT_CODES

OWN = "Options"
GROUP_ATTR = "help_group"
METHOD = "Method"


def tag_group(params: Iterable[click.Parameter], title: str) -> None:
    """Put the options `params` under `title` in the help."""
    for param in params:
        setattr(param, GROUP_ATTR, title)


def group_of(param: click.Parameter) -> str:
    """The help section of an option: its tagged group; a method's generated flag goes with
    the method's options; else the command's own."""
    if (param.name or "").startswith(FLAG_PARAM):
        return METHOD
    return str(getattr(param, GROUP_ATTR, None) or OWN)


def with_env(param: click.Parameter, record: tuple[str, str]) -> tuple[str, str]:
    """The help record with the environment variable of the option beside it, if it has one
    (click's own `envvar` options say theirs: show_envvar)."""
    name, text = record
    variables = by_option()
    found = next((variables[o] for o in param.opts if o in variables), None)
    if found is None or found.name in text:
        return record
    return name, f"{text}  [env var: {found.name}]".strip()


def exit_code_rows() -> list[tuple[str, str]]:
    """The exit-code table as help rows."""
    return [(str(code), meaning) for code, meaning in EXIT_CODES.items()]


def format_options(self: click.Command, ctx: click.Context,
                   formatter: click.HelpFormatter) -> None:
    """The options by group, then the exit codes (bound to a command by `present`)."""
    groups: dict[str, list[tuple[str, str]]] = {OWN: []}
    for param in self.get_params(ctx):
        if isinstance(param, click.Option) and param.envvar:
            param.show_envvar = True
        record = param.get_help_record(ctx)
        if record is not None:
            groups.setdefault(group_of(param), []).append(with_env(param, record))
    for title, rows in groups.items():
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)
    if isinstance(self, click.Group):
        self.format_commands(ctx, formatter)
    with formatter.section("Exit codes"):
        formatter.write_dl(exit_code_rows())


def present(command: click.Command) -> click.Command:
    """Give `command` (and a group's sub-commands) the grouped help."""
    command.format_options = types.MethodType(format_options, command)  # type: ignore[method-assign]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            present(sub)
    return command


def option_groups(command: click.Command, ctx: click.Context) -> dict[str, list[Any]]:
    """{group title: its options}, in the help's order (for the guide's reference)."""
    groups: dict[str, list[Any]] = {OWN: []}
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            groups.setdefault(group_of(param), []).append(param)
    return {title: params for title, params in groups.items() if params}
