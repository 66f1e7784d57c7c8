"""`--dry-run` of the LLM steps: run the step on a DryAssessor into a throw-away folder and say
what it would send (nuggetizer/flow/dryrun.py)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer.cli.common import run_with
from nuggetizer.cli.grading import attach_sub_narratives, mapping_estimate
from nuggetizer.cli.steps import key_inputs_for, read_pool, restrict_topic_map
from nuggetizer.flow.dryrun import (
    DryAssessor,
    Ledger,
    Prices,
    importance_estimate,
    report_lines,
)
from nuggetizer.flow.relevance import grade_pool
from nuggetizer.flow.scales import DEFAULT_GRADING, Grading
from nuggetizer.flow.steps import build_keys
from nuggetizer.formats.qrels import qrels_text
from nuggetizer.formats.topics import read_topics
from nuggetizer.types import Qrel

T = TypeVar("T")
NUGGETIZE_NOTE = ("nugget creation is iterative: the first window of each topic is counted "
                  "exactly, later windows as a lower bound (rendered without the nuggets "
                  "created before them); importance calls are estimated, not rendered")
ASSIGN_NOTE = ("exact for answers that parse at once (a re-ask is an extra call a dry run "
               "cannot see)")


def count(dry: DryAssessor, work: Coroutine[Any, Any, T]) -> tuple[Ledger, T]:
    """Run `work` on the dry assessor: what it counted, and what `work` returned."""
    before = dry.counted()
    done = run_with(dry, work)
    return dry.counted().minus(before), done


def dry_step(dry: DryAssessor, work: Callable[[Path], Coroutine[Any, Any, Any]]) -> Ledger:
    """Run `work(tmp_folder)` on the dry assessor; what it counted (nothing written)."""
    with tempfile.TemporaryDirectory(prefix="nuggetizer-dry-") as tmp:
        return count(dry, work(Path(tmp)))[0]


def echo_report(step: str, ledger: Ledger, dry: DryAssessor, prices: Prices,
                note: str = "") -> None:
    for line in report_lines(step, ledger, dry.tokenizer, prices, note):
        click.echo(line, err=True)


GRADE_NOTE = "one call per pooled (topic, passage) pair not judged in --fill: exact"
KEYS_EXACT = "keys from the grades the cache holds: " + NUGGETIZE_NOTE
KEYS_BOUND = ("keys depend on grades not made yet: counted as if every pooled passage were "
              "graded {top} (an upper bound on the passages read); " + NUGGETIZE_NOTE)


def dry_grade_then_build(method: Any, dry: DryAssessor, prices: Prices, *, topics: Path,
                         run_paths: Sequence[Path], retrieval_runs: Sequence[Path] = (),
                         depth: int = 20, cited_only: bool = False, corpus: Path | None,
                         fill: Path | None, reasks: int, allow_missing: bool = False,
                         min_grade: int | None = None, only: set[str] | None = None,
                         track: str | None = None, grading: Grading = DEFAULT_GRADING,
                         map_sub_narratives: bool = False) -> Ledger:
    """`--dry-run` of the relevance step and, with a `method`, of the keys built from its
    grades (`--grade-pool`, a track's [relevance]): the grading is counted exactly; the keys
    exactly when the cache holds every grade, else as an upper bound (every pooled passage
    graded the scale's top grade). Both in one throw-away folder; what they counted, summed."""
    topic_map = restrict_topic_map(read_topics(topics), only, str(topics))
    pool, kept = read_pool(topic_map, run_paths, retrieval_runs, depth, cited_only, fill)
    with tempfile.TemporaryDirectory(prefix="nuggetizer-dry-") as tmp:
        graded_path = Path(tmp) / "graded.qrels"
        grading_ledger, graded = count(dry, grade_pool(topic_map, pool, corpus, dry, graded_path,
                                                       None, kept, reasks, allow_missing,
                                                       grading))
        echo_report(f"relevance ({pool.size} pooled pairs of {len(pool.docids)} topics)",
                    grading_ledger, dry, prices, GRADE_NOTE)
        if method is None:
            return grading_ledger
        rows = list(graded.assessed.rows)  # the grades the cache held, and --fill's
        judged = {(q.qid, q.docid) for q in rows}
        top = grading.scale.grades[-1]
        rows += [Qrel(qid=qid, docid=d, grade=top) for qid, ds in pool.docids.items()
                 for d in ds if (qid, d) not in judged]
        if not rows:
            return grading_ledger
        graded_path.write_text(qrels_text(rows), encoding="utf-8")
        inputs, skipped = key_inputs_for(method, topics=topics, qrels=graded_path,
                                         corpus=corpus, min_grade=min_grade)
        if only is not None:
            inputs = [i for i in inputs if i.qid in only]
        if map_sub_narratives:
            attach_sub_narratives(method, inputs, grading)
        keys, _ = count(dry, build_keys(method, inputs, dry, Path(tmp) / "keys.jsonl", track,
                                        skipped))
    keys.estimated_calls += importance_estimate(method, len(inputs))
    if map_sub_narratives:
        keys.estimated_calls += mapping_estimate(method, len(inputs))
    echo_report(f"nuggetize --method {method.name} ({len(inputs)} topics)", keys, dry, prices,
                KEYS_EXACT if grading_ledger.calls == 0 else
                KEYS_BOUND.format(top=grading.scale.grades[-1]))
    return grading_ledger.plus(keys)
