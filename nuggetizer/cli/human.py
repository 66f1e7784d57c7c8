"""`nuggetizer human-agreement`: a judge measured against NIST's assessors, in one command.

Reads NIST's published nugget assignment file (formats/nist.py), judges the same answers
against the same nuggets with any assessor (the `assign` step of the nuggets method: journalled,
resumable, dry-run, ensembles and samples), and reports label agreement and the rankings' Kendall
tau (compare/human.py), the tokens and cost, items per second, and the human leaderboard.

With `--support` it reads NIST's citation-support files instead (formats/nist_support.py),
judges the same sentences against the same cited segments (their texts from `--corpus`) with
the support method, and reports the same figures for its labels and its weighted precision
and recall (compare/human_support.py).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from nuggetizer.cli.common import (
    ANY,
    FOLDER,
    assessor_options,
    chosen_topics,
    dry_run_options,
    topic_options,
)
from nuggetizer.errors import ConfigError

if TYPE_CHECKING:
    from nuggetizer.formats.nist import HumanAnswer
    from nuggetizer.formats.nist_support import HumanSupport
    from nuggetizer.interface.base import Target
    from nuggetizer.types import NuggetList

if TYPE_CHECKING:
    from nuggetizer.compare.human import HumanAgreement
    from nuggetizer.compare.human_support import SupportAgreement


class OnTopic(Protocol):
    """An answer of NIST's files: the topic it answers."""

    @property
    def qid(self) -> str: ...


A = TypeVar("A", bound=OnTopic)


def chosen_answers(answers: list[A], topics: set[str] | None, sample: int | None,
                   seed: int) -> list[A]:
    """The answers of `topics` (all when None), then `sample` of them drawn by a generator
    seeded with `seed` (kept in file order); ConfigError when nothing is left."""
    kept = [a for a in answers if topics is None or a.qid in topics]
    if not kept:
        raise ConfigError("--only-topics: none of these topics is in the file")
    if sample is not None and sample < len(kept):
        drawn = set(random.Random(seed).sample(range(len(kept)), sample))
        kept = [a for k, a in enumerate(kept) if k in drawn]
    return kept


def keys_and_targets(answers: list[HumanAnswer]
                     ) -> tuple[dict[str, NuggetList], dict[str, dict[str, Target]]]:
    """The assessors' nuggets as each topic's key (their importance kept), and every answer as
    a target of one sentence (NIST's answer text, citations already dropped)."""
    from nuggetizer.formats.nist import topic_keys
    from nuggetizer.interface.base import Target
    from nuggetizer.types import Nugget, NuggetList, Sentence

    keys = {qid: NuggetList(qid=qid, query=a.query, nuggets=[
        Nugget(text=t, importance=i) for t, i in zip(a.texts, a.importance)])  # type: ignore[arg-type]
        for qid, a in topic_keys(answers).items()}
    targets: dict[str, dict[str, Target]] = {}
    for a in answers:
        targets.setdefault(a.run_id, {})[a.qid] = Target(
            a.run_id, a.qid, answer=a.answer, length=a.length, query=a.query,
            sentences=[Sentence(text=a.answer)], path=None, line=a.line)
    return keys, targets


def support_targets(answers: list[HumanSupport]) -> dict[str, dict[str, Target]]:
    """Every answer of NIST's support files as a target: its sentences, each citing its
    segments (by index into the answer's references, the segments in the order first cited).
    A sentence the file gives no text for cites nothing here: there is nothing to judge."""
    from nuggetizer.interface.base import Target
    from nuggetizer.types import Sentence

    targets: dict[str, dict[str, Target]] = {}
    for a in answers:
        references: list[str] = []
        index: dict[str, int] = {}
        sentences = []
        for text, cites in zip(a.texts, a.citations):
            cited: list[int | str] = []
            for reference, _label in (cites if text is not None else ()):
                if reference not in index:
                    index[reference] = len(references)
                    references.append(reference)
                cited.append(index[reference])
            sentences.append(Sentence(text=text or "", citations=cited))
        targets.setdefault(a.run_id, {})[a.qid] = Target(
            a.run_id, a.qid, answer=" ".join(t for t in a.texts if t), sentences=sentences,
            references=references, path=a.path, line=a.line)
    return targets


@click.command("human-agreement")
@click.argument("files", nargs=-1, required=True, type=ANY)
@click.option("--support", is_flag=True,
              help="FILES are NIST's citation-support judgments (TREC RAG 2024's "
                   "final.citation_judgments_*.jsonl; several are read together): judge the "
                   "cited segments with the support method and compare its labels")
@click.option("--corpus", type=ANY, default=None,
              help="with --support: segments JSONL (MS MARCO V2.1) holding the texts of the "
                   "segments the files cite")
@click.option("--allow-missing", is_flag=True,
              help="with --support: cited segments missing from --corpus stay unjudged "
                   "(counted) instead of an error")
@click.option("--sample", type=click.IntRange(min=1), default=None,
              help="judge this many answers, drawn at random (seeded) [default: all]")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of --sample")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="a setting of the method that judges: nuggets (assign_batch, render, "
                   "reasks), or support with --support (citations, reasks)")
@click.option("-o", "--output", required=True, type=FOLDER,
              help="folder: judge/ (the judge's assessments), agreement.json, confusion.tsv, "
                   "tau.tsv, human_leaderboard.tsv, judge_leaderboard.tsv")
@topic_options
@dry_run_options
@assessor_options
def human_agreement_command(files: tuple[Path, ...], support: bool, corpus: Path | None,
                            allow_missing: bool, sample: int | None, seed: int,
                            settings: tuple[str, ...], output: Path,
                            only_topics: tuple[str, ...], only_topics_file: Path | None,
                            **options: Any) -> None:
    """Judge the answers of NIST's nugget assignment file (TREC RAG 2024's
    nugget_assignment.20241218.jsonl) against the assessors' nuggets and measure the judge
    against the assessors: confusion matrix, exact agreement, Cohen's kappa, run- and
    topic-level Kendall tau for V_strict, V, W, A_strict and A, spend and speed. With
    --support, the same for citation support from NIST's support files: each answer sentence's
    cited segments judged by the support method, its labels and its weighted recall and
    precision (support_recall, support_precision) against the assessors'."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.nist import read_nist_assignments
    from nuggetizer.formats.nist_support import read_nist_support
    from nuggetizer.formats.track_inputs import read_passages
    from nuggetizer.formats.writing import write_text_atomic
    from nuggetizer.plan.inputs import cite_targets, cited_ids
    from nuggetizer.plan.steps import assign_plan
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with
    from nuggetizer.run.progress import spend_text
    from nuggetizer.run.provenance import write_sidecar
    from nuggetizer.scoring.engine import read_judged

    topics = chosen_topics(only_topics, only_topics_file)
    judged_dir = output / "judge"
    if support:
        if corpus is None:
            raise ConfigError("--support judges the cited segments: give --corpus, the "
                              "segments JSONL with the texts of those NIST's files cite")
        chosen = configured("support", settings)
        nist = chosen_answers(read_nist_support(files), topics, sample, seed)
        targets = support_targets(nist)
        every = not chosen.first_citation_only
        problems = cite_targets(targets, read_passages(corpus, cited_ids(targets, every)),
                                allow_missing, every)
        if problems:
            click.echo(f"note: {len(problems)} citations cannot be judged (unjudged, "
                       f"counted), e.g. {problems[0]}", err=True)
        keys = None
    else:
        if corpus is not None or allow_missing:
            raise ConfigError("--corpus and --allow-missing are for --support (the nugget "
                              "assignments carry the answers' texts)")
        if len(files) > 1:
            raise ConfigError("the nugget assignments are one file (NIST's "
                              "nugget_assignment.20241218.jsonl); several files are read "
                              "with --support")
        chosen = configured("nuggets", settings)
        answers = chosen_answers(read_nist_assignments(files[0]), topics, sample, seed)
        keys, targets = keys_and_targets(answers)
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, output)
    started = time.monotonic()
    summary = run_with(assessor, runner.run(assign_plan(chosen, keys, targets, judged_dir)))[0]
    if isinstance(runner, Dry):
        return
    seconds = time.monotonic() - started
    records = read_judged(chosen, [judged_dir])
    # scipy (Kendall's tau): when the command runs
    from nuggetizer.compare.human import human_agreement
    from nuggetizer.compare.human_support import support_agreement

    result: HumanAgreement | SupportAgreement
    if support:
        result = support_agreement(nist, {
            (j.run_id, j.qid): [[(p["docid"], p["label"]) for p in s["pairs"]]
                                for s in j.record["sentences"]] for j in records})
    else:
        result = human_agreement(answers, {(j.run_id, j.qid): [n.assignment for n in
                                                               j.record.nuggets]
                                           for j in records})
    fresh = summary.done
    result.spend = {"tokens": summary.tokens or {}, "cost": summary.cost, "seconds":
                    round(seconds, 3), "answers_judged": fresh, "answers_resumed":
                    summary.resumed, "items_per_second":
                    round(fresh / seconds, 3) if seconds > 0 and fresh else None,
                    "assessor": assessor.spec}
    for name, text in (("agreement.json", result.json()), ("confusion.tsv",
                       result.confusion_tsv()), ("tau.tsv", result.tau_tsv()),
                       ("human_leaderboard.tsv", result.leaderboard_tsv()),
                       ("judge_leaderboard.tsv", result.leaderboard_tsv(judge=True))):
        write_text_atomic(output / name, text)
        write_sidecar(output / name, list(files))
    click.echo(result.markdown())
    click.echo("Human leaderboard (NIST's assessors, the same answers):")
    click.echo(result.leaderboard_tsv())
    rate = result.spend["items_per_second"]
    click.echo(f"spend: {spend_text(summary.tokens or {}, summary.cost)}; {fresh} answers "
               f"judged in {seconds:.1f} s" + (f" ({rate} answers/s)" if rate else "")
               + (f", {summary.resumed} resumed" if summary.resumed else ""))
    click.echo(summary.line(assessor.stats) + f"; figures in {output}", err=True)
