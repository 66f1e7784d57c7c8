"""The core commands, one body each for every method: nuggetize, assign, score, evaluate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.cli.agentic import agentic_nuggetize, agentic_options, check_agentic
from nuggetizer.cli.batch import batch_options, echo_lines
from nuggetizer.cli.common import (
    ANY,
    FILE,
    FOLDER,
    LENGTH_LIMIT,
    LENIENT,
    PROFILE,
    TRACK_RULES,
    assessor_options,
    chosen_topics,
    dry_run_options,
    embedded_note,
    method_options,
    topic_options,
)
from nuggetizer.cli.flags import FlagsCommand
from nuggetizer.cli.grading import (
    qrels_grading,
    relevant_default,
    scale_options,
)
from nuggetizer.errors import ConfigError
from nuggetizer.names import DEFAULT_REASKS, LEADERBOARD_FORMATS

if TYPE_CHECKING:
    from nuggetizer.run.execute import Executor


@click.command("nuggetize", cls=FlagsCommand)  # + the methods' own flags (cli/flags.py)
@click.option("--topics", required=True, type=ANY, help="TSV or JSONL")
@click.option("--qrels", type=ANY, help="TREC qrels")
@click.option("--corpus", type=ANY, help="JSONL segments")
@click.option("-o", "--output", required=True, type=ANY)
@click.option("--docs-run", "docs_runs", multiple=True, type=ANY,
              help="TREC run whose first --depth passages a key is built from (kpr, udcg; "
                   "repeatable: their union)")
@click.option("--depth", type=int, default=None, help="passages per topic of --docs-run")
@click.option("--grade-pool", is_flag=True,
              help="no qrels: grade the passages the --run files list (UMBRELA, as the "
                   "`relevance` command) into KEY.llm.qrels, then build from those graded >= "
                   "--min-grade (--qrels, if given, are kept and only the holes graded)")
@click.option("--run", "run_paths", multiple=True, type=ANY,
              help="answer run whose references are pooled for --grade-pool (repeatable)")
@click.option("--cited-only", is_flag=True,
              help="--grade-pool: pool only the references the answers' sentences cite")
@click.option("--graded-qrels", type=FILE, default=None,
              help="--grade-pool: where the graded qrels go [default: OUTPUT.llm.qrels]")
@click.option("--reasks", type=int, default=DEFAULT_REASKS, show_default=True,
              help="--grade-pool: re-asks of an answer without a readable grade")
@scale_options
@method_options
@click.option("--min-grade", type=int, default=None,
              help="judged segments used [default: 1; --grade-pool --scale 0-4: 2]")
@click.option("--map-sub-narratives", is_flag=True,
              help="map each nugget to one of its topic's sub-narratives (of --narratives or "
                   "--sub-narratives-from), kept as mapped_sub_narrative (TREC RAG 2026)")
@agentic_options
@topic_options
@dry_run_options
@batch_options
@assessor_options
def nuggetize_command(
    topics: Path, qrels: Path | None, corpus: Path | None, output: Path, min_grade: int | None,
    flags: dict[str, Any], docs_runs: tuple[Path, ...], depth: int | None, method: str,
    settings: tuple[str, ...],
    grade_pool: bool, run_paths: tuple[Path, ...], cited_only: bool,
    graded_qrels: Path | None, reasks: int, only_topics: tuple[str, ...],
    only_topics_file: Path | None, scale: str, narratives: Path | None,
    sub_narratives_from: Path | None, map_sub_narratives: bool, agentic: bool,
    search_spec: str, search_index: str | None, max_turns: int, max_agent_tokens: int,
    **options: Any,
) -> None:
    """Build an answer key for each topic (nuggets from its judged segments by default; with
    --grade-pool, from the runs' passages graded by the LLM first; with --agentic, by the LLM
    searching the corpus with tools)."""
    from nuggetizer.cli.steps import configured, setting_names
    from nuggetizer.formats.track_inputs import Wanted, read_track_inputs
    from nuggetizer.plan.graded import KeySpec, PoolSpec, grade_then_build_plan, wanted_to_grade
    from nuggetizer.plan.sources import (
        attach_sub_narratives,
        graded_paths,
        key_inputs_for,
        make_grading,
        restrict_inputs,
        threshold,
        wanted_to_build,
    )
    from nuggetizer.plan.steps import nuggetize_plan
    from nuggetizer.relevance.scales import DEFAULT_SCALE, Grading, get_scale
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with

    only = chosen_topics(only_topics, only_topics_file)
    if agentic:
        chosen = configured(method, settings, **flags)
        check_agentic(chosen, {"--qrels": qrels, "--grade-pool": grade_pool,
                               "--docs-run": docs_runs, "--run": run_paths,
                               "--map-sub-narratives": map_sub_narratives,
                               "--batch-api": options["batch_api"]})
        agentic_nuggetize(chosen, topics, output, only, corpus, {
            "spec": search_spec, "index": search_index, "turns": max_turns,
            "tokens": max_agent_tokens}, options)
        return
    sourced = narratives is not None or sub_narratives_from is not None
    if map_sub_narratives and grade_pool:
        raise ConfigError("--map-sub-narratives does not cover --grade-pool: grade with "
                          "`relevance` first, then nuggetize --map-sub-narratives from its qrels")
    if not grade_pool and (scale != DEFAULT_SCALE or (sourced and not map_sub_narratives)):
        raise ConfigError("--scale, --narratives and --sub-narratives-from go with --grade-pool"
                          " (or, the last two, with --map-sub-narratives)")
    min_grade = relevant_default(Grading(get_scale(scale)) if grade_pool else
                                 qrels_grading(qrels), min_grade,
                                 settings)  # 2 for qrels graded (or declared) 0-4
    if "min_grade" in setting_names(method):  # else only the threshold of the passages read
        flags["min_grade"] = min_grade
    chosen = configured(method, settings, **flags)
    if (run_paths or cited_only or graded_qrels) and not grade_pool:
        raise ConfigError("--run, --cited-only and --graded-qrels go with --grade-pool")
    if grade_pool and options["batch_api"]:
        raise ConfigError("--batch-api does not cover --grade-pool: grade with `relevance "
                          "--batch-api` first, then nuggetize --batch-api from its qrels")
    if grade_pool and docs_runs:
        raise ConfigError("--grade-pool pools the --run files: --docs-run does not apply")
    files = Wanted(topics=topics, qrels=qrels, corpus=corpus, runs=run_paths,
                   docs_runs=docs_runs, narratives=narratives,
                   sub_narratives_from=sub_narratives_from, depth=depth)
    read = read_track_inputs(wanted_to_grade(files, 0, threshold(chosen, min_grade))
                             if grade_pool else wanted_to_build(chosen, files, min_grade))
    grading = make_grading(scale, read.sub_narratives)
    if grade_pool:
        qrels_out, judgments = graded_paths(output, graded_qrels)
        plan = grade_then_build_plan(
            PoolSpec(read, cited_only=cited_only, reasks=reasks, grading=grading, only=only),
            KeySpec(chosen, min_grade), qrels_out, output)
        assessor = make_assessor_from(options)
        runner = executor_from(options, assessor, output.parent)
        built = run_with(assessor, runner.run(plan))[-1]
        if not isinstance(runner, Dry):
            click.echo(built.line(assessor.stats) + f"; graded qrels in {qrels_out} (judgments "
                       f"in {judgments}), keys in {output}", err=True)
            embedded_note(assessor)
        return
    inputs, skipped = key_inputs_for(chosen, read, min_grade)
    inputs, skipped = restrict_inputs(inputs, skipped, only,
                                      list(read.topics or {}) if only else None)
    if map_sub_narratives:
        attach_sub_narratives(chosen, inputs, grading)
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, output.parent)
    plan = nuggetize_plan(chosen, inputs, output, skipped)
    plan.read = read.lines()
    summary = run_with(assessor, runner.run(plan))[0]
    finish(runner, summary, assessor)


@click.command("assign", cls=FlagsCommand)  # + the methods' own flags (cli/flags.py)
@click.option("--run", "run_paths", multiple=True, type=ANY,
              help="answer run JSONL (repeatable)")
@click.option("--nuggets", "--key", "key", type=ANY, default=None,
              help="the answer key (nuggets, or the key file of --method; not for a method "
                   "that judges without one, e.g. support)")
@click.option("--retrieval-run", "retrieval_runs", multiple=True, type=ANY,
              help="TREC retrieval run (crux, udcg; repeatable)")
@click.option("--corpus", type=ANY, default=None,
              help="passage texts of --retrieval-run, or of the passages answers cite (support)")
@click.option("--depth", type=int, default=None,
              help="passages of a retrieval run read per topic [the method's k]")
@click.option("--allow-missing", is_flag=True,
              help="retrieved or cited passages missing from --corpus, and citations outside "
                   "an answer's references, stay unjudged (counted) instead of an error")
@click.option("--topics", type=ANY, default=None,
              help="topics or narratives file (TSV or JSONL): the query of each topic the key "
                   "gives none (the TREC RAG 2026 nuggets)")
@method_options
@TRACK_RULES
@LENGTH_LIMIT
@click.option("--requests", type=ANY, default=None,
              help="report requests (topics JSONL) whose `limit` (characters) or `word_limit` "
                   "gives each topic's length limit, for --track-rules")
@click.option("-o", "--output", required=True, type=FOLDER,
              help="folder: one judgment file per run")
@LENIENT
@topic_options
@dry_run_options
@batch_options
@assessor_options
def assign_command(
    run_paths: tuple[Path, ...], key: Path, output: Path, flags: dict[str, Any], lenient: bool,
    retrieval_runs: tuple[Path, ...], corpus: Path | None, depth: int | None,
    allow_missing: bool, method: str, settings: tuple[str, ...], only_topics: tuple[str, ...],
    only_topics_file: Path | None, track_rules: str,
    length_limit: int | None, requests: Path | None, topics: Path | None, **options: Any,
) -> None:
    """Judge every answer (or retrieved context) of the runs against its topic's key."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.track_inputs import Wanted, read_track_inputs
    from nuggetizer.plan.sources import check_key, make_targets, restrict_targets, wanted_to_judge
    from nuggetizer.plan.steps import assign_plan
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with

    chosen = configured(method, settings, **flags)
    check_key(chosen, key)
    read = read_track_inputs(wanted_to_judge([chosen], Wanted(
        topics=topics, corpus=corpus, runs=run_paths, retrieval_runs=retrieval_runs,
        track_rules=track_rules, requests=requests, length_limit=length_limit, depth=depth,
        allow_missing=allow_missing)))
    targets = restrict_targets(make_targets(chosen, read),
                               chosen_topics(only_topics, only_topics_file))
    keys = chosen.read_keys(key, lenient) if key is not None else None
    if keys is not None and key is not None:
        chosen.complete_keys(keys, key, read.topics)
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, output)
    plan = assign_plan(chosen, keys, targets, output)
    plan.read = read.lines()
    summary = run_with(assessor, runner.run(plan))[0]
    finish(runner, summary, assessor)


@click.command("score")
@click.argument("assessments", nargs=-1, required=True, type=ANY)
@click.option("-o", "--output", type=FILE, default=None, help="leaderboard TSV")
@click.option("--per-topic", type=FILE, default=None,
              help="long TSV: run_id topic_id measure value")
@click.option("--autojudge-leaderboard", type=FILE, default=None,
              help="the leaderboard in the TREC AutoJudge framework's format (--autojudge-"
                   "format; per run and topic, with `all` rows)")
@click.option("--autojudge-format", type=click.Choice(LEADERBOARD_FORMATS), default="tot",
              show_default=True,
              help="tot: run_id measure topic value; ir_measures: run_id topic measure value; "
                   "rag4reports: topic run_id measure value; ranking: topic Q0 run_id rank "
                   "value measure; jsonl; trec_eval: measure topic value, a folder of one "
                   "file per run")
@click.option("--nuggets", "--key", "key", type=ANY, default=None,
              help="answer key: its topics are the ones every run is scored on, and every "
                   "judgment is checked against it")
@click.option("--topics", type=ANY, default=None,
              help="without --key: the topics every run is scored on (an unanswered one "
                   "scores 0) [default: every topic judged]")
@LENIENT
@PROFILE
@click.option("--diversity-qrels", type=FILE, default=None,
              help="crux: write `qid subtopic docid rel` qrels (ir_measures' alpha_nDCG reads "
                   "them)")
@method_options
@topic_options
def score_command(
    assessments: tuple[Path, ...], output: Path | None, per_topic: Path | None,
    key: Path | None, lenient: bool, method: str, settings: tuple[str, ...],
    diversity_qrels: Path | None, topics: Path | None, autojudge_leaderboard: Path | None,
    only_topics: tuple[str, ...], only_topics_file: Path | None, autojudge_format: str,
    profile: str | None,
) -> None:
    """Score judgment files (or folders of them) into a leaderboard (--only-topics: on those
    topics only; --profile ragdoll: castorini RAGDoll's numbers)."""
    from nuggetizer.cli.steps import configured, score_and_report
    from nuggetizer.scoring.files import ScoreFiles, ScoreScope

    started = time.monotonic()
    chosen = configured(method, settings, profile)
    score_and_report(chosen, assessments,
                     ScoreScope(key, topics, chosen_topics(only_topics, only_topics_file),
                                lenient),
                     ScoreFiles(output, per_topic, autojudge_leaderboard, autojudge_format,
                                diversity_qrels), started)


@click.command("relevance")
@click.option("--topics", required=True, type=ANY, help="TSV or JSONL: the topics graded")
@click.option("--run", "run_paths", multiple=True, type=ANY,
              help="answer run JSONL whose references are pooled (repeatable)")
@click.option("--cited-only", is_flag=True,
              help="pool only the references an answer's sentences cite")
@click.option("--retrieval-run", "retrieval_runs", multiple=True, type=ANY,
              help="TREC retrieval run whose first --depth passages are pooled (repeatable)")
@click.option("--depth", type=int, default=20, show_default=True,
              help="passages pooled per topic of each --retrieval-run")
@click.option("--corpus", type=ANY, default=None, help="JSONL segments: the pooled texts")
@click.option("--fill", type=ANY, default=None,
              help="existing qrels: pairs judged there are kept as they are, only the holes "
                   "are graded")
@click.option("--allow-missing", is_flag=True,
              help="pooled passages missing from --corpus stay unjudged instead of an error")
@click.option("-o", "--output", required=True, type=FILE, help="TREC qrels to write")
@click.option("--judgments", type=FILE, default=None,
              help="every judgment, with the model's answer [default: OUTPUT.judgments.jsonl]")
@click.option("--reasks", type=int, default=DEFAULT_REASKS, show_default=True,
              help="re-asks of an answer without a readable grade")
@scale_options
@topic_options
@dry_run_options
@batch_options
@assessor_options
def relevance_command(
    topics: Path, run_paths: tuple[Path, ...], cited_only: bool,
    retrieval_runs: tuple[Path, ...], depth: int, corpus: Path | None, fill: Path | None,
    allow_missing: bool, output: Path, judgments: Path | None, reasks: int, scale: str,
    narratives: Path | None, sub_narratives_from: Path | None,
    only_topics: tuple[str, ...], only_topics_file: Path | None, **options: Any,
) -> None:
    """Grade the pooled (topic, passage) pairs with UMBRELA's prompt, 0-3 (or 0-4 with the
    narrative's sub-narratives, --scale 0-4); write TREC qrels declaring their scale."""
    from nuggetizer.formats.track_inputs import Wanted, read_track_inputs
    from nuggetizer.plan.graded import PoolSpec, relevance_plan, wanted_to_grade
    from nuggetizer.plan.sources import check_fill, make_grading
    from nuggetizer.relevance.scales import Grading, get_scale
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with

    check_fill(fill, Grading(get_scale(scale)), output)
    if not run_paths and not retrieval_runs:
        raise ConfigError("nothing to pool: give --run (answers) and/or --retrieval-run")
    if depth < 1:
        raise ConfigError(f"--depth must be at least 1, got {depth}")
    read = read_track_inputs(wanted_to_grade(Wanted(
        topics=topics, qrels=fill, corpus=corpus, runs=run_paths, retrieval_runs=retrieval_runs,
        narratives=narratives, sub_narratives_from=sub_narratives_from), depth))
    spec = PoolSpec(read, depth, cited_only, reasks, allow_missing,
                    make_grading(scale, read.sub_narratives),
                    chosen_topics(only_topics, only_topics_file))
    plan = relevance_plan(spec, output, judgments)
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, output.parent)
    graded = run_with(assessor, runner.run(plan))[0]
    if not isinstance(runner, Dry):
        click.echo(graded.assessed.summary.line(assessor.stats) + f"; qrels in {output}, "
                   f"judgments in {graded.judgments}", err=True)
        echo_lines(runner.lines())
        embedded_note(assessor)


def finish(runner: Executor, summary: Any, assessor: Any) -> None:
    """After a live or batched step: its summary, then what the batches did."""
    from nuggetizer.run.execute import Dry

    if not isinstance(runner, Dry):
        click.echo(summary.line(assessor.stats), err=True)
        echo_lines(runner.lines())
