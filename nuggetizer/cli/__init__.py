"""The `nuggetizer` command: the core steps (cli/core.py) and the organizer's tools
(cli/organizer.py, cli/report.py, ...) in one click group whose errors end in one line and an
exit code.

Each command is one entry of COMMANDS, `name: "module:attribute"`, and its module is imported
only when the command runs or its help is shown (`nuggetizer --help` shows every one's first
line, so it imports every command module: they import at their top only what their options
need, and the rest in the command's body). A new command is a new entry; nothing else here."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING

import click

from nuggetizer import __version__
from nuggetizer.cli.common import ErrorGroup
from nuggetizer.cli.presentation import present
from nuggetizer.errors import NuggetizerError
from nuggetizer.faces import lazy_face

COMMANDS: dict[str, str] = {
    "nuggetize": "nuggetizer.cli.core:nuggetize_command",
    "assign": "nuggetizer.cli.core:assign_command",
    "score": "nuggetizer.cli.core:score_command",
    "relevance": "nuggetizer.cli.core:relevance_command",
    "evaluate": "nuggetizer.cli.evaluate:evaluate_command",
    "batch-import": "nuggetizer.cli.batch:batch_import_command",
    "validate": "nuggetizer.cli.organizer:validate_command",
    "export-nuggets": "nuggetizer.cli.organizer:export_nuggets_command",
    "import-nuggets": "nuggetizer.cli.organizer:import_nuggets_command",
    "export-sheets": "nuggetizer.cli.organizer:export_sheets_command",
    "import-sheets": "nuggetizer.cli.organizer:import_sheets_command",
    "qrels-agreement": "nuggetizer.cli.organizer:qrels_agreement_command",
    "irds-export": "nuggetizer.cli.organizer:irds_export_command",
    "agreement": "nuggetizer.cli.compare:agreement_command",
    "significance": "nuggetizer.cli.compare:significance_command",
    "report": "nuggetizer.cli.report:report_command",
    "nugget-bank": "nuggetizer.cli.autojudge:nugget_bank_command",
    "methods": "nuggetizer.cli.methods:methods_command",
    "battles": "nuggetizer.cli.battles:battles_command",
    "export-battle-sheets": "nuggetizer.cli.battles:export_battle_sheets_command",
    "import-battle-sheets": "nuggetizer.cli.battles:import_battle_sheets_command",
    "export-arena-battles": "nuggetizer.cli.battles:export_arena_battles_command",
    "import-arena-battles": "nuggetizer.cli.battles:import_arena_battles_command",
    "doctor": "nuggetizer.cli.doctor:doctor_command",
    "human-agreement": "nuggetizer.cli.human:human_agreement_command",
    "serve": "nuggetizer.cli.serve:serve_command",
    "workbench": "nuggetizer.cli.workbench:workbench_command",
    "export-ragdoll": "nuggetizer.cli.ragdoll:export_ragdoll_command",
    "resolve-references": "nuggetizer.cli.references:resolve_references_command",
    "author-rubrics": "nuggetizer.cli.rubrics:author_rubrics_command",
    "rubric-diagnostics": "nuggetizer.cli.rubrics:rubric_diagnostics_command",
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name: those named in `paths` ("module:attribute") imported when
    first looked up (and given the grouped help), those added as objects kept as they are."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self.paths = dict(paths)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            if name not in self.paths:
                raise KeyError(name)
            module, _, attribute = self.paths[name].partition(":")
            self.loaded[name] = present(getattr(importlib.import_module(module), attribute))
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self.paths and name not in self.loaded:
            raise KeyError(name)
        self.paths.pop(name, None)
        self.loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self.paths
        yield from (name for name in self.loaded if name not in self.paths)

    def __len__(self) -> int:
        return len(self.paths.keys() | self.loaded.keys())


@click.group(cls=ErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nuggetizer")
def cli() -> None:
    """TREC-style nugget evaluation of retrieval-augmented generation.

    \b
    A first run that needs no model (mock: answers that fit, and mean nothing):
      nuggetizer evaluate --track sample --assessor mock -o out/first
    Check what a run needs first: nuggetizer doctor --track sample
    Each command's options: nuggetizer COMMAND --help; the guide: docs/ in the source
    """


cli.commands = LazyCommands(COMMANDS)


def main() -> None:
    """Console entry point (a method plugin that cannot be loaded is one line, exit 2)."""
    try:
        cli(prog_name="nuggetizer")
    except NuggetizerError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.cli.flags import FlagsCommand, declared_flags
    from nuggetizer.plan.sources import make_targets, track_grading


__getattr__ = lazy_face(__name__)


__all__ = ["COMMANDS", "FlagsCommand", "cli", "declared_flags", "make_targets", "main",
           "track_grading"]
