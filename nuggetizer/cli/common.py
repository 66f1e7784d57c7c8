"""What every command shares: the error handling group, the assessor and method options, and
running a step's coroutine with its assessor closed afterwards."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer.assessors import make_assessor
from nuggetizer.assessors.base import Assessor
from nuggetizer.cache import Cache, default_cache_path
from nuggetizer.errors import (
    KEPT,
    AssessorError,
    NuggetizerError,
    first_error,
    first_of,
    write_fault,
)
from nuggetizer.flow.dryrun import Prices
from nuggetizer.methods.registry import method_names

T = TypeVar("T")
DEFAULT_ASSESSOR = "local"
FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)
ANY = click.Path(path_type=Path)
LENIENT = click.option("--lenient", is_flag=True,
                       help="off-menu labels and key mismatches in input files become counted "
                            "unjudged items instead of errors")

TRACK_RULES = click.option(
    "--track-rules", type=click.Choice(["auto", "none", "ragtime", "neuclir", "dragun",
                                        "autojudge"]), default="auto", show_default=True,
    help="report runs: check the track's rules (citations per sentence, length, doc ids, "
         "references; RAGTIME reports are cut to the limit before scoring); auto: the track a "
         "run shows (DRAGUN's use_starter_kit, RAGTIME's metadata.task)")
LENGTH_LIMIT = click.option(
    "--length-limit", type=click.IntRange(min=1), default=None,
    help="report runs: the length limit, in the track's unit (RAGTIME, NeuCLIR: characters; "
         "DRAGUN: words, default 250), for topics whose request (--topics JSONL `limit` / "
         "`word_limit`) gives none")


def topic_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--only-topics ID,ID` and `--only-topics-file F`: run the step on those topics only
    (named `only-` so as not to clash with the topics FILE that `nuggetize --topics` reads)."""
    return apply_options([
        click.option("--only-topics", default=None, metavar="ID,ID",
                     help="only these topics (comma-separated ids); repeatable",
                     multiple=True),
        click.option("--only-topics-file", type=FILE, default=None,
                     help="only the topics of this file: one id per line (first field; "
                          "# comments), or a topics .jsonl"),
    ], command)


def listed_lines(path: Path) -> list[str]:
    """The entries of a list file: each line without its `#` comment, stripped; blank ones
    skipped."""
    return [entry for line in path.read_text(encoding="utf-8").splitlines()
            if (entry := line.split("#", 1)[0].strip())]


def chosen_topics(only_topics: tuple[str, ...] | None, only_topics_file: Path | None
                  ) -> set[str] | None:
    """The topic ids `--only-topics` / `--only-topics-file` name (their union), None when
    neither is given (every topic)."""
    if not only_topics and only_topics_file is None:
        return None
    chosen = {t.strip() for text in (only_topics or ()) for t in text.split(",") if t.strip()}
    if only_topics_file is not None:
        from nuggetizer.formats.jsonl import base_suffix
        from nuggetizer.formats.topics import read_topics

        if base_suffix(only_topics_file) in (".jsonl", ".json"):
            chosen |= set(read_topics(only_topics_file))
        else:
            chosen |= {entry.split()[0] for entry in listed_lines(only_topics_file)}
    if not chosen:
        raise click.BadParameter("no topic id given", param_hint="--only-topics")
    return chosen


class ErrorGroup(click.Group):
    """Turns the toolkit's own errors into one line on stderr and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (NuggetizerError, BaseExceptionGroup, OSError) as raised:
            exc = first_error(raised) or write_fault(raised)
            if exc is None and (failed := first_of(raised, OSError)) is not None:
                click.echo(f"error: {failed.filename or ''}: {failed.strerror or failed}",
                           err=True)
                ctx.exit(2)
            if exc is None:
                raise
            if exc.exit_code == 0:  # a stop that is no failure (--batch-write-only)
                click.echo(str(exc), err=True)
                ctx.exit(0)
            kept = f"; {KEPT}" if isinstance(exc, AssessorError) else ""
            click.echo(f"error: {exc}{kept}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted: finished work is kept; rerun the command to resume", err=True)
            ctx.exit(130)


def apply_options(options: list[Callable[[Any], Any]], command: Callable[..., T]
                  ) -> Callable[..., T]:
    """`command` with the click `options`, in the order given."""
    return functools.reduce(lambda f, option: option(f), reversed(options), command)


def assessor_options(command: Callable[..., T]) -> Callable[..., T]:
    """The options every LLM-driven command takes to choose and tune its assessor."""
    return apply_options([
        click.option("--assessor", "assessor_spec", default=None, envvar="NUGGETIZER_ASSESSOR",
                     help=f"local | openai:MODEL | vllm:MODEL  [default: {DEFAULT_ASSESSOR}]"),
        click.option("--base-url", multiple=True,
                     help="OpenAI-compatible server URL; repeat for replicas of one model, "
                          "shared by load [env OPENAI_BASE_URL]"),
        click.option("--api-key", default=None, help="API key [env OPENAI_API_KEY]"),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option("--max-tokens", type=int, default=None, help="cap on tokens per answer"),
        click.option("--concurrency", type=int, default=None,
                     help="LLM calls at once (default: what the backend takes)"),
        click.option("--structured", type=click.Choice(["json_schema", "json_object", "none"]),
                     default=None, help="structured-output mode of an openai: server"),
        click.option("--model-path", type=FILE, default=None,
                     help="GGUF file for --assessor local"),
        click.option("--cache", "cache_path", type=FILE, default=None,
                     help=f"LLM call cache [default: {default_cache_path()}]"),
        click.option("--no-cache", is_flag=True, help="do not read or write the LLM call cache"),
    ], command)


def dry_run_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--dry-run` and what it reports with (nuggetizer/flow/dryrun.py)."""
    return apply_options([
        click.option("--dry-run", is_flag=True,
                     help="render and count every prompt the step would send; call nothing, "
                          "write nothing (calls the cache holds are counted apart)"),
        click.option("--tokenizer", default="auto", show_default=True,
                     help="dry run: chars (an estimate: characters / 4) | tiktoken[:ENC] | "
                          "gguf[:PATH] | auto (tiktoken if installed, else chars)"),
        click.option("--price-in", type=float, default=None,
                     help="price per million prompt tokens, for the dry run's estimate and "
                          "the cost of what a real run spends [track: [prices] input]"),
        click.option("--price-out", type=float, default=None,
                     help="price per million completion tokens (as --price-in) [track: "
                          "[prices] output]"),
        click.option("--completion-ratio", type=float, default=None,
                     help="dry run: expected completion tokens per prompt token, capped at "
                          "each call's max_tokens [default: 0.05]"),
    ], command)


class MethodChoice(click.Choice):
    """The registered methods, asked of the registry when first needed (not at import)."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> list[str]:
        return method_names()

    @choices.setter
    def choices(self, value: object) -> None:
        """Fixed by the registry."""


def method_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--method` (any registered method) and `--set NAME=VALUE` (its settings)."""
    return apply_options([
        click.option("--method", type=MethodChoice(), default="nuggets",
                     show_default=True, help="answer-key method"),
        click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
                     help="a setting of the method (e.g. keep=20, n_questions=15, k=5, "
                          "gamma=0.333); repeatable"),
    ], command)


def parse_pairs(pairs: tuple[str, ...], flags: dict[str, Any] | None = None) -> dict[str, Any]:
    """`--set NAME=VALUE` pairs (values typed later, by the method) and the method's own
    flags given on the command line (`flags`, None when not given)."""
    settings: dict[str, Any] = {k: v for k, v in (flags or {}).items() if v is not None}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r}: expected NAME=VALUE", param_hint="--set")
        settings[name.strip()] = value
    return settings


def prices_from(options: dict[str, Any], table: Any = None) -> Prices:
    """--price-in/--price-out, else the track's [prices] table."""
    return Prices(
        input=options.get("price_in") if options.get("price_in") is not None
        else getattr(table, "input", None),
        output=options.get("price_out") if options.get("price_out") is not None
        else getattr(table, "output", None))


def make_assessor_from(options: dict[str, Any], fallback: str | None = None,
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
    )
    assessor.prices = prices_from(options, prices)
    return assessor


def run_with(assessor: Assessor, work: Coroutine[Any, Any, T]) -> T:
    """Run a step's coroutine; the assessor (and its backend) is closed whatever happens."""
    async def main() -> T:
        try:
            return await work
        finally:
            await assessor.aclose()

    return asyncio.run(main())


def embedded_note(assessor: Assessor) -> None:
    """After a leaderboard made by the embedded model: what it proves, and what it does not."""
    if assessor.spec == "local":
        click.echo("note: the embedded model (SmolLM2-135M) only proves the pipeline runs; "
                   "real judgments need a capable model (README: Choosing the LLM)")
