"""The topics a command was told to keep (--only-topics): a note for the chosen ones an input
does not hold, an error when it holds none of them. Shared by planning and scoring."""

from __future__ import annotations

import click

from nuggetizer.errors import ConfigError


def note_unknown(only: set[str] | None, present: set[str], where: str) -> None:
    """Say which chosen topics are not there; an error when none of them is."""
    if only is None:
        return
    unknown = sorted(only - present)
    if unknown and len(unknown) == len(only):
        raise ConfigError(f"--only-topics: none of the chosen topics is in {where} "
                          f"(e.g. {unknown[0]!r})")
    if unknown:
        click.echo(f"note: {len(unknown)} of the {len(only)} chosen topics are not in {where}: "
                   f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}", err=True)
