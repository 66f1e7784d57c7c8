"""A judge measured against NIST's assessors on the same answers and the same nuggets (the way
castorini's RAGDoll and RAGElo report their judges).

- Labels: the 3 x 3 confusion matrix (human support / partial_support / not_support against
  the judge's, plus the labels the judge could not give: "unjudged", counted apart), exact
  agreement and Cohen's kappa over the nuggets both labelled (3 labels, and strict: support
  against the rest).
- Rankings: each answer scored both ways with the track's measures (measures/nuggets.py
  `label_scores`), then Kendall's tau-b for V_strict, V, W, A_strict and A at run level (run
  means over the answers of the sample) and at topic level (per topic, the runs that answered
  it ranked both ways; the mean of the defined per-topic taus).
- The human leaderboard: run means of the assessors' own scores over the same answers.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, ClassVar

from nuggetizer.formats.nist import HumanAnswer
from nuggetizer.labels import ASSIGNMENT_LABELS, UNJUDGED
from nuggetizer.measures.agreement import cohen_kappa
from nuggetizer.measures.correlation import kendall_tau
from nuggetizer.measures.nuggets import label_scores

RANKED = ("V_strict", "V", "W", "A_strict", "A")  # the measures whose rankings are compared
_CODE = {label: k for k, label in enumerate(ASSIGNMENT_LABELS)}


@dataclass
class JudgeAgreement:
    """A judge's labels against people's on the same items, the parts every comparison shares
    (nuggets here, citation support in compare/human_support.py): the confusion matrix,
    agreement, the rank correlations of `MEASURES` and both leaderboards."""

    LABELS: ClassVar[tuple[str, ...]]  # the people's labels, as the matrix's rows
    MEASURES: ClassVar[tuple[str, ...]]  # the measures ranked, the first sorting the boards
    STRICT: ClassVar[str]  # what the strict kappa sets apart

    answers: int
    topics: int
    runs: int
    confusion: dict[tuple[str, str], int]  # (human, judge) -> items
    exact: float
    kappa: float
    kappa_strict: float
    run_tau: dict[str, float]
    topic_tau: dict[str, float]
    topics_defined: dict[str, int]
    human_board: dict[str, dict[str, float]]  # run -> measure -> mean
    judge_board: dict[str, dict[str, float]]
    spend: dict[str, Any] = field(default_factory=dict)

    def confusion_tsv(self) -> str:
        """Rows: the people's label; columns: the judge's (and unjudged)."""
        cols = (*self.LABELS, UNJUDGED)
        lines = ["human\\judge\t" + "\t".join(cols)]
        for human in self.LABELS:
            lines.append(human + "\t" + "\t".join(str(self.confusion.get((human, c), 0))
                                                  for c in cols))
        return "\n".join(lines) + "\n"

    def tau_tsv(self) -> str:
        """`measure run_tau topic_tau topics` (topics: those whose tau is defined)."""
        lines = ["measure\trun_tau\ttopic_tau\ttopics"]
        for m in self.MEASURES:
            lines.append(f"{m}\t{fmt(self.run_tau[m])}\t{fmt(self.topic_tau[m])}\t"
                         f"{self.topics_defined[m]}")
        return "\n".join(lines) + "\n"

    def leaderboard_tsv(self, judge: bool = False) -> str:
        """The human (or the judge's) leaderboard over the sample, by the first measure."""
        board = self.judge_board if judge else self.human_board
        first = self.MEASURES[0]
        lines = ["run_id\t" + "\t".join(self.MEASURES)]
        for run in sorted(board, key=lambda r: (-board[r][first], r)):
            lines.append(run + "\t" + "\t".join(f"{board[run][m]:.4f}" for m in self.MEASURES))
        return "\n".join(lines) + "\n"

    def counts(self) -> dict[str, Any]:
        """What the comparison counted, beside the figures (as_dict's first keys)."""
        return {"answers": self.answers, "topics": self.topics, "runs": self.runs}

    def as_dict(self) -> dict[str, Any]:
        return {**self.counts(), "exact_agreement": num(self.exact),
                "cohen_kappa": num(self.kappa), "cohen_kappa_strict": num(self.kappa_strict),
                "confusion": {f"{h}|{j}": n for (h, j), n in sorted(self.confusion.items())},
                "run_tau": {m: num(v) for m, v in self.run_tau.items()},
                "topic_tau": {m: num(v) for m, v in self.topic_tau.items()},
                "topics_with_tau": self.topics_defined, "spend": self.spend}

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def headline(self) -> str:
        """The first line of what the command prints."""
        raise NotImplementedError

    def markdown(self) -> str:
        """What the command prints."""
        cols = (*self.LABELS, UNJUDGED)
        out = [self.headline(), "", f"exact agreement {fmt(self.exact)}, Cohen's kappa "
               f"{fmt(self.kappa)} (3 labels), {fmt(self.kappa_strict)} ({self.STRICT})", "",
               "| human \\ judge | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for human in self.LABELS:
            out.append(f"| {human} | " + " | ".join(
                str(self.confusion.get((human, c), 0)) for c in cols) + " |")
        out += ["", "| measure | run-level tau | topic-level tau (topics) |", "|---|---:|---:|"]
        out += [f"| {m} | {fmt(self.run_tau[m])} | {fmt(self.topic_tau[m])} "
                f"({self.topics_defined[m]}) |" for m in self.MEASURES]
        return "\n".join(out) + "\n"


@dataclass
class HumanAgreement(JudgeAgreement):
    """A judge's nugget labels against NIST's assessors (module docstring)."""

    LABELS = ASSIGNMENT_LABELS
    MEASURES = RANKED
    STRICT = "support vs the rest"

    nuggets: int = 0  # nuggets both labelled
    unjudged: int = 0  # nuggets the judge could not label
    missing: int = 0  # answers of the sample the judge has no judgment for
    nothing_judged: int = 0  # answers the judge labelled none of the nuggets of

    def counts(self) -> dict[str, Any]:
        return {**super().counts(), "nuggets": self.nuggets, "unjudged": self.unjudged,
                "missing": self.missing, "nothing_judged": self.nothing_judged}

    def headline(self) -> str:
        return (f"Judge against NIST's assessors: {self.answers} answers, {self.runs} runs, "
                f"{self.topics} topics, {self.nuggets} nugget labels"
                + (f" ({self.unjudged} unjudged by the judge, left out)" if self.unjudged
                   else "")
                + (f"; {self.missing} answers without a judgment, left out" if self.missing
                   else "")
                + (f"; {self.nothing_judged} answers with nothing judged by the judge, left "
                   "out of both boards" if self.nothing_judged else ""))


def fmt(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.4f}"


def num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _scores(importance: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    scores = label_scores(importance, labels)
    return {m: scores[m] for m in RANKED}


def _board(per_answer: Mapping[tuple[str, str], dict[str, float]], measures: Sequence[str]
           ) -> dict[str, dict[str, float]]:
    by_run: dict[str, list[dict[str, float]]] = defaultdict(list)
    for (run, _qid), scores in per_answer.items():
        by_run[run].append(scores)
    return {run: {m: fmean(s[m] for s in rows) for m in measures}
            for run, rows in by_run.items()}


@dataclass
class Rankings:
    """How the judge's scores rank the runs and each topic's answers against the humans':
    Kendall's tau-b per measure at run level (run means over the answers) and at topic level
    (the mean of the defined per-topic taus, `defined` of them), and both leaderboards."""

    run_tau: dict[str, float]
    topic_tau: dict[str, float]
    defined: dict[str, int]
    human_board: dict[str, dict[str, float]]
    judge_board: dict[str, dict[str, float]]


def rankings(human_scores: Mapping[tuple[str, str], dict[str, float]],
             judge_scores: Mapping[tuple[str, str], dict[str, float]],
             measures: Sequence[str]) -> Rankings:
    """The rankings of `measures` both ways ((run, topic) -> measure -> score, the same
    answers on both sides)."""
    human_board, judge_board = _board(human_scores, measures), _board(judge_scores, measures)
    runs = sorted(human_board)
    run_tau = {m: kendall_tau([human_board[r][m] for r in runs], [judge_board[r][m] for r in runs])
               for m in measures}
    by_topic: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key in human_scores:
        by_topic[key[1]].append(key)
    topic_tau: dict[str, float] = {}
    defined: dict[str, int] = {}
    for m in measures:
        taus = [kendall_tau([human_scores[k][m] for k in keys], [judge_scores[k][m] for k in keys])
                for keys in by_topic.values()]
        taus = [t for t in taus if not math.isnan(t)]
        topic_tau[m] = fmean(taus) if taus else math.nan
        defined[m] = len(taus)
    return Rankings(run_tau, topic_tau, defined, human_board, judge_board)


def human_agreement(answers: Sequence[HumanAnswer],
                    judged: Mapping[tuple[str, str], Sequence[str]]) -> HumanAgreement:
    """The judge's labels `judged` ((run, topic) -> labels in the topic's nugget order, UNJUDGED
    where it gave none) against the assessors' `answers` (module docstring). An answer the
    judge has no labels for is left out of everything and counted (`missing`); one it gave
    none of its nuggets a label is in the confusion matrix (its unjudged column) and left out
    of both boards and the rankings, as `score` leaves it out of its run's means, and counted
    (`nothing_judged`): it is never scored 0 on the judge's side."""
    confusion: Counter[tuple[str, str]] = Counter()
    human_codes: list[int] = []
    judge_codes: list[int] = []
    human_scores: dict[tuple[str, str], dict[str, float]] = {}
    judge_scores: dict[tuple[str, str], dict[str, float]] = {}
    missing = nothing = 0
    for answer in answers:
        labels = judged.get((answer.run_id, answer.qid))
        if labels is None:
            missing += 1
            continue
        if len(labels) != len(answer.labels):
            raise ValueError(f"run {answer.run_id!r} topic {answer.qid!r}: the judge labelled "
                             f"{len(labels)} nuggets, the assessors {len(answer.labels)}")
        for human, judge in zip(answer.labels, labels):
            confusion[human, judge] += 1
            if judge != UNJUDGED:
                human_codes.append(_CODE[human])
                judge_codes.append(_CODE[judge])
        if labels and all(label == UNJUDGED for label in labels):
            nothing += 1
            continue
        key = (answer.run_id, answer.qid)
        human_scores[key] = _scores(answer.importance, answer.labels)
        judge_scores[key] = _scores(answer.importance, labels)
    n = len(human_codes)
    exact = sum(h == j for h, j in zip(human_codes, judge_codes)) / n if n else math.nan
    full = _CODE["support"]
    ranked = rankings(human_scores, judge_scores, RANKED)
    return HumanAgreement(
        answers=len(human_scores), topics=len({qid for _run, qid in human_scores}),
        runs=len(ranked.human_board), confusion=dict(confusion), nuggets=n, unjudged=sum(
            v for (_h, j), v in confusion.items() if j == UNJUDGED),
        exact=exact, kappa=cohen_kappa(human_codes, judge_codes),
        kappa_strict=cohen_kappa([int(h == full) for h in human_codes],
                                 [int(j == full) for j in judge_codes]),
        run_tau=ranked.run_tau, topic_tau=ranked.topic_tau, topics_defined=ranked.defined,
        human_board=ranked.human_board, judge_board=ranked.judge_board, missing=missing,
        nothing_judged=nothing)
