"""Rubrics from nuggets and what rubric grading shows: `author-rubrics` (RAGDoll's rubric
author, methods/rubrics/authoring.py) and `rubric-diagnostics` (measures/rubric_diagnostics.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.common import (
    ANY,
    assessor_options,
    chosen_topics,
    dry_run_options,
    topic_options,
)
from nuggetizer.errors import ConfigError
from nuggetizer.names import DEFAULT_REASKS


@click.command("author-rubrics")
@click.option("--nuggets", required=True, type=ANY,
              help="nuggets JSONL with importance labels (vital / okay)")
@click.option("--topics", type=ANY, default=None,
              help="topics or narratives file: the query of each topic the nuggets give none")
@click.option("--reasks", type=click.IntRange(min=0), default=DEFAULT_REASKS,
              show_default=True, help="re-asks of an answer that is no list of criteria")
@click.option("-o", "--output", required=True, type=ANY,
              help="rubrics JSONL (ResearchRubrics' shape; the key of assign --method rubrics)")
@topic_options
@dry_run_options
@assessor_options
def author_rubrics_command(nuggets: Path, topics: Path | None, reasks: int, output: Path,
                           only_topics: tuple[str, ...], only_topics_file: Path | None,
                           **options: Any) -> None:
    """Author a rubric of typed criteria from each topic's nuggets (RAGDoll's rubric author):
    vital -> mandatory, weight 5; okay -> optional, weight 2; a vital nugget no criterion
    covers gets one of its own."""
    from nuggetizer.formats.nuggets import add_queries, read_nuggets
    from nuggetizer.formats.topics import read_topics
    from nuggetizer.interface.base import KeyInput
    from nuggetizer.methods.rubrics.authoring import RubricAuthoring
    from nuggetizer.methods.rubrics.method import RubricsConfig
    from nuggetizer.plan.steps import nuggetize_plan
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with

    keys = read_nuggets(nuggets)
    add_queries(keys, nuggets, read_topics(topics) if topics else None)
    only = chosen_topics(only_topics, only_topics_file)
    inputs = [KeyInput(qid=q, query=k.query) for q, k in keys.items()
              if only is None or q in only]
    if not inputs:
        raise ConfigError("--only-topics: none of them is in the nuggets file")
    method = RubricAuthoring(keys, str(nuggets), RubricsConfig(reasks=reasks))
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, Path(output).parent)
    summary = run_with(assessor, runner.run(nuggetize_plan(method, inputs, output)))[0]
    if not isinstance(runner, Dry):
        click.echo(summary.line(assessor.stats), err=True)


@click.command("rubric-diagnostics")
@click.argument("judgments", nargs=-1, required=True, type=ANY)
@click.option("--key", required=True, type=ANY, help="the rubrics file the answers were graded "
              "on (its tier and type, when it gives them)")
@click.option("-o", "--output", required=True, type=ANY,
              help="TSV: table, name, measure, value")
def rubric_diagnostics_command(judgments: tuple[Path, ...], key: Path, output: Path) -> None:
    """Rubric diagnostics (as RAGDoll reports them): failure rate per criterion type, mandatory
    failures per run, Kendall's tau between ternary and binary compliance over the runs."""
    from nuggetizer.formats.writing import write_text_atomic
    from nuggetizer.measures.rubric_diagnostics import (
        Graded,
        criterion_type,
        diagnose,
        is_mandatory,
    )
    from nuggetizer.methods.rubrics.method import RubricsMethod

    method = RubricsMethod()
    keys = method.read_keys(key)
    files = [p for j in judgments for p in (sorted(Path(j).glob("*.jsonl")) if Path(j).is_dir()
                                            else [Path(j)])]
    if not files:
        raise ConfigError("no judgment file (*.jsonl) in the paths given")
    answers = []
    for path in files:
        for judged in method.read_judged(path):
            rubric = keys.get(judged.qid)
            if rubric is None:
                raise ConfigError(f"{path}:{judged.line}: topic {judged.qid!r} is not in --key "
                                  f"{key}")
            criteria = judged.record["criteria"]
            if len(criteria) != len(rubric["rubrics"]):
                raise ConfigError(f"{path}:{judged.line}: {len(criteria)} criteria judged, "
                                  f"{len(rubric['rubrics'])} in --key: grade against this key")
            answers.append((judged.run_id, judged.qid, [
                Graded(judged.run_id, judged.qid, criterion_type(k), is_mandatory(k),
                       float(c["weight"]), str(c["label"]))
                for c, k in zip(criteria, rubric["rubrics"], strict=True)]))
    found = diagnose(answers)
    lines = ["table\tname\tmeasure\tvalue"] + [
        f"{t}\t{n}\t{m}\t{'nan' if isinstance(v, float) and math.isnan(v) else round(v, 4)}"
        for t, n, m, v in found.rows()]
    write_text_atomic(output, "\n".join(lines) + "\n")
    click.echo(f"rubric-diagnostics: {len(answers)} answers of {len(found.mandatory)} runs; "
               f"ternary vs binary Kendall tau {found.tau:.4f}; written to {output}", err=True)
