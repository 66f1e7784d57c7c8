"""What the core commands share: the method with its flags, the inputs its keys are built
from (graded by the LLM where no qrels exist), the targets it judges, and scoring with its
report."""


from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import click

from nuggetizer.assessors.base import DEFAULT_REASKS
from nuggetizer.cli.common import (
    parse_pairs,
)
from nuggetizer.cli.flags import flag_of
from nuggetizer.cli.grading import attach_sub_narratives, check_fill, grading_inputs
from nuggetizer.errors import ConfigError, NothingJudgedError
from nuggetizer.flow.inputs import (
    answer_targets,
    carry_documents,
    cite_targets,
    context_targets,
    key_inputs,
)
from nuggetizer.flow.progress import Summary
from nuggetizer.flow.provenance import hash_ahead, write_sidecar
from nuggetizer.flow.relevance import build_pool, grade_pool, graded_lines, judgments_path_for
from nuggetizer.flow.scales import DEFAULT_GRADING, Grading
from nuggetizer.flow.scoring import ScoreTable, judgment_files, read_judged, score_judged
from nuggetizer.flow.steps import build_keys
from nuggetizer.flow.tables import format_leaderboard, write_tables
from nuggetizer.formats.answers import read_runs
from nuggetizer.formats.leaderboards import table_rows, write_leaderboard
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.track_rules import cut, enforce, request_limits
from nuggetizer.formats.trec_run import read_trec_run, read_trec_runs
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.methods.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.methods.registry import make_method, method_class


@runtime_checkable
class DiversityQrels(Protocol):
    """A method that writes diversity qrels (`score --diversity-qrels`; crux does)."""

    def diversity_qrels(self, keys: Mapping[str, Any], files: Sequence[Path], out: Path
                        ) -> None: ...


def setting_names(name: str) -> set[str]:
    """The settings of the method called `name`."""
    return {f.name for f in dataclasses.fields(method_class(name).config_type)}


def configured(name: str, pairs: tuple[str, ...], **flags: Any) -> AnswerKeyMethod:
    """The method `name` with its `--set` pairs and the setting flags that were given."""
    given = {k: v for k, v in flags.items() if v is not None}
    known = setting_names(name)
    for setting in given:
        if setting not in known:
            raise ConfigError(f"{flag_of(setting)} is not an option of --method {name}")
    return make_method(name, parse_pairs(pairs, given))


# --- a few topics first ------------------------------------------------------------------------

def note_unknown(only: set[str] | None, present: set[str], where: str) -> None:
    """Say which chosen topics are not there; an error when none of them is."""
    if only is None:
        return
    unknown = sorted(only - present)
    if unknown and len(unknown) == len(only):
        raise ConfigError(f"--only-topics: none of the chosen topics is in {where} "
                          f"(e.g. {unknown[0]!r})")
    if unknown:
        click.echo(f"note: {len(unknown)} of the {len(only)} chosen topics are not in {where}: "
                   f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}", err=True)


def restrict_topic_map(topic_map: dict[str, Any], only: set[str] | None, where: str
                       ) -> dict[str, Any]:
    """The chosen topics of a topics file's map (all when `only` is None)."""
    if only is None:
        return topic_map
    note_unknown(only, set(topic_map), where)
    return {q: t for q, t in topic_map.items() if q in only}


def restrict_inputs(inputs: list[KeyInput], skipped: int, only: set[str] | None,
                    every: Sequence[str] | None = None) -> tuple[list[KeyInput], int]:
    """The key inputs of the chosen topics (all when `only` is None); `skipped` counted among
    them only (`every`: all topic ids of the topics file, to tell skipped from unknown)."""
    if only is None:
        return inputs, skipped
    kept = [i for i in inputs if i.qid in only]
    if every is not None:
        note_unknown(only, set(every), "the topics file")
        skipped = len((only & set(every)) - {i.qid for i in kept})
    else:
        note_unknown(only, {i.qid for i in inputs}, "the key inputs")
        skipped = 0
    return kept, skipped


def restrict_targets(targets: dict[str, dict[str, Target]], only: set[str] | None
                     ) -> dict[str, dict[str, Target]]:
    """The targets of the chosen topics (all when `only` is None)."""
    if only is None:
        return targets
    note_unknown(only, {q for by_topic in targets.values() for q in by_topic}, "the runs")
    return {run: {q: t for q, t in by_topic.items() if q in only}
            for run, by_topic in targets.items()}


# --- the steps, shared by the commands and evaluate -------------------------------------------

def threshold(method: AnswerKeyMethod, min_grade: int | None = None) -> int:
    """The lowest grade a passage needs to be built from: the method's `min_grade` setting,
    else the flag, else 1 ("related", as the TREC RAG track); 0 is a grade like any other."""
    configured_grade = getattr(method.config, "min_grade", None)
    if configured_grade is not None:
        return int(configured_grade)
    return 1 if min_grade is None else min_grade


def graded_paths(output: Path, qrels: Path | None = None) -> tuple[Path, Path]:
    """Where `--grade-pool` writes its qrels and their judgments: beside the key file
    (`KEY.llm.qrels`, `KEY.llm.qrels.judgments.jsonl`) unless given."""
    path = qrels or output.with_name(output.name.removesuffix(".jsonl") + ".llm.qrels")
    return path, judgments_path_for(path)


def read_pool(topic_map: dict[str, Any], run_paths: Sequence[Path],
              retrieval_runs: Sequence[Path], depth: int, cited_only: bool, fill: Path | None
              ) -> tuple[Any, list[Any]]:
    """The (topic, passage) pairs to grade: the answer runs' references (or citations) and the
    top `depth` of the retrieval runs; and the qrels of `fill`, kept as they are."""
    pool = build_pool(topic_map, read_runs(run_paths),
                      list(read_trec_runs(retrieval_runs).values()), depth, cited_only)
    return pool, read_qrels(fill) if fill is not None else []


def report_graded(graded: Any, qrels: Path, inputs: Sequence[Path]) -> None:
    """Record beside graded qrels what they were made from and their scale, and say what was
    left unjudged."""
    write_sidecar(qrels, [*inputs, *grading_inputs(graded.grading), graded.judgments],
                  declared=graded.grading.declared())
    for line in graded_lines(graded):
        click.echo(line, err=True)


async def grade_then_build(
    method: AnswerKeyMethod, assessor: Any, *, topics: Path, run_paths: Sequence[Path],
    retrieval_runs: Sequence[Path] = (), depth: int = 20, cited_only: bool = False,
    corpus: Path | None, fill: Path | None, graded_qrels: Path, key: Path,
    reasks: int = DEFAULT_REASKS, allow_missing: bool = False, min_grade: int | None = None,
    track: str | None = None, lower: str = "--min-grade 0, or --set min_grade=0",
    need_keys: bool = False, only: set[str] | None = None, grading: Grading = DEFAULT_GRADING,
    map_sub_narratives: bool = False,
) -> tuple[Summary, Summary]:
    """Answer keys without qrels: pool the passages the runs list (or cite), grade them with
    the relevance step into `graded_qrels` (with its judgments and provenance), then build the
    keys from the passages graded >= the method's threshold. Both steps resume and replay.
    A topic with no passage at the threshold gets no key (a note says so and how to lower it);
    with `need_keys` (evaluate), no key at all is an error once the qrels are written; with
    `map_sub_narratives` (a track's [relevance]), each nugget is mapped to a sub-narrative."""
    if "qrels" not in method.key_needs | method.key_reads:
        raise ConfigError(f"--grade-pool: --method {method.name} does not build its keys "
                          "from judged passages")
    if not run_paths and not retrieval_runs:
        raise ConfigError("--grade-pool needs runs to pool: give --run")
    if corpus is None:
        raise ConfigError("--grade-pool needs --corpus for the texts of the pooled passages")
    check_fill(fill, grading, graded_qrels)
    topic_map = restrict_topic_map(read_topics(topics), only, str(topics))
    pool, kept = read_pool(topic_map, run_paths, retrieval_runs, depth, cited_only, fill)
    graded = await grade_pool(topic_map, pool, corpus, assessor, graded_qrels, None, kept,
                              reasks, allow_missing, grading)
    report_graded(graded, graded_qrels, [topics, *run_paths, *retrieval_runs,
                                         *([fill] if fill else [])])
    click.echo(graded.assessed.summary.line() + f"; qrels in {graded_qrels}", err=True)
    inputs, skipped = key_inputs_for(method, topics=topics, qrels=graded_qrels, corpus=corpus,
                                     min_grade=min_grade)
    if only is not None:
        inputs = [i for i in inputs if i.qid in only]
        skipped = len(topic_map) - len(inputs)
    grade = threshold(method, min_grade)
    if need_keys and not inputs:
        raise ConfigError(f"no topic has a passage graded >= {grade} in {graded_qrels}: no "
                          f"answer key to score with (the graded qrels and their judgments "
                          f"are kept; {lower} builds from every graded passage)")
    if skipped:
        click.echo(f"note: {skipped} of {len(topic_map)} topics have no passage graded >= "
                   f"{grade} in {graded_qrels}: they get no key (and no score); a lower "
                   f"threshold ({lower}) builds from every graded passage", err=True)
    if map_sub_narratives:
        attach_sub_narratives(method, inputs, grading)
    built = await build_keys(method, inputs, assessor, key, track, skipped, [graded_qrels])
    return graded.assessed.summary, built


def key_inputs_for(method: AnswerKeyMethod, *, topics: Path, qrels: Path | None,
                   corpus: Path | None, docs_runs: Sequence[Path] = (), depth: int | None = None,
                   min_grade: int | None = None) -> tuple[list[KeyInput], int]:
    """Read (and check) what the method's keys are built from: the inputs, and how many
    topics have no passage to build from."""
    given = {"qrels": qrels, "corpus": corpus, "docs_runs": docs_runs or None}
    for need in method.key_needs - {"reference"}:
        if not given.get(need):
            raise ConfigError(f"--method {method.name} needs --{need.replace('_', '-')}")
    if docs_runs and "docs_runs" not in method.key_needs | method.key_reads:
        raise ConfigError(f"--docs-run: --method {method.name} does not build its keys from "
                          "retrieved passages")
    topic_map = read_topics(topics)
    method.check_inputs(topic_map, topics, qrels is not None)
    grade = threshold(method, min_grade)
    return key_inputs(
        topic_map, qrels=read_qrels(qrels) if qrels else (), qrels_path=qrels, corpus=corpus,
        docs_runs=[read_trec_run(p) for p in docs_runs], depth=depth, min_grade=grade,
        skip_without_documents=method.skip_without_documents)


def make_targets(method: AnswerKeyMethod, runs: Sequence[Path], retrieval_runs: Sequence[Path],
                 corpus: Path | None, depth: int | None, allow_missing: bool = False,
                 track: str = "none", requests: Path | None = None,
                 length_limit: int | None = None) -> dict[str, dict[str, Target]]:
    """Answer runs and retrieval runs as the targets the method judges; report runs are first
    checked against their `track`'s rules (formats/track_rules.py), and cut to the length
    limit (`requests`' per topic, else `length_limit`) where the track cuts before scoring."""
    if runs and "answer" not in method.targets:
        raise ConfigError(f"method {method.name} judges retrieval contexts: give "
                          "--retrieval-run (TREC runs), not --run")
    if retrieval_runs and "context" not in method.targets:
        raise ConfigError(f"method {method.name} judges answers: give --run, not "
                          "--retrieval-run")
    if not runs and not retrieval_runs:
        raise ConfigError("nothing to judge: give --run (answers) or --retrieval-run")
    chosen, warnings = enforce(runs, track, request_limits(requests) if requests else {},
                               length_limit)
    if warnings:
        click.echo(f"note: {len(warnings)} warnings of the track rules (`nuggetizer validate "
                   f"--track-rules {track}` lists them), e.g. {warnings[0]}", err=True)
    answers = read_runs(runs, keep_unresolved=allow_missing and method.reads_citations)
    if (count := cut(answers, chosen)):
        click.echo(f"note: {count} reports over their length limit are cut to it before "
                   "judging, as their track scores them [ragtime length]", err=True)
    targets = answer_targets(answers)
    if method.reads_citations:
        if corpus is None and not carry_documents(targets):
            raise ConfigError(f"--method {method.name} reads the cited passages: give --corpus "
                              "(or report runs that carry them in `documents`)")
        problems = cite_targets(targets, corpus, allow_missing,
                                every=not method.first_citation_only)
        if problems:
            click.echo(f"note: {len(problems)} citations cannot be judged (unjudged, counted), "
                       f"e.g. {problems[0]}", err=True)
    if retrieval_runs:
        if corpus is None:
            raise ConfigError("--retrieval-run needs --corpus for the passage texts")
        contexts = context_targets(read_trec_runs(retrieval_runs), corpus,
                                   depth or method.depth, allow_missing)
        for run_id in contexts:
            if run_id in targets:
                raise ConfigError(f"run id {run_id!r} names an answer run and a retrieval run")
        targets.update(contexts)
    return targets


def score_and_report(method: AnswerKeyMethod, paths: Sequence[Path], key: Path | None,
                     output: Path | None, per_topic: Path | None, lenient: bool,
                     started: float, diversity: Path | None = None,
                     topics: Path | None = None, autojudge: Path | None = None,
                     only: set[str] | None = None, autojudge_format: str = "tot"
                     ) -> ScoreTable:
    """Score judgment files against the key (else over the `topics` file's topics, else every
    topic judged); write the tables; print the leaderboard."""
    if key is None and not method.scores_without_key:
        raise ConfigError(f"--method {method.name} needs --key (its answer key file)")
    if diversity is not None and not isinstance(method, DiversityQrels):
        raise ConfigError(f"--diversity-qrels: --method {method.name} writes no diversity qrels")
    files = judgment_files(list(paths))
    keys = method.read_keys(key, lenient) if key is not None else None
    universe = list(read_topics(topics)) if topics is not None and keys is None else None
    inputs = [p for p in (key, topics) if p is not None] + files
    hashing = hash_ahead(inputs) if output or per_topic or autojudge or diversity else None
    judged = read_judged(method, files, lenient, scoring=True)
    if only is not None:  # scored on the chosen topics only
        if keys is not None:
            note_unknown(only, set(keys), f"the answer key {key}")
            keys = {q: k for q, k in keys.items() if q in only}
        elif universe is not None:
            note_unknown(only, set(universe), f"the topics file {topics}")
            universe = [q for q in universe if q in only]
        else:
            judged = (j for j in judged if j.qid in only)
    table = score_judged(method, judged, keys, lenient, universe)
    if only is not None and keys is None and universe is None and not table.topics:
        raise ConfigError("--only-topics: none of the chosen topics is judged in "
                          f"{', '.join(map(str, paths))}")
    if table.judged_nothing:
        raise NothingJudgedError(
            f"score --method {method.name}: nothing was judged in {len(files)} judgment "
            f"files ({left_out_text(table)}); no leaderboard written: judge again with an "
            "assessor that answers")
    if hashing is not None:
        hashing.join()
    write_tables(table, output, per_topic)
    if output is not None:  # a run_level method's other tables, beside the leaderboard
        for name, text in table.extras.items():
            write_text_atomic(output.with_name(f"{output.stem}.{name}.tsv"), text)
    if autojudge is not None:
        write_leaderboard(autojudge, table_rows(table), autojudge_format)
    if diversity is not None and isinstance(method, DiversityQrels):
        method.diversity_qrels(keys or {}, files, diversity)
        write_sidecar(diversity, inputs)
    for path in (output, per_topic, autojudge):
        if path is not None:
            write_sidecar(path, inputs, table.left_out)
    click.echo(format_leaderboard(table))
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    if table.notes:
        shown = "; ".join(table.notes[:3])
        click.echo(f"note: {len(table.notes)} differences between the assessments and the key "
                   f"were resolved, e.g. {shown}", err=True)
    unjudged = sum(table.unjudged.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(table.kinds.items()))
    click.echo(
        f"score --method {method.name}: {len(table.means)} runs, {len(table.topics)} topics, "
        f"{sum(table.missing.values())} unanswered (scored 0), {table.outside} outside the "
        f"answer key, {unjudged} unjudged (left out{': ' + kinds if kinds else ''}), "
        f"{left_out_text(table) + ' (left out, no score), ' if table.left_out else ''}"
        f"{time.monotonic() - started:.1f} s",
        err=True,
    )
    return table


def left_out_text(table: ScoreTable) -> str:
    """`2 answers with nothing judged, 1 topics with nothing judged`, or ""."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(table.left_out.items()))


def check_key(method: AnswerKeyMethod, key: Path | None) -> None:
    """A key is given exactly when the method judges with one."""
    if method.needs_key and key is None:
        raise ConfigError(f"--method {method.name} needs --key (its answer key file; "
                          "--nuggets for the nuggets)")
    if not method.needs_key and key is not None:
        raise ConfigError(f"--method {method.name} judges without an answer key: leave out "
                          "--key/--nuggets")


# --- the commands --------------------------------------------------------------------------
