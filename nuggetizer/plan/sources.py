"""What a step makes of its inputs before any LLM call, checked: what to read for the methods
(`wanted_to_build`, `wanted_to_judge`: read by formats/track_inputs.py), then, from the inputs
read, the topics chosen, the passages a key is built from, the targets to judge, and the
sub-narratives of a 0-4 grading. No input file is read here (`check_fill` reads the scale the
--fill qrels' provenance sidecar declares)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from nuggetizer.errors import ConfigError
from nuggetizer.formats.track_inputs import TrackInputs, Wanted
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


def wanted_to_build(method: AnswerKeyMethod, files: Wanted, min_grade: int | None = None
                    ) -> Wanted:
    """`files` with what building the method's keys reads of them (the passages the qrels
    grade >= its threshold, or the first `depth` of each --docs-run); what it needs and is
    not given is an error naming the option."""
    given = {"qrels": files.qrels, "corpus": files.corpus, "docs_runs": files.docs_runs or None}
    for need in method.judging.needs - {"reference"}:
        if not given.get(need):
            raise ConfigError(f"--method {method.name} needs --{need.replace('_', '-')}")
    if files.docs_runs and "docs_runs" not in method.judging.reads:
        raise ConfigError(f"--docs-run: --method {method.name} does not build its keys from "
                          "retrieved passages")
    demand = files.passages
    lowest = min(g for g in (threshold(method, min_grade), demand.judged) if g is not None)
    return replace(files, passages=replace(demand, judged=lowest, docs_depth=files.depth))


def wanted_to_judge(methods: Sequence[AnswerKeyMethod], files: Wanted) -> Wanted:
    """`files` with what judging reads of them for the methods: the passages answers cite
    (a method that reads citations), the first passages of each retrieval run (a method that
    judges contexts), citations outside the references kept (--allow-missing). One method
    judges what it is given: runs of a kind it does not judge, or none, are an error."""
    if len(methods) == 1:
        method = methods[0]
        if files.runs and "answer" not in method.targets:
            raise ConfigError(f"method {method.name} judges retrieval contexts: give "
                              "--retrieval-run (TREC runs), not --run")
        if files.retrieval_runs and "context" not in method.targets:
            raise ConfigError(f"method {method.name} judges answers: give --run, not "
                              "--retrieval-run")
        if not files.runs and not files.retrieval_runs:
            raise ConfigError("nothing to judge: give --run (answers) or --retrieval-run")
    citing = any(m.judging.citations for m in methods)
    retrieved = max([files.depth or m.depth for m in methods if "context" in m.targets
                     and files.retrieval_runs], default=0)
    demand = files.passages
    return replace(files, keep_unresolved=files.allow_missing and citing,
                   passages=replace(demand, references=demand.references or citing,
                                    retrieved=max(retrieved, demand.retrieved)))


def key_inputs_for(method: AnswerKeyMethod, inputs: TrackInputs, min_grade: int | None = None
                   ) -> tuple[list[KeyInput], int]:
    """What the method's keys are built from, checked: the inputs of every topic read, and
    how many topics have no passage to build from."""
    topics, path = inputs.topics or {}, inputs.wanted.topics
    assert path is not None, "the topics are read before keys are built"
    method.check_inputs(topics, path, inputs.wanted.qrels is not None)
    return key_inputs(topics, inputs, threshold(method, min_grade),
                      method.judging.skip_without_documents)


def make_targets(method: AnswerKeyMethod, inputs: TrackInputs) -> dict[str, dict[str, Target]]:
    """The answer runs and retrieval runs of `inputs` that the method judges, as its targets:
    report runs checked against their track's rules (formats/track_rules.py) when read, and
    cut to their length limit where the track cuts before scoring."""
    wanted = inputs.wanted
    targets: dict[str, dict[str, Target]] = {}
    if inputs.answers and "answer" in method.targets:
        targets = _answer_targets(method, inputs)
    if inputs.retrieval and "context" in method.targets:
        if wanted.corpus is None:
            raise ConfigError("--retrieval-run needs --corpus for the passage texts")
        contexts = context_targets(inputs.retrieval, inputs.passages,
                                   wanted.depth or method.depth, wanted.allow_missing)
        for run_id in contexts:
            if run_id in targets:
                raise ConfigError(f"run id {run_id!r} names an answer run and a retrieval run")
        targets.update(contexts)
    return targets


def _answer_targets(method: AnswerKeyMethod, inputs: TrackInputs
                    ) -> dict[str, dict[str, Target]]:
    """The answers as targets, with what the method reads of them (the cited passages), and
    what they break of the track's rules said once."""
    wanted = inputs.wanted
    if (warnings := inputs.rule_warnings):
        click.echo(f"note: {len(warnings)} warnings of the track rules (`nuggetizer validate "
                   f"--track-rules {wanted.track_rules}` lists them), e.g. {warnings[0]}",
                   err=True)
    if (repeats := inputs.repeated):
        then = "its passage is judged once" if method.judging.citations else \
            f"--method {method.name} reads no citations"
        click.echo(f"warning: {len(repeats)} citations name a reference their answer object "
                   f"already cites ({then}), e.g. {repeats[0]}", err=True)
    answers, count = inputs.cut_answers()
    if count:
        click.echo(f"note: {count} reports over their length limit are cut to it before "
                   "judging, as their track scores them [ragtime length]", err=True)
    targets = answer_targets(answers)
    if method.judging.citations:
        if wanted.corpus is None and not carry_documents(targets):
            raise ConfigError(f"--method {method.name} reads the cited passages: give --corpus "
                              "(or report runs that carry them in `documents`)")
        problems = cite_targets(targets, inputs.passages, wanted.allow_missing,
                                every=not method.first_citation_only)
        if problems:
            click.echo(f"note: {len(problems)} citations cannot be judged (unjudged, counted), "
                       f"e.g. {problems[0]}", err=True)
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


def make_grading(scale: str, source: tuple[dict[str, list[str]], dict[str, str]] | None
                 ) -> Grading:
    """The grading the options ask for, with the sub-narratives read (checked later, per
    topic graded) and where they came from, if any."""
    if source is None:
        return Grading(get_scale(scale))
    return Grading(get_scale(scale), source[0], source[1])


def track_grading(track: Track, inputs: TrackInputs) -> Grading:
    """The grading of a track's [relevance] table, its sub-narratives among the inputs."""
    graded = track.relevance
    if graded is None:
        return DEFAULT_GRADING
    return make_grading(graded.scale, inputs.sub_narratives)
