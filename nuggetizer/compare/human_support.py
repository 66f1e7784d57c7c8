"""A judge's citation-support labels measured against NIST's assessors on the same answers, the
same sentences and the same cited segments (formats/nist_support.py; the support method,
methods/support/method.py, judging them again).

The pairs compared: each (sentence, cited segment) NIST's file lists that the judge judged too
(under the support method's `citations` setting: each sentence's first citation, as the 2024
track judged, or all). Apart from them are counted the pairs the judge did not judge (a later
citation under "first", or a sentence the file gives no text for: `uncovered`) and those NIST
left unjudged ("-1": `human_unjudged`, a hole on both sides, as castorini's RAGDoll keeps it).

- Labels: the 3 x 3 confusion matrix (NIST's full_support / partial_support / no_support
  against the judge's, plus the pairs the judge could not label, "unjudged", counted apart),
  exact agreement and Cohen's kappa over the pairs both labelled (3 labels, and strict: full
  support against the rest).
- Rankings: each answer scored both ways with the support method's measures (measures/support.py:
  support_recall and support_precision) over the compared pairs only, holes left out on both
  sides, a sentence without citations scoring 0 in recall; an answer with pairs but none
  labelled on one side is not scored (the method's rule), counted in `unscored`. Then Kendall's
  tau-b at run level (run means over the scored answers of the sample) and at topic level
  (compare/human.py `rankings`).
- The human leaderboard: run means of the assessors' own scores over the same answers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nuggetizer.compare.human import JudgeAgreement, rankings
from nuggetizer.formats.nist_support import HumanSupport
from nuggetizer.labels import SUPPORT_LABELS, UNJUDGED
from nuggetizer.measures.agreement import cohen_kappa
from nuggetizer.measures.support import MEASURES, support_scores

RANKED = MEASURES  # support_recall (the method's primary), support_precision
_CODE = {label: k for k, label in enumerate(SUPPORT_LABELS)}
# the judge's pairs of one answer: per sentence, (cited segment id, label) as it judged them
JudgedPairs = Sequence[Sequence[tuple[str | None, str]]]


@dataclass
class SupportAgreement(JudgeAgreement):
    """A judge's support labels against NIST's assessors (module docstring)."""

    LABELS = SUPPORT_LABELS
    MEASURES = RANKED
    STRICT = "full support vs the rest"

    pairs: int = 0  # pairs both labelled
    unjudged: int = 0  # pairs the judge could not label
    human_unjudged: int = 0  # pairs NIST left unjudged ("-1")
    uncovered: int = 0  # pairs of NIST's file the judge did not judge
    missing: int = 0  # answers of the sample the judge has no judgment for
    unscored: int = 0  # answers with nothing labelled on one side: out of the rankings

    def counts(self) -> dict[str, Any]:
        return {**super().counts(), "pairs": self.pairs, "unjudged": self.unjudged,
                "human_unjudged": self.human_unjudged, "uncovered": self.uncovered,
                "missing": self.missing, "unscored": self.unscored}

    def headline(self) -> str:
        apart = [f"{n} {what}" for n, what in (
            (self.unjudged, "unjudged by the judge"),
            (self.human_unjudged, "left unjudged by the assessors"),
            (self.uncovered, "not judged under the judge's citation rule or without text"))
            if n]
        return (f"Judge against NIST's assessors (citation support): {self.answers} answers, "
                f"{self.runs} runs, {self.topics} topics, {self.pairs} (sentence, citation) "
                "labels" + (f" ({', '.join(apart)}: left out)" if apart else "")
                + (f"; {self.missing} answers without a judgment, left out" if self.missing
                   else "")
                + (f"; {self.unscored} answers with nothing labelled on one side, not ranked"
                   if self.unscored else ""))


def _nothing(sentences: Sequence[Sequence[str]]) -> bool:
    """Pairs, none of them labelled: the answer has no score (the support method's rule)."""
    labels = [label for pairs in sentences for label in pairs]
    return bool(labels) and all(label == UNJUDGED for label in labels)


def support_agreement(answers: Sequence[HumanSupport],
                      judged: Mapping[tuple[str, str], JudgedPairs]) -> SupportAgreement:
    """The judge's pairs `judged` ((run, topic) -> per sentence, (segment id, label) of each
    pair it judged, UNJUDGED where it gave none) against the assessors' `answers` (module
    docstring). An answer the judge has no judgment for is left out of everything and counted
    (`missing`)."""
    confusion: Counter[tuple[str, str]] = Counter()
    human_codes: list[int] = []
    judge_codes: list[int] = []
    human_scores: dict[tuple[str, str], dict[str, float]] = {}
    judge_scores: dict[tuple[str, str], dict[str, float]] = {}
    missing = unscored = holes = uncovered = 0
    for answer in answers:
        key = (answer.run_id, answer.qid)
        sentences = judged.get(key)
        if sentences is None:
            missing += 1
            continue
        if len(sentences) != len(answer.citations):
            raise ValueError(f"run {answer.run_id!r} topic {answer.qid!r}: the judge has "
                             f"{len(sentences)} sentences, the assessors {len(answer.citations)}")
        human_side: list[list[str]] = []
        judge_side: list[list[str]] = []
        for cites, pairs in zip(answer.citations, sentences):
            theirs: dict[str | None, str] = {}
            for docid, label in pairs:
                theirs.setdefault(docid, label)
            human_here: list[str] = []
            judge_here: list[str] = []
            for reference, human in cites:
                if reference not in theirs:
                    uncovered += 1
                    continue
                judge = theirs[reference]
                if human is None:
                    holes += 1
                    human_here.append(UNJUDGED)
                    judge_here.append(UNJUDGED)
                    continue
                confusion[human, judge] += 1
                human_here.append(human)
                judge_here.append(judge)
                if judge != UNJUDGED:
                    human_codes.append(_CODE[human])
                    judge_codes.append(_CODE[judge])
            if cites and not human_here:  # cited, nothing compared: out of both measures
                human_here = judge_here = [UNJUDGED]
            human_side.append(human_here)
            judge_side.append(judge_here)
        if _nothing(human_side) or _nothing(judge_side):
            unscored += 1
            continue
        human_scores[key] = support_scores(human_side)
        judge_scores[key] = support_scores(judge_side)
    n = len(human_codes)
    exact = sum(h == j for h, j in zip(human_codes, judge_codes)) / n if n else math.nan
    full = _CODE["full_support"]
    ranked = rankings(human_scores, judge_scores, RANKED)
    return SupportAgreement(
        answers=len(human_scores) + unscored,
        topics=len({a.qid for a in answers if (a.run_id, a.qid) in judged}),
        runs=len({a.run_id for a in answers if (a.run_id, a.qid) in judged}),
        confusion=dict(confusion), pairs=n,
        unjudged=sum(v for (_h, j), v in confusion.items() if j == UNJUDGED),
        human_unjudged=holes, uncovered=uncovered, exact=exact,
        kappa=cohen_kappa(human_codes, judge_codes),
        kappa_strict=cohen_kappa([int(h == full) for h in human_codes],
                                 [int(j == full) for j in judge_codes]),
        run_tau=ranked.run_tau, topic_tau=ranked.topic_tau, topics_defined=ranked.defined,
        human_board=ranked.human_board, judge_board=ranked.judge_board, missing=missing,
        unscored=unscored)
