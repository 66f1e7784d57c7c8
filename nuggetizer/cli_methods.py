"""The `--method crux|kpr|udcg` branches of the core commands (cli.py dispatches here)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.jsonl import iter_jsonl, write_text_atomic
from nuggetizer.formats.keys import read_key_topics, read_keys, read_reports
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.runs import read_run
from nuggetizer.formats.trec_run import read_trec_run, read_trec_runs
from nuggetizer.keys.base import AnswerKeyMethod, Target
from nuggetizer.leaderboard import leaderboard_tsv, write_tables
from nuggetizer.method_flow import (
    MethodTable,
    answer_targets,
    build_keys,
    context_targets,
    judge_targets,
    key_inputs,
    make_method,
    score_files,
)
from nuggetizer.pipeline import assessment_files
from nuggetizer.provenance import write_sidecar

METHOD_CHOICE = click.Choice(["nuggets", "crux", "kpr", "udcg"])


def parse_settings(method: str, pairs: Sequence[str]) -> dict[str, Any]:
    """`--set name=value` pairs typed after the method's config fields."""
    from nuggetizer.keys.base import method_class

    fields = {f.name: f for f in dataclasses.fields(method_class(method).config_type)}
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields:
            raise ConfigError(f"--set {pair!r}: expected NAME=VALUE with NAME one of "
                              f"{', '.join(fields)}")
        kind = type(fields[name].default)
        try:
            if kind is bool:
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                settings[name] = text.lower() in ("true", "1", "yes")
            else:
                settings[name] = kind(text)
        except ValueError:
            raise ConfigError(f"--set {pair!r}: {name} must be a {kind.__name__}") from None
    return settings


def build_method_keys(
    method: AnswerKeyMethod, assessor: Any, run: Any, topics: Path, output: Path,
    qrels: Path | None, corpus: Path | None, docs_runs: Sequence[Path], depth: int | None,
    min_grade: int, track: str | None = None,
) -> str:
    """Read the inputs, build the keys, return the summary line."""
    topic_map = read_key_topics(topics)
    if method.name == "crux":
        for topic in topic_map.values():
            if not topic.reference:
                raise InputError(topics, topic.line, f"topic {topic.qid!r} has no 'summary': "
                                 "CRUX writes its questions from the reference summary")
    inputs = key_inputs(
        topic_map, qrels=read_qrels(qrels) if qrels else (), corpus=corpus,
        docs_runs=[read_trec_run(p) for p in docs_runs], k=depth, min_grade=min_grade,
    )
    if method.name == "udcg" and not qrels and method.config.relevance == "qrels":
        raise ConfigError("UDCG relevance from qrels needs --qrels (or --set relevance=llm)")
    summary = run(assessor, build_keys(method, inputs, assessor, output, track))
    return summary.line(assessor.stats)


def _answer_runs(paths: Sequence[Path]) -> dict[str, dict[str, str]]:
    """Answer texts per run: TREC RAG answer JSONL, or plain-text reports (`response`)."""
    runs: dict[str, dict[str, str]] = {}
    for path in paths:
        first = next((obj for _, obj in iter_jsonl(path)), {})
        if isinstance(first.get("answer"), list) or "metadata" in first:
            run_id, answers = read_run(path)
            texts = {q: a.text for q, a in answers.items()}
        else:
            run_id, texts = read_reports(path)
        if run_id in runs:
            raise ConfigError(f"{path}: run id {run_id!r} is given twice")
        runs[run_id] = texts
    return runs


def method_targets(
    method: AnswerKeyMethod, runs: Sequence[Path], retrieval_runs: Sequence[Path],
    corpus: Path | None, depth: int, allow_missing: bool = False,
) -> dict[str, dict[str, Target]]:
    """Answer runs and retrieval runs as the targets the method judges."""
    if runs and "answer" not in method.targets:
        raise ConfigError(f"method {method.name} judges retrieval contexts: give "
                          "--retrieval-run (TREC runs), not --run")
    if retrieval_runs and "context" not in method.targets:
        raise ConfigError(f"method {method.name} judges answers: give --run, not "
                          "--retrieval-run")
    if not runs and not retrieval_runs:
        raise ConfigError("nothing to judge: give --run (answers) or --retrieval-run")
    targets = answer_targets(_answer_runs(runs))
    if retrieval_runs:
        if corpus is None:
            raise ConfigError("--retrieval-run needs --corpus for the passage texts")
        contexts = context_targets(read_trec_runs(retrieval_runs), corpus, depth,
                                   allow_missing)
        for run_id in contexts:
            if run_id in targets:
                raise ConfigError(f"run id {run_id!r} names an answer run and a retrieval run")
        targets.update(contexts)
    return targets


def judge_method(
    method: AnswerKeyMethod, assessor: Any, run: Any, key: Path, targets: dict,
    output: Path, track: str | None = None,
) -> str:
    """Judge the targets against the key file, return the summary line."""
    keys = read_keys(key, method.name)
    summary = run(assessor, judge_targets(method, keys, targets, assessor, output, track))
    return summary.line(assessor.stats)


def score_method(
    method: AnswerKeyMethod, key: Path, judgments: Sequence[Path], output: Path | None,
    per_topic: Path | None, started: float, diversity: Path | None = None,
) -> MethodTable:
    """Score judgment files (or folders) against the key; print the leaderboard."""
    keys = read_keys(key, method.name)
    files = assessment_files(list(judgments))
    if diversity is not None and method.name != "crux":
        raise ConfigError("--diversity-qrels needs --method crux")
    table = score_files(method, keys, files)
    write_tables(table, output, per_topic, method.measures)
    if diversity is not None:
        write_text_atomic(diversity, crux_diversity_qrels(keys, files, method.config.eta))
        write_sidecar(diversity, [key, *files])
    for path in (output, per_topic):
        if path is not None:
            write_sidecar(path, [key, *files])
    click.echo(leaderboard_tsv(table, method.measures).rstrip("\n").replace("\t", "  "))
    click.echo(
        f"score --method {method.name}: {len(table.means)} runs, {len(table.topics)} topics, "
        f"{sum(table.missing.values())} unanswered (scored 0), "
        f"{sum(table.unjudged.values())} unjudged items, {time.monotonic() - started:.1f} s",
        err=True,
    )
    return table


def crux_diversity_qrels(keys: dict, files: Sequence[Path], eta: int) -> str:
    """The judged pool of every topic (key and context ratings) as diversity qrels."""
    from nuggetizer.formats.keys import read_judgments
    from nuggetizer.keys.crux import topic_pool
    from nuggetizer.measures_crux import diversity_qrels

    judgments: dict[str, list[dict]] = {}
    for path in files:
        for record in read_judgments(path):
            judgments.setdefault(record["qid"], []).append(record)
    lines = []
    for qid, key in keys.items():
        pool, _ = topic_pool(key, judgments.get(qid, []))
        answerable = [q["answerable"] is not False for q in key["questions"]]
        lines += diversity_qrels(qid, pool, answerable, eta)
    return "\n".join(lines) + "\n"


def evaluate_method(track: Any, out: Path, assessor: Any, run: Any, started: float) -> None:
    """nuggetize, assign and score for a track config that names crux, kpr or udcg."""
    method = make_method(track.method, track.settings())
    key, judged = out / f"{method.name}_key.jsonl", out / "judgments"
    click.echo(build_method_keys(method, assessor, run, track.topics, key, track.qrels,
                                 track.corpus, track.docs_runs, track.depth, 1, track.name),
               err=True)
    k = getattr(method.config, "k", 5)
    targets = method_targets(method, track.runs, track.retrieval_runs, track.corpus, k,
                             track.allow_missing)
    click.echo(judge_method(method, assessor, run, key, targets, judged, track.name), err=True)
    score_method(method, key, [judged], out / "leaderboard.tsv", out / "per_topic.tsv", started)
    stats = assessor.stats
    click.echo(f"evaluate --method {method.name}: {stats.calls} LLM calls, {stats.cache_hits} "
               f"cache hits, {time.monotonic() - started:.1f} s; outputs in {out}", err=True)


__all__ = [
    "evaluate_method",
    "METHOD_CHOICE",
    "build_method_keys",
    "judge_method",
    "make_method",
    "method_targets",
    "parse_settings",
    "score_method",
]
