"""`export-ragdoll`: judgments, an answer key or runs written in the shapes castorini's RAGDoll
(the TREC RAG 2026 scorer) reads (formats/ragdoll.py). The other way needs no command: `score`,
`report` and `agreement` read RAGDoll's judgment files as they read their own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.cli.common import ANY, FILE, LENIENT, method_options
from nuggetizer.errors import ConfigError

if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod

Writer = Callable[[Any], dict[str, Any]]


def judgment_writer(method: AnswerKeyMethod) -> Writer:
    """How a judgment of `method` becomes a line of RAGDoll's file of that kind."""
    from nuggetizer.formats import ragdoll

    writers: dict[str, Writer] = {
        "nuggets": ragdoll.nugget_row, "rubrics": ragdoll.rubric_row,
        "battles": ragdoll.arena_row,
        "support": lambda record: ragdoll.support_row(record, method.first_citation_only)}
    if method.name not in writers:
        raise ConfigError(f"RAGDoll has no file of --method {method.name}'s judgments (it "
                          f"reads {', '.join(writers)})")
    return writers[method.name]


def key_rows(method: AnswerKeyMethod, key: Path, lenient: bool) -> list[dict[str, Any]]:
    """An answer key as RAGDoll's nuggets or rubric file."""
    from nuggetizer.formats import ragdoll
    from nuggetizer.formats.nuggets import read_nuggets

    if method.name == "nuggets":
        return [ragdoll.nugget_key_row(nl) for nl in read_nuggets(key, lenient=lenient).values()]
    if method.name == "rubrics":
        return [ragdoll.rubric_key_row(k) for k in method.read_keys(key, lenient).values()]
    raise ConfigError(f"--key: RAGDoll reads no answer key of --method {method.name} (it reads "
                      "nuggets and rubrics)")


@click.command("export-ragdoll")
@click.argument("judged", nargs=-1, type=ANY)
@method_options
@click.option("--key", "--nuggets", "key", type=ANY, default=None,
              help="instead of judgments: the answer key of --method (nuggets, rubrics) as "
                   "RAGDoll's nuggets or rubric file")
@click.option("--run", "run_paths", multiple=True, type=ANY,
              help="instead of judgments: answer runs (repeatable) as RAGDoll's answers files, "
                   "the topic at the top level (-o: a folder, one RUN_ID.jsonl each)")
@click.option("-o", "--output", required=True, type=FILE,
              help="the JSONL to write (a folder with --run)")
@LENIENT
def export_ragdoll_command(judged: tuple[Path, ...], method: str, settings: tuple[str, ...],
                           key: Path | None, run_paths: tuple[Path, ...], output: Path,
                           lenient: bool) -> None:
    """Write judgments of --method (files or folders), its answer key (--key) or answer runs
    (--run) in castorini RAGDoll's shapes: nuggets as its assignments, support as its
    support assignments (--set citations=first: the citations after each sentence's first
    "-1", not judged), rubrics as its graded rubrics, battles as its arena judgments."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats import ragdoll
    from nuggetizer.formats.answers import read_runs
    from nuggetizer.formats.writing import run_file_name, write_jsonl_atomic
    from nuggetizer.run.provenance import write_sidecar
    from nuggetizer.scoring.engine import judgment_files, read_judged

    given = [name for name, value in (("judgments", judged), ("--key", key),
                                      ("--run", run_paths)) if value]
    if len(given) != 1:
        raise click.UsageError("give judgments, --key or --run (one of them)")
    chosen = configured(method, settings)
    if run_paths:
        runs = read_runs(run_paths)
        for run_id, answers in runs.items():
            path = output / run_file_name(run_id)
            write_jsonl_atomic(path, [ragdoll.answer_row(a) for a in answers.values()])
            write_sidecar(path, list(run_paths), declared={"format": "ragdoll answers"})
        click.echo(f"export-ragdoll: {sum(map(len, runs.values()))} answers of {len(runs)} "
                   f"runs to {output}", err=True)
        return
    if key is not None:
        rows = key_rows(chosen, key, lenient)
        inputs = [key]
    else:
        write = judgment_writer(chosen)
        inputs = judgment_files(list(judged))
        rows = [write(j.record) for j in read_judged(chosen, inputs, lenient)]
    write_jsonl_atomic(output, rows)
    write_sidecar(output, inputs, declared={"format": f"ragdoll {chosen.name}"})
    click.echo(f"export-ragdoll: {len(rows)} lines of RAGDoll's {chosen.name} "
               f"{'key' if key is not None else 'judgments'} to {output}", err=True)
