"""The `nuggetizer` command: the core steps (cli/core.py) and the organizer's tools
(cli/organizer.py, cli/report.py) in one click group whose errors end in one line and an exit
code."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from nuggetizer.cli import (
    autojudge,
    batch,
    battles,
    compare,
    core,
    doctor,
    evaluate,
    human,
    methods,
    organizer,
    ragdoll,
    references,
    report,
    rubrics,
    serve,
    workbench,
)
from nuggetizer.cli.common import ErrorGroup
from nuggetizer.errors import NuggetizerError
from nuggetizer.faces import lazy_face
from nuggetizer.interface.registry import load


@click.group(cls=ErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trec-nuggetizer")
def cli() -> None:
    """TREC-style nugget evaluation of retrieval-augmented generation.

    \b
    A first run that needs no model (mock: answers that fit, and mean nothing):
      nuggetizer evaluate --track sample --assessor mock -o out/first
    Check what a run needs first: nuggetizer doctor --track sample
    Each command's options: nuggetizer COMMAND --help; the guide: docs/ in the source
    """


for command in (*core.COMMANDS, *evaluate.COMMANDS, *batch.COMMANDS, *organizer.COMMANDS,
                *compare.COMMANDS, *report.COMMANDS, *autojudge.COMMANDS, *methods.COMMANDS,
                *battles.COMMANDS, *doctor.COMMANDS, *human.COMMANDS, *serve.COMMANDS,
                *workbench.COMMANDS, *references.COMMANDS,
                *rubrics.COMMANDS, *ragdoll.COMMANDS):
    cli.add_command(command)


def main() -> None:
    """Console entry point (a method plugin that cannot be loaded is one line, exit 2)."""
    try:
        load()
    except NuggetizerError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    cli(prog_name="nuggetizer")


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.cli.flags import FlagsCommand, declared_flags
    from nuggetizer.cli.grading import track_grading
    from nuggetizer.cli.steps import make_targets


__getattr__ = lazy_face(__name__)


__all__ = ["FlagsCommand", "declared_flags", "make_targets", "track_grading"]
