"""`--batch-api` on the LLM steps (nuggetizer/run/batching.py) and `batch-import`, which folds
a batch output file (vLLM's run_batch, or OpenAI's) into the LLM cache."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer.cli.common import FILE, apply_options
from nuggetizer.errors import InputError
from nuggetizer.places import default_cache_path

T = TypeVar("T")


def batch_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--batch-api`, `--batch-poll` and `--batch-write-only`."""
    return apply_options([
        click.option("--batch-api", is_flag=True,
                     help="send the step's uncached calls through the OpenAI Batch API (in "
                          "rounds for iterative steps; resumable: a killed command, run "
                          "again, polls the same batch); openai: assessor only"),
        click.option("--batch-poll", type=float, default=60.0, show_default=True,
                     help="--batch-api: longest wait between polls of a batch, in seconds"),
        click.option("--batch-write-only", is_flag=True,
                     help="--batch-api: write the next round's request file (for vLLM's "
                          "run_batch) and stop; `nuggetizer batch-import` folds the answers in"),
    ], command)


def echo_lines(lines: list[str]) -> None:
    """What the executor says after the step's summary (what the batches did)."""
    for line in lines:
        click.echo(line, err=True)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except ValueError as exc:
        raise InputError(path, None, f"not a JSONL batch file: {exc}") from None


@click.command("batch-import")
@click.argument("results", nargs=-1, required=True, type=FILE)
@click.option("--requests", "requests_path", required=True, type=FILE,
              help="the request file the results answer (written by --batch-api under "
                   "OUT/.batches/)")
@click.option("--cache", "cache_path", type=FILE, default=None,
              help="LLM call cache [default: the one the commands use]")
def batch_import_command(results: tuple[Path, ...], requests_path: Path,
                         cache_path: Path | None) -> None:
    """Fold batch output files (vLLM's `run_batch -o`, or the OpenAI Batch API's output file)
    into the LLM cache, each answer under the cache key its custom_id is; rerun the command
    that wrote the requests to use them."""
    from nuggetizer.assessors.batch_api import read_results
    from nuggetizer.run.batching import fold_results

    requests = {str(r["custom_id"]): dict(r["body"]) for r in _read_jsonl(requests_path)}
    found = {}
    for path in results:
        try:
            found.update(read_results(path.read_text(encoding="utf-8")))
        except ValueError as exc:
            raise InputError(path, None, f"not a JSONL batch file: {exc}") from None
        except KeyError as exc:
            raise InputError(path, None, f"not a JSONL batch file: a line without {exc}"
                             ) from None
    from nuggetizer.cache import Cache

    cache = Cache(cache_path or default_cache_path())
    failures = fold_results(cache, requests, found, "no line in the results")
    line = (f"batch-import: {len(requests) - len(failures)} of {len(requests)} answers folded "
            f"into {cache.path}")
    if failures:
        line += f"; {len(failures)} without an answer (e.g. {next(iter(failures.values()))})"
    unknown = len(set(found) - set(requests))
    if unknown:
        line += f"; {unknown} lines of the results are not in {requests_path} (ignored)"
    click.echo(line, err=True)
