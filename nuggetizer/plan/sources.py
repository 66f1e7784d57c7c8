"""What a step reads before any LLM call, checked: the topics chosen, the passages a key is
built from, the pool to grade, the targets to judge; and the sub-narratives of a 0-4 grading."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from nuggetizer.errors import ConfigError
from nuggetizer.formats.answers import read_runs, repeated_citations
from nuggetizer.formats.narratives import sub_narrative_source
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.track_rules import cut, enforce, request_limits
from nuggetizer.formats.trec_run import read_trec_run, read_trec_runs
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.plan.inputs import (
    answer_targets,
    carry_documents,
    cite_targets,
    context_targets,
    key_inputs,
)
from nuggetizer.plan.track import Track
from nuggetizer.relevance.grade import graded_lines, judgments_path_for
from nuggetizer.relevance.scales import DEFAULT_GRADING, Grading, common_scale, get_scale
from nuggetizer.run.chosen import note_unknown
from nuggetizer.run.provenance import write_sidecar


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


def report_graded(graded: Any, qrels: Path, inputs: Sequence[Path]) -> None:
    """Record beside graded qrels what they were made from and their scale, and say what was
    left unjudged."""
    write_sidecar(qrels, [*inputs, *grading_inputs(graded.grading), graded.judgments],
                  declared=graded.grading.declared())
    for line in graded_lines(graded):
        click.echo(line, err=True)


def key_inputs_for(method: AnswerKeyMethod, *, topics: Path, qrels: Path | None,
                   corpus: Path | None, docs_runs: Sequence[Path] = (), depth: int | None = None,
                   min_grade: int | None = None) -> tuple[list[KeyInput], int]:
    """Read (and check) what the method's keys are built from: the inputs, and how many
    topics have no passage to build from."""
    given = {"qrels": qrels, "corpus": corpus, "docs_runs": docs_runs or None}
    for need in method.judging.needs - {"reference"}:
        if not given.get(need):
            raise ConfigError(f"--method {method.name} needs --{need.replace('_', '-')}")
    if docs_runs and "docs_runs" not in method.judging.reads:
        raise ConfigError(f"--docs-run: --method {method.name} does not build its keys from "
                          "retrieved passages")
    topic_map = read_topics(topics)
    method.check_inputs(topic_map, topics, qrels is not None)
    grade = threshold(method, min_grade)
    return key_inputs(
        topic_map, qrels=read_qrels(qrels) if qrels else (), qrels_path=qrels, corpus=corpus,
        docs_runs=[read_trec_run(p) for p in docs_runs], depth=depth, min_grade=grade,
        skip_without_documents=method.judging.skip_without_documents)


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
    answers = read_runs(runs, keep_unresolved=allow_missing and method.judging.citations)
    if (repeats := repeated_citations(answers)):
        then = "its passage is judged once" if method.judging.citations else \
            f"--method {method.name} reads no citations"
        click.echo(f"warning: {len(repeats)} citations name a reference their answer object "
                   f"already cites ({then}), e.g. {repeats[0]}", err=True)
    if (count := cut(answers, chosen)):
        click.echo(f"note: {count} reports over their length limit are cut to it before "
                   "judging, as their track scores them [ragtime length]", err=True)
    targets = answer_targets(answers)
    if method.judging.citations:
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


def check_key(method: AnswerKeyMethod, key: Path | None) -> None:
    """A key is given exactly when the method judges with one."""
    if method.judging.needs_key and key is None:
        raise ConfigError(f"--method {method.name} needs --key (its answer key file; "
                          "--nuggets for the nuggets)")
    if not method.judging.needs_key and key is not None:
        raise ConfigError(f"--method {method.name} judges without an answer key: leave out "
                          "--key/--nuggets")


def attach_sub_narratives(method: AnswerKeyMethod, inputs: Sequence[KeyInput],
                          grading: Grading) -> None:
    """`nuggetize --map-sub-narratives`: each topic's sub-narratives (from --narratives or
    --sub-narratives-from) go with its key input, and the method records where they came
    from; a topic without any is an error naming the file."""
    if grading.sub_narratives is None or grading.source is None:
        raise ConfigError("--map-sub-narratives maps nuggets to the sub-narratives of "
                          "--narratives FILE or --sub-narratives-from NUGGETS: give one")
    lacking = [i.qid for i in inputs if not grading.sub_narratives.get(i.qid)]
    if lacking:
        raise ConfigError(f"{grading.source['path']}: no sub-narratives for {len(lacking)} "
                          f"topics to nuggetize, e.g. {lacking[0]!r}")
    for item in inputs:
        item.sub_narratives = list(grading.sub_narratives[item.qid])
    method.take_sub_narratives(dict(grading.source))


def check_fill(fill: Path | None, grading: Grading, output: Path) -> None:
    """--fill qrels of another scale than the one graded: an error naming both files."""
    if fill is not None:
        common_scale([fill], grading.scale.name, f"{output} (--scale)")


def grading_inputs(grading: Grading) -> Sequence[Path]:
    """The sub-narratives file, among the inputs the sidecar records."""
    return [Path(grading.source["path"])] if grading.source else []


def make_grading(scale: str, narratives: Path | None, nuggets: Path | None) -> Grading:
    """The grading the options ask for (its sub-narratives read and checked later, per
    topic graded)."""
    source = sub_narrative_source(narratives, nuggets)
    if source is None:
        return Grading(get_scale(scale))
    return Grading(get_scale(scale), source[0], source[1])


def track_grading(track: Track) -> Grading:
    """The grading of a track's [relevance] table."""
    graded = track.relevance
    if graded is None:
        return DEFAULT_GRADING
    return make_grading(graded.scale, graded.narratives, graded.sub_narratives_from)
