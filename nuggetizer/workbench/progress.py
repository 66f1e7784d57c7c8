"""The organizer's view of a project as the work goes: progress per assessor, topic and task
(items done, items left, seconds per item), and agreement on the items judged twice
(compare/judges.py: Cohen's kappa and Krippendorff's alpha per task and assessor pair), the
LLM counted as one more judge on the same questions. A post-edit's importances compare nugget
by nugget (by the id each nugget keeps through edits), and only those a person chose."""

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
    """Rows of (group, task, assigned, done, left, median seconds per done item, hours spent
    on all of them)."""

    by_assessor: list[tuple[str, str, int, int, int, float | None, float]]
    by_topic: list[tuple[str, str, int, int, int, float | None, float]]


def _rows(groups: dict[tuple[str, str], list[Any]]
          ) -> list[tuple[str, str, int, int, int, float | None, float]]:
    return [(who, task, n, d, n - d, statistics.median(s) if s else None, spent / 3600)
            for (who, task), (n, d, s, spent) in sorted(groups.items())]


def progress(db: Session, project: Project) -> Progress:
    """Done and left per (assessor, task) and (topic, task), with time per item."""
    names = {a.id: a.name for a in db.scalars(select(Account))}
    items = {i.id: i for i in db.scalars(select(Item).where(Item.project_id == project.id))}
    values = {(j.item_id, j.account_id): j for j in db.scalars(
        select(Judgment).join(Item).where(Item.project_id == project.id))}
    per_person: dict[tuple[str, str], list[Any]] = defaultdict(lambda: [0, 0, [], 0.0])
    per_topic: dict[tuple[str, str], list[Any]] = defaultdict(lambda: [0, 0, [], 0.0])
    order = {q: k for k, q in enumerate(project.settings.get("topics", []))}
    for a in db.scalars(select(Assignment).join(Item).where(Item.project_id == project.id)):
        item = items[a.item_id]
        j = values.get((a.item_id, a.account_id))
        done = answered(item.task, item.shown, j.value if j else None)
        for row in (per_person[(names[a.account_id], item.task)],
                    per_topic[(item.qid, item.task)]):
            row[0] += 1
            row[1] += done
            if j is not None:
                row[3] += j.seconds
                if done:
                    row[2].append(j.seconds)
    by_topic = _rows(per_topic)
    by_topic.sort(key=lambda r: (order.get(r[0], len(order)), r[0], r[1]))
    return Progress(_rows(per_person), by_topic)


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
    """{question: label} of a saved value; a post-edit's: the importance of each nugget a
    person chose it for, by the nugget's id (pre-filled importances are nobody's label)."""
    if task == "postedit":
        return {str(n["id"]): n.get("importance", "") for n in value.get("nuggets", [])
                if n.get("set") and n.get("id")}
    return {k: v for k, v in value.items() if not k.startswith("span:") and isinstance(v, str)}
