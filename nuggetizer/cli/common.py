"""What every command shares: the error handling group, the assessor and method options, and
running a step's coroutine with its assessor closed afterwards."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from nuggetizer.assessors import BACKENDS
from nuggetizer.assessors.aggregation import AGGREGATES
from nuggetizer.assessors.reasoning import REASONING_EFFORTS, TOKEN_FIELDS
from nuggetizer.cli.flags import SettingsOption
from nuggetizer.cli.presentation import METHOD, present, tag_group
from nuggetizer.cli.presentation import format_options as grouped_options
from nuggetizer.errors import (
    KEPT,
    AssessorError,
    NuggetizerError,
    first_error,
    first_of,
    write_fault,
)
from nuggetizer.interface.index import declared
from nuggetizer.interface.profile import PROFILES
from nuggetizer.names import DEFAULT_ASSESSOR, DEFAULT_METHOD
from nuggetizer.places import default_cache_path

if TYPE_CHECKING:
    from nuggetizer.assessors.base import Assessor

T = TypeVar("T")
FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)
ANY = click.Path(path_type=Path)
PROFILE = click.option(
    "--profile", type=click.Choice(list(PROFILES)), default=None,
    help="scoring profile: guideline (the TREC RAG 2026 guideline's reading) or ragdoll "
         "(castorini RAGDoll's numbers, the track's scorer); named in every output's "
         "provenance [default: the track's, else guideline]")
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
    ], command, "Topics")


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
    from nuggetizer.formats.jsonl import base_suffix
    from nuggetizer.formats.topics import read_topics

    chosen = {t.strip() for text in (only_topics or ()) for t in text.split(",") if t.strip()}
    if only_topics_file is not None:
        if base_suffix(only_topics_file) in (".jsonl", ".json"):
            chosen |= set(read_topics(only_topics_file))
        else:
            chosen |= {entry.split()[0] for entry in listed_lines(only_topics_file)}
    if not chosen:
        raise click.BadParameter("no topic id given", param_hint="--only-topics")
    return chosen


class ErrorGroup(click.Group):
    """Turns the toolkit's own errors into one line on stderr and an exit code
    (errors.EXIT_CODES); every command added is given the grouped help
    (cli/presentation.py)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(present(cmd), name)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        grouped_options(self, ctx, formatter)

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


def apply_options(options: list[Callable[[Any], Any]], command: Callable[..., T],
                  group: str | None = None) -> Callable[..., T]:
    """`command` with the click `options`, in the order given; shown under `group` in the
    help when given (cli/presentation.py)."""
    before = {id(p) for p in getattr(command, "__click_params__", ())}
    made = functools.reduce(lambda f, option: option(f), reversed(options), command)
    if group is not None:
        tag_group([p for p in getattr(made, "__click_params__", ()) if id(p) not in before],
                  group)
    return made


def assessor_forms() -> str:
    """The assessor specs the registered backends take, for the help: `local | openai:MODEL
    | vllm:MODEL | mock[:NAME]`."""
    return " | ".join(form.replace("<model>", "MODEL").replace("<name>", "NAME")
                      for _, form in BACKENDS.values())


def assessor_options(command: Callable[..., T]) -> Callable[..., T]:
    """The options every LLM-driven command takes to choose and tune its assessor."""
    return apply_options([
        click.option("--assessor", "assessor_spec", multiple=True, envvar="NUGGETIZER_ASSESSOR",
                     help=f"{assessor_forms()}  [default: {DEFAULT_ASSESSOR}]; mock: no model, "
                          "answers that fit each request, to see the pipeline run; repeat for "
                          "an ensemble (every label voted on; guide: Ensembles)"),
        click.option("--samples", type=click.IntRange(min=1), default=None,
                     help="answers asked of each assessor per call, voted on [default: 1]"),
        click.option("--aggregate", type=click.Choice(AGGREGATES), default=None,
                     help="how an ensemble's votes combine [default: majority for labels, "
                          "median for grades]"),
        click.option("--base-url", multiple=True,
                     help="OpenAI-compatible server URL; repeat for replicas of one model, "
                          "shared by load"),
        click.option("--api-key", default=None, help="API key"),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option("--max-tokens", type=int, default=None, help="cap on tokens per answer"),
        click.option("--concurrency", type=int, default=None,
                     help="LLM calls at once (default: what the backend takes)"),
        click.option("--structured", type=click.Choice(["json_schema", "json_object", "none"]),
                     default=None, help="structured-output mode of an openai: server"),
        click.option("--reasoning-effort", type=click.Choice(REASONING_EFFORTS), default=None,
                     help="sent as reasoning_effort to an openai: reasoning model"),
        click.option("--token-field", type=click.Choice(TOKEN_FIELDS), default=None,
                     help="the request field of the token budget (reasoning models take "
                          "max_completion_tokens; learned from the server's 400 when not "
                          "given) [default: max_tokens]"),
        click.option("--reasoning-tokens", type=click.IntRange(min=0), default=None,
                     help="reasoning tokens a model known to reason is expected to spend per "
                          "call: twice that is added to every token budget, and the dry run "
                          "assumes it [default by --reasoning-effort: minimal 64, low 512, "
                          "medium 2048, high 8192]"),
        click.option("--max-tokens-cap", type=click.IntRange(min=1), default=None,
                     help="largest token budget an answer left empty by reasoning is raised "
                          "to (doubling) [default: 32768]"),
        click.option("--model-path", type=FILE, default=None,
                     help="GGUF file for --assessor local"),
        click.option("--cache", "cache_path", type=FILE, default=None,
                     help=f"LLM call cache [default: {default_cache_path()}]"),
        click.option("--no-cache", is_flag=True, help="do not read or write the LLM call cache"),
    ], command, "Assessor (the LLM)")


def dry_run_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--dry-run` and what it reports with (nuggetizer/run/dryrun.py)."""
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
        click.option("--batch-price-in", type=float, default=None,
                     help="--batch-api: price per million prompt tokens of a batch answer "
                          "[track: [prices] batch_input; default: --price-in less "
                          "--batch-discount]"),
        click.option("--batch-price-out", type=float, default=None,
                     help="--batch-api: price per million completion tokens of a batch "
                          "answer [track: [prices] batch_output; default: --price-out less "
                          "--batch-discount]"),
        click.option("--batch-discount", type=click.FloatRange(0, 1), default=None,
                     help="--batch-api: the share of the live price a batch answer does not "
                          "cost [track: [prices] batch_discount; default: 0.5, OpenAI's]"),
        click.option("--completion-ratio", type=float, default=None,
                     help="dry run: expected completion tokens per prompt token, capped at "
                          "each call's max_tokens [default: 0.05]"),
    ], command, "Dry run and cost")


class MethodChoice(click.Choice):
    """The registered methods, asked of their declarations (interface/index.py) when first
    needed, not at import."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> list[str]:
        return list(declared())

    @choices.setter
    def choices(self, value: object) -> None:
        """Fixed by the registry."""


def method_options(command: Callable[..., T]) -> Callable[..., T]:
    """`--method` (any registered method) and `--set NAME=VALUE` (its settings, listed in the
    help from their declarations)."""
    return apply_options([
        click.option("--method", type=MethodChoice(), default=DEFAULT_METHOD,
                     show_default=True, help="answer-key method"),
        click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
                     cls=SettingsOption),
    ], command, METHOD)


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


def embedded_note(assessor: Assessor) -> None:
    """After a leaderboard made by the embedded model: what it proves, and what it does not."""
    if assessor.spec == "local":
        click.echo("note: the embedded model (SmolLM2-135M) only proves the pipeline runs; "
                   "real judgments need a capable model (guide: Choosing the LLM)")
