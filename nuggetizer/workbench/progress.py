"""The organizer's view of a project as the work goes: progress per assessor, topic and task
(items done, items left, seconds per item), and agreement on the items judged twice
(compare/judges.py: Cohen's kappa and Krippendorff's alpha per task and assessor pair), the
LLM counted as one more judge on the same questions."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.compare.judges import JudgesAgreement, judges_agreement, label_pair, overall_alpha
from nuggetizer.workbench.store import Account, Assignment, Item, Judgment, Project
from nuggetizer.workbench.tasks import ORDINAL, answered

LLM = "LLM"


@dataclass
class Progress:
    """Rows of (group, assigned, done, left, median seconds per done item)."""

    by_assessor: list[tuple[str, str, int, int, int, float | None]]
    by_topic: list[tuple[str, str, int, int, int]]


def progress(db: Session, project: Project) -> Progress:
    """Done and left per (assessor, task) and (topic, task)."""
    names = {a.id: a.name for a in db.scalars(select(Account))}
    items = {i.id: i for i in db.scalars(select(Item).where(Item.project_id == project.id))}
    values = {(j.item_id, j.account_id): j for j in db.scalars(
        select(Judgment).join(Item).where(Item.project_id == project.id))}
    per_person: dict[tuple[str, str], list[Any]] = defaultdict(lambda: [0, 0, []])
    per_topic: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for a in db.scalars(select(Assignment).join(Item).where(Item.project_id == project.id)):
        item = items[a.item_id]
        j = values.get((a.item_id, a.account_id))
        done = answered(item.task, item.shown, j.value if j else None)
        row = per_person[(names[a.account_id], item.task)]
        row[0] += 1
        row[1] += done
        if done and j is not None:
            row[2].append(j.seconds)
        topic = per_topic[(item.qid, item.task)]
        topic[0] += 1
        topic[1] += done
    return Progress(
        [(who, task, n, d, n - d, statistics.median(s) if s else None)
         for (who, task), (n, d, s) in sorted(per_person.items())],
        [(qid, task, n, d, n - d) for (qid, task), (n, d) in sorted(per_topic.items())])


def agreement(db: Session, project: Project) -> dict[str, JudgesAgreement]:
    """Per task: every pair of judges (assessors, and the LLM) over the questions both
    labelled, kappa and ordinal alpha; alpha over all."""
    names = {a.id: a.name for a in db.scalars(select(Account))}
    items = {i.id: i for i in db.scalars(select(Item).where(Item.project_id == project.id))}
    by_task: dict[str, dict[str, dict[tuple[int, str], int]]] = defaultdict(
        lambda: defaultdict(dict))
    judges_of: dict[int, set[str]] = defaultdict(set)
    for j in db.scalars(select(Judgment).join(Item).where(Item.project_id == project.id)):
        item = items[j.item_id]
        judges_of[item.id].add(names[j.account_id])
        scale = ORDINAL.get(item.task, {})
        labels = _labels(item.task, j.value)
        for key, label in labels.items():
            if label in scale:
                by_task[item.task][names[j.account_id]][(item.id, key)] = scale[label]
    for item in items.values():
        if item.suggestion and judges_of.get(item.id):
            scale = ORDINAL.get(item.task, {})
            for key, label in item.suggestion.items():
                if label in scale:
                    by_task[item.task][LLM][(item.id, key)] = scale[label]
    result = {}
    for task, judged in sorted(by_task.items()):
        people = sorted(judged, key=lambda n: (n == LLM, n))
        if len(people) < 2:
            continue
        tables = [judged[p] for p in people]
        thresholds = [1, 2] if task in ("assign", "support", "rubric") else [1]
        result[task] = judges_agreement(people, tables, label_pair(tables, thresholds),
                                        partial(overall_alpha, thresholds=thresholds),
                                        what="questions")
    return result


def _labels(task: str, value: dict[str, Any]) -> dict[str, str]:
    """{question: label} of a saved value (a post-edit: each nugget's importance by position,
    which only agrees where the list kept its order)."""
    if task == "postedit":
        return {f"n{k}": n.get("importance", "") for k, n in enumerate(value.get("nuggets", []))}
    return {k: v for k, v in value.items() if not k.startswith("span:") and isinstance(v, str)}
