"""`nuggetize --agentic`: nuggets made by the model with tools to search the corpus
(methods/nuggets/agentic.py), over a local BM25 index of --corpus or castorini's search API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.errors import ConfigError
from nuggetizer.names import AGENTIC_TOKENS, AGENTIC_TURNS, SEARCH_SPECS

if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod


def agentic_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of the agentic mode."""
    for option in reversed((
        click.option("--agentic", is_flag=True,
                     help="no qrels: the model searches the corpus and reads its documents "
                          "with tools, then answers the nuggets (RAGDoll's agentic creation); "
                          "importance labelled after"),
        click.option("--search", "search_spec", default="bm25", show_default=True,
                     help=f"--agentic: where it searches: {SEARCH_SPECS}"),
        click.option("--index", "search_index", default=None,
                     help="--agentic: bm25: the index folder [default: in the cache folder, "
                          "built on first use]; the search API: the index to search"),
        click.option("--max-turns", type=click.IntRange(min=1), default=AGENTIC_TURNS,
                     show_default=True, help="--agentic: model calls per topic at most (the "
                     "last asks for the answer without tools)"),
        click.option("--max-agent-tokens", type=click.IntRange(min=1), default=AGENTIC_TOKENS,
                     show_default=True, help="--agentic: prompt and completion tokens per "
                     "topic; once spent, the next call is the last"),
    )):
        command = option(command)
    return command


def check_agentic(method: AnswerKeyMethod, given: dict[str, Any]) -> None:
    """ConfigError for an option the agentic mode does not take."""
    if method.name != "nuggets":
        raise ConfigError(f"--agentic builds nuggets: --method {method.name} does not apply")
    clashing = [name for name, value in given.items() if value]
    if clashing:
        raise ConfigError(f"--agentic searches the corpus itself: {clashing[0]} does not apply")


def agentic_nuggetize(method: AnswerKeyMethod, topics: Path, output: Path,
                      only: set[str] | None, corpus: Path | None, search: dict[str, Any],
                      options: dict[str, Any]) -> Any:
    """Build every topic's nuggets agentically into `output`; the summary."""
    from nuggetizer.formats.topics import read_topics
    from nuggetizer.interface.base import KeyInput
    from nuggetizer.methods.nuggets.agentic import AgenticNuggets, Bounds
    from nuggetizer.plan.steps import nuggetize_plan
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with
    from nuggetizer.search.open import open_searcher

    assessor = make_assessor_from(options)
    searcher = open_searcher(search["spec"], corpus=corpus, index=search["index"],
                             cache=getattr(assessor, "cache", None))
    how = getattr(searcher, "how", None)
    if how is not None:
        click.echo(f"BM25 index of {corpus}: {'built' if how.built else 'opened'} in "
                   f"{how.seconds:.1f} s ({searcher.folder})", err=True)  # type: ignore[attr-defined]
    agentic = AgenticNuggets(method.config, searcher=searcher,
                             bounds=Bounds(search["turns"], search["tokens"]))
    inputs = [KeyInput(qid=t.id, query=t.text) for t in read_topics(topics).values()
              if only is None or t.id in only]
    if not inputs:
        raise ConfigError(f"--topics {topics}: no topic to build nuggets for")
    runner = executor_from(options, assessor, output.parent)
    summary = run_with(assessor, runner.run(nuggetize_plan(agentic, inputs, output)))[0]
    if not isinstance(runner, Dry):
        click.echo(summary.line(assessor.stats), err=True)
    return summary
