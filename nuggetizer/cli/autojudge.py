"""The TREC AutoJudge framework's files from our own: `nugget-bank` writes an answer key as
the framework's nugget banks (its Nuggetizer format or its own v3 format); `score
--autojudge-leaderboard --autojudge-format` writes the leaderboards (formats/leaderboards.py)."""

from __future__ import annotations

from pathlib import Path

import click

from nuggetizer.cli.common import ANY, FILE, LENIENT
from nuggetizer.names import BANK_FORMATS


@click.command("nugget-bank")
@click.argument("nuggets", type=ANY)
@click.option("-o", "--output", required=True, type=FILE, help="nugget banks JSONL")
@click.option("--format", "fmt", type=click.Choice(sorted(BANK_FORMATS)), default="nuggetizer",
              show_default=True,
              help="nuggetizer: the framework's NuggetizerNuggetBanks ({qid, query, nuggets}); "
                   "autojudge: its own NuggetBanks v3 (each nugget a claim)")
@LENIENT
def nugget_bank_command(nuggets: Path, output: Path, fmt: str, lenient: bool) -> None:
    """Write an answer key (nuggets JSONL) as the AutoJudge framework's nugget banks, one
    bank (topic) a line."""
    from nuggetizer.formats.autojudge import bank_records
    from nuggetizer.formats.nuggets import read_nuggets
    from nuggetizer.formats.writing import write_jsonl_atomic
    from nuggetizer.run.provenance import write_sidecar

    keys = read_nuggets(nuggets, lenient=lenient)
    write_jsonl_atomic(output, bank_records(keys.values(), fmt))
    write_sidecar(output, [nuggets])
    click.echo(f"nugget-bank: {len(keys)} banks ({fmt}) to {output}", err=True)
