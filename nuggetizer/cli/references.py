"""`resolve-references`: the passages runs reference, read from a search service or a BM25 index
into a corpus file (nuggetizer/search/resolve.py), for a corpus that is no file at hand."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nuggetizer.cli.common import ANY, FILE
from nuggetizer.errors import ConfigError
from nuggetizer.names import READ_LINES, READ_WORDS, SEARCH_SPECS
from nuggetizer.places import default_cache_path

if TYPE_CHECKING:
    from nuggetizer.search.resolve import Resolved

MISSING_SHOWN = 5


@click.command("resolve-references")
@click.option("--run", "run_paths", multiple=True, required=True, type=ANY,
              help="answer run JSONL (TREC RAG 2024/2025/2026; repeatable)")
@click.option("--search", "search_spec", required=True, help=f"where the passages are read: "
              f"{SEARCH_SPECS}")
@click.option("--index", "search_index", default=None,
              help="the search API: the index to read (e.g. msmarco-v2.1-doc-segmented); "
                   "bm25: the index folder")
@click.option("--corpus", type=ANY, default=None, help="bm25: the corpus file to index")
@click.option("--cited-only", is_flag=True,
              help="only the references a sentence cites [default: every reference]")
@click.option("--read-lines", type=click.IntRange(min=0), default=READ_LINES, show_default=True,
              help="lines of each passage kept (0: all)")
@click.option("--read-words", type=click.IntRange(min=0), default=READ_WORDS, show_default=True,
              help="words of each passage kept, after the lines (0: all)")
@click.option("-o", "--output", required=True, type=ANY,
              help="corpus JSONL of the passages ({id, contents, title?}), for assign --corpus")
@click.option("--cache", "cache_path", type=FILE, default=None,
              help=f"where the search API's answers are kept [default: {default_cache_path()}]")
@click.option("--no-cache", is_flag=True, help="do not read or write the cache")
def resolve_references_command(run_paths: tuple[Path, ...], search_spec: str,
                               search_index: str | None, corpus: Path | None, cited_only: bool,
                               read_lines: int, read_words: int, output: Path,
                               cache_path: Path | None, no_cache: bool) -> None:
    """Read the passages the runs reference from a search service or an index into a corpus
    file (RAGDoll's support resolve-references), cut to word limits."""
    from nuggetizer.cache import Cache
    from nuggetizer.formats.answers import read_runs
    from nuggetizer.formats.writing import write_jsonl_atomic
    from nuggetizer.run.provenance import provenance
    from nuggetizer.search.open import open_searcher
    from nuggetizer.search.resolve import references, resolve

    runs = read_runs(run_paths)
    wanted = references((a for by_topic in runs.values() for a in by_topic.values()), cited_only)
    if not wanted:
        raise ConfigError("the runs reference no passage: nothing to resolve")
    cache = None if no_cache else Cache(cache_path or default_cache_path())
    searcher = open_searcher(search_spec, corpus=corpus, index=search_index, cache=cache)

    async def read() -> Resolved:
        try:
            return await resolve(searcher, wanted, lines=read_lines, words=read_words,
                                 stamp=provenance(None, (), config={
                                     "step": "resolve-references", "lines": read_lines,
                                     "words": read_words, "search": searcher.provenance()}))
        finally:
            await searcher.aclose()

    resolved = asyncio.run(read())
    write_jsonl_atomic(output, resolved.passages.values())
    click.echo(f"resolve-references: {len(resolved.passages)} of {len(wanted)} passages from "
               f"{searcher.spec} into {output} ({resolved.cut} cut to the limits)", err=True)
    if resolved.missing:
        shown = ", ".join(resolved.missing[:MISSING_SHOWN])
        click.echo(f"warning: {len(resolved.missing)} references not found ({shown}"
                   f"{', ...' if len(resolved.missing) > MISSING_SHOWN else ''}): their "
                   "citations stay unjudged under assign --allow-missing", err=True)
