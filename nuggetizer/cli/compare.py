"""Comparing evaluations: `agreement` (correlations of two or more evaluations, the TREC
AutoJudge meta-evaluation) and `significance` (paired tests between runs), of any method's
judgments (`--method`), per-topic TSVs or leaderboards."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.cli.common import ANY, FILE, LENIENT, method_options
from nuggetizer.errors import InputError

if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod

if TYPE_CHECKING:  # compare/agreement.py is imported when a command runs
    from nuggetizer.compare.agreement import Scores

MEASURE = click.option("--measure", default=None,
                       help="measure to compare (any leaderboard column) [default: the primary "
                            "measure of --method: V_strict]")
KEY = click.option("--nuggets", "--key", "nuggets", type=ANY, default=None,
                   help="answer key of --method: topics scored (else seen)")


def _given(chosen: AnswerKeyMethod) -> AnswerKeyMethod | None:
    """The method scoring judgments when --method was given; None by default (the judgments
    then say whose they are: battles, else the default method's)."""
    source = click.get_current_context().get_parameter_source("method")
    return None if source is click.core.ParameterSource.DEFAULT else chosen


def _keys(method: AnswerKeyMethod, nuggets: Path | None, lenient: bool
          ) -> dict[str, Any] | None:
    return method.read_keys(nuggets, lenient) if nuggets else None


@click.command("agreement")
@click.argument("inputs", nargs=-1, required=True, type=ANY)
@MEASURE
@click.option("--measure-a", default=None,
              help="the measure of A, to correlate two different measures (e.g. V_strict "
                   "against support_recall) [default: --measure]")
@click.option("--measure-b", default=None, help="the measure of B [default: --measure]")
@KEY
@method_options
@click.option("-o", "--output", type=FILE, default=None, help="TSV table")
@click.option("--markdown", type=FILE, default=None, help="markdown table")
@click.option("--latex", type=FILE, default=None, help="LaTeX (booktabs) tables")
@click.option("--plot", type=FILE, default=None, help="scatter plot PNG")
@click.option("--top-k", type=int, default=10, show_default=True,
              help="Kendall@k: tau over the top k runs of A")
@click.option("--meta-output", type=FILE, default=None,
              help="TSV of the run-level meta-evaluation (measure value)")
@LENIENT
def agreement_command(inputs: tuple[Path, ...], measure: str | None, measure_a: str | None,
                      measure_b: str | None, nuggets: Path | None, method: str,
                      settings: tuple[str, ...], output: Path | None,
                      markdown: Path | None, latex: Path | None, plot: Path | None,
                      top_k: int, meta_output: Path | None, lenient: bool) -> None:
    """Kendall's tau (run level, all pairs, per-topic mean) and Spearman between A and B
    (without B: between two measures of A, e.g. the per-topic TSV of a several-method
    evaluate); at run level with A the reference, also tau_AP, tau_AP-b, Kendall@k and Pearson
    (the TREC AutoJudge meta-evaluation). A and B: assessments, our TSVs, or AutoJudge
    leaderboards; judgments are scored by --method. Of more evaluations (A B C ...): every
    pair, Krippendorff's alpha over all of them, and with nugget assessments their agreement
    on the labels (kappa, alpha)."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.compare.agreement import compare, load_scores, scale_of, scatter_png
    from nuggetizer.formats.writing import write_text_atomic

    if top_k < 1:
        raise click.BadParameter("must be at least 1", param_hint="--top-k")
    chosen = configured(method, settings)
    measure = measure or chosen.primary
    keys = _keys(chosen, nuggets, lenient)
    if len(inputs) > 2:
        _many_agreement(inputs, measure, (measure_a, measure_b, plot, meta_output),
                        chosen, keys, output, markdown, top_k, lenient)
        return
    a, b = inputs[0], (inputs[1] if len(inputs) > 1 else None)
    first, second = measure_a or measure, measure_b or measure
    if b is None and first == second:
        raise click.UsageError("give B, or two different measures of A (--measure-a, "
                               "--measure-b)")
    sa = load_scores([a], first, keys=keys, lenient=lenient, method=_given(chosen))
    sb = load_scores([b or a], second, keys=keys, lenient=lenient, method=_given(chosen))
    label = first if first == second else f"{first} vs {second}"
    result = compare(sa, sb, label, k=top_k, scales=(scale_of(first), scale_of(second)))
    result.meta.update(confidence_figures(
        sa, sb, lambda m: load_scores([a], m, keys=keys, lenient=lenient,
                                      method=_given(chosen)),
        lambda m: load_scores([b or a], m, keys=keys, lenient=lenient,
                              method=_given(chosen)), first, second))
    if meta_output:
        write_text_atomic(meta_output, result.meta_tsv())
    if output:
        write_text_atomic(output, result.tsv())
    if markdown:
        write_text_atomic(markdown, result.markdown())
    if latex:
        write_text_atomic(latex, result.latex())
    if plot:
        scatter_png(sa, sb, result, plot, (first, second))
    click.echo(result.markdown(), nl=False)


def interval_of(scores: Scores, measure: str, load: Callable[[str], Scores]
                ) -> dict[str, tuple[float, float]]:
    """A ranking's intervals: those its source gives beside a `X_score` measure (`X_low`,
    `X_high`: battles' bootstrap over topics), else a bootstrap of the run means over the
    per-topic scores (compare/separability.py); {} when neither is known."""
    from nuggetizer.compare.separability import topic_intervals

    if measure.endswith("_score"):
        stem = measure[: -len("_score")]
        try:
            low, high = load(f"{stem}_low"), load(f"{stem}_high")
        except InputError:
            pass
        else:
            return {r: (low.means[r], high.means[r]) for r in scores.means
                    if r in low.means and r in high.means}
    if not scores.per_topic:
        return {}
    runs = sorted(r for r in scores.means if scores.per_topic.get(r))
    return topic_intervals(scores.per_topic, runs)


def confidence_figures(a: Scores, b: Scores, load_a: Callable[[str], Scores],
                       load_b: Callable[[str], Scores], measure_a: str, measure_b: str
                       ) -> dict[str, float]:
    """Separability of A and B and their agreement with confidence (A the reference), where
    their intervals are known."""
    from nuggetizer.compare.separability import (
        agreement_with_confidence,
        pair_agreement,
        separability,
    )

    ia, ib = interval_of(a, measure_a, load_a), interval_of(b, measure_b, load_b)
    figures: dict[str, float] = {}
    if ia:
        figures["separability_a"] = separability(ia)
    if ib:
        figures["separability_b"] = separability(ib)
    if ia and ib:
        figures["agreement_with_confidence"] = agreement_with_confidence(ia, ib)
    if ia:
        figures["pair_agreement"] = pair_agreement(ia, b.means)
    return figures


def _many_agreement(inputs: tuple[Path, ...], measure: str, two_only: tuple[object, ...],
                    method: AnswerKeyMethod, keys: dict[str, Any] | None,
                    output: Path | None, markdown: Path | None, top_k: int, lenient: bool
                    ) -> None:
    """`agreement` of three or more evaluations (compare/many.py)."""
    from nuggetizer.compare.agreement import load_scores
    from nuggetizer.compare.many import (
        LABEL_LABELS,
        SCORE_LABELS,
        is_assessments,
        label_agreement,
        score_agreement,
    )
    from nuggetizer.formats.writing import write_text_atomic

    if any(option is not None for option in two_only):
        raise click.UsageError("--measure-a, --measure-b, --plot and --meta-output compare two "
                               "evaluations: give A and B only")
    scores = score_agreement([load_scores([p], measure, keys=keys, lenient=lenient,
                                          method=_given(method)) for p in inputs], measure,
                             top_k)
    texts = [f"On {measure}:\n\n" + scores.markdown(SCORE_LABELS)]
    tables = [scores.tsv()]
    if all(is_assessments(p) for p in inputs):
        labels = label_agreement(inputs, lenient)
        texts.append("On the assignment labels (not_support 0, partial_support 1, support 2):"
                     "\n\n" + labels.markdown(LABEL_LABELS))
        tables.append(labels.tsv("labels.", header=False))
    if output:
        write_text_atomic(output, "".join(tables))
    if markdown:
        write_text_atomic(markdown, "\n".join(texts))
    click.echo("\n".join(texts), nl=False)


@click.command("significance")
@click.argument("inputs", nargs=-1, required=True, type=ANY)
@MEASURE
@click.option("--test", type=click.Choice(["paired", "tukey"]), default="paired",
              show_default=True,
              help="paired: a paired t-test and randomization test of each pair, corrected; "
                   "tukey: the randomised Tukey HSD test of all runs at once (one set of "
                   "permutations for every pair), with the groups as letters")
@click.option("--correction", type=click.Choice(["holm", "bonferroni", "none"]), default="holm",
              show_default=True, help="of the paired tests")
@click.option("--trials", type=click.IntRange(min=100), default=10000, show_default=True,
              help="randomization trials: sign flips (paired; exact for <= 16 topics), "
                   "permutations B (tukey)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True)
@KEY
@method_options
@click.option("-o", "--output", type=FILE, default=None, help="TSV table")
@click.option("--markdown", type=FILE, default=None, help="markdown table")
@LENIENT
def significance_command(inputs: tuple[Path, ...], measure: str | None, test: str,
                         correction: str, trials: int, seed: int, alpha: float,
                         nuggets: Path | None, method: str, settings: tuple[str, ...],
                         output: Path | None, markdown: Path | None, lenient: bool) -> None:
    """Paired t-test and randomization test between every pair of runs, corrected; or the
    randomised Tukey HSD test of all runs at once (--test tukey)."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.compare.agreement import load_scores
    from nuggetizer.compare.significance import (
        pairwise,
        table_markdown,
        table_tsv,
        tukey,
        tukey_markdown,
        tukey_tsv,
    )
    from nuggetizer.formats.writing import write_text_atomic

    chosen = configured(method, settings)
    measure = measure or chosen.primary
    scores = load_scores(list(inputs), measure, keys=_keys(chosen, nuggets, lenient),
                         lenient=lenient, method=_given(chosen))
    if scores.per_topic is None:
        raise InputError(inputs[0], None, "a leaderboard has no per-topic values: give "
                         "assessments or a per-topic TSV")
    if test == "tukey":
        started = time.process_time()
        result = tukey(scores.per_topic, measure, trials=trials, seed=seed, alpha=alpha)
        click.echo(f"significance: Tukey HSD, B = {trials:,} permutations, "
                   f"{time.process_time() - started:.1f} s CPU", err=True)
        md, tsv = tukey_markdown(result), tukey_tsv(result)
    else:
        tests = pairwise(scores.per_topic, correction=correction, trials=trials, seed=seed)
        topics = len(set.intersection(*(set(v) for v in scores.per_topic.values())))
        md, tsv = table_markdown(tests, measure, topics, correction, alpha), \
            table_tsv(tests, alpha)
    if output:
        write_text_atomic(output, tsv)
    if markdown:
        write_text_atomic(markdown, md)
    click.echo(md, nl=False)
