"""The assessor and the executor a step runs with, built from its options (the CLI's, a track's,
the Python API's): one assessor or an ensemble with its prices, the executor of the mode
(live, dry, batched), and a step's coroutine run with the assessor closed afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer import names
from nuggetizer.assessors import make_assessor
from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.ensemble import Ensemble
from nuggetizer.cache import Cache, default_cache_path
from nuggetizer.errors import ConfigError, Interrupted
from nuggetizer.run.dryrun import DEFAULT_BATCH_DISCOUNT, Prices
from nuggetizer.run.execute import Executor, Mode, executor, outside
from nuggetizer.run.interrupt import drain_on_interrupt

T = TypeVar("T")
DEFAULT_ASSESSOR = names.DEFAULT_ASSESSOR


def prices_from(options: dict[str, Any], table: Any = None) -> Prices:
    """--price-in/--price-out and the batch prices, each else the track's [prices] table."""
    def given(option: str, key: str) -> Any:
        value = options.get(option)
        return value if value is not None else getattr(table, key, None)

    discount = given("batch_discount", "batch_discount")
    return Prices(input=given("price_in", "input"), output=given("price_out", "output"),
                  batch_input=given("batch_price_in", "batch_input"),
                  batch_output=given("batch_price_out", "batch_output"),
                  batch_discount=DEFAULT_BATCH_DISCOUNT if discount is None else discount)


def make_one_assessor(options: dict[str, Any], fallback: str | None = None,
                      prices: Any = None) -> Assessor:
    """The assessor the command's assessor options describe, carrying the prices that
    --price-in/--price-out (else the track's `prices` table) give: the cost of what it spends
    is then said in the summaries and kept with the usage."""
    cache = None if options["no_cache"] else Cache(options["cache_path"] or default_cache_path())
    assessor = make_assessor(
        options["assessor_spec"] or fallback or DEFAULT_ASSESSOR,
        base_url=list(options["base_url"]) or None,
        api_key=options["api_key"],
        temperature=options["temperature"],
        max_tokens=options["max_tokens"],
        concurrency=options["concurrency"],
        structured=options["structured"],
        model_path=options["model_path"],
        cache=cache,
        token_field=options.get("token_field"),
        reasoning_effort=options.get("reasoning_effort"),
        reasoning_tokens=options.get("reasoning_tokens"),
        max_tokens_cap=options.get("max_tokens_cap"),
    )
    assessor.prices = prices_from(options, prices)
    return assessor


def make_assessor_from(options: dict[str, Any], fallback: str | Sequence[str] | None = None,
                       prices: Any = None, samples: int | None = None,
                       aggregate: str | None = None) -> Any:
    """The assessor of the command: one Assessor for one --assessor (else the `fallback` spec
    or specs, else the default), or an Ensemble of one Assessor per spec, each built with the
    shared options, when several are given or --samples is above 1 (`samples` and `aggregate`:
    the track's, when the options give none)."""
    given = options.get("assessor_spec") or ()
    given = [given] if isinstance(given, str) else list(given)
    specs = given or ([fallback] if isinstance(fallback, str) else list(fallback or [])) \
        or [DEFAULT_ASSESSOR]
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise ConfigError(f"--assessor {repeated[0]} is given twice: its answers would be the "
                          "same calls; use --samples N for repeated answers of one assessor")
    samples = options.get("samples") or samples or 1
    aggregate = options.get("aggregate") or aggregate
    members = [make_one_assessor({**options, "assessor_spec": spec}, None, prices)
               for spec in specs]
    if len(members) == 1 and samples == 1:
        if aggregate is not None:
            click.echo("note: --aggregate combines the votes of several --assessor or of "
                       "--samples N: with one judge asked once it does nothing", err=True)
        return members[0]
    if samples > 1 and options.get("temperature") == 0:
        click.echo(f"note: --samples {samples} at --temperature 0: each sample is asked with a "
                   "seed of its own, but a deterministic server gives the same answer to each",
                   err=True)
    ensemble = Ensemble(members, samples=samples, aggregate=aggregate)
    ensemble.prices = members[0].prices
    return ensemble


def run_with(assessor: Assessor, work: Coroutine[Any, Any, T]) -> T:
    """Run a step's coroutine; the assessor (and its backend) is closed whatever happens.
    Ctrl-C lets the calls in flight finish first (run/interrupt.py), then ends as a
    KeyboardInterrupt (the error group says what is kept)."""
    kept: list[T] = []

    async def main() -> None:
        try:
            with drain_on_interrupt(assessor):
                kept.append(await work)
        finally:
            await assessor.aclose()

    try:
        outside(main())
    except (Interrupted, asyncio.CancelledError):
        raise KeyboardInterrupt from None
    return kept[0]


def executor_from(options: dict[str, Any], assessor: Any, folder: Path) -> Executor:
    """The executor the options select (run/execute.py `executor`): dry (--dry-run, priced at
    the batch prices with --batch-api), batched (--batch-api; its state under
    `folder`/.batches) or live."""
    batch, dry = bool(options.get("batch_api")), bool(options.get("dry_run"))
    if not batch and options.get("batch_write_only"):
        click.echo("note: --batch-write-only goes with --batch-api; ignored", err=True)
    if batch and dry and assessor.prices is not None:
        assessor.prices = assessor.prices.batched()
    if batch and not dry and not isinstance(assessor, Assessor):
        raise ConfigError("--batch-api sends one assessor's calls: it does not take several "
                          "--assessor or --samples above 1")
    mode: Mode = "dry" if dry else "batch" if batch else "live"
    return executor(mode, assessor, folder, options)
