"""Adjudication: every question that two or more assessors, each having finished the item,
labelled differently, shown with each label and the LLM's, and the organizer's decision of
it (the label the export then carries, with who decided and when)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError
from nuggetizer.workbench.exports import adjudications, judged_items
from nuggetizer.workbench.store import Account, Adjudication, Item, Project, audit, now
from nuggetizer.workbench.tasks import answered


@dataclass
class Disagreement:
    """One question the assessors of an item labelled differently."""

    item: Item
    question: dict[str, Any]
    labels: dict[str, str]  # assessor -> label
    llm: str | None
    settled: tuple[str, str, str] | None  # (label, organizer, when), once decided


def disagreements(db: Session, project: Project) -> list[Disagreement]:
    """Every question where the assessors who finished an item differ, in queue order (post-
    edits, lists rather than labels, are compared by agreement only)."""
    settled = adjudications(db, project)
    found = []
    for item, judged in judged_items(db, project):
        if item.task == "postedit":
            continue
        done = [(who, j.value) for who, j in judged if answered(item.task, item.shown, j.value)]
        if len(done) < 2:
            continue
        for q in item.shown["questions"]:
            labels = {who: str(v.get(q["key"])) for who, v in done}
            if len(set(labels.values())) > 1:
                found.append(Disagreement(item, q, labels,
                                          (item.suggestion or {}).get(q["key"]),
                                          settled.get(item.id, {}).get(q["key"])))
    return found


def settle(db: Session, project: Project, ref: str, key: str, label: str, by: Account) -> None:
    """Decide a disagreeing question of an item (named by its ref) with one of its labels."""
    item = db.scalar(select(Item).where(Item.ref == ref, Item.project_id == project.id))
    if item is None:
        raise ConfigError(f"project {project.name!r} has no item {ref!r}")
    found = next((d for d in disagreements(db, project)
                  if d.item.id == item.id and d.question["key"] == key), None)
    if found is None:
        raise ConfigError(f"item {ref!r} has no disagreement on question {key!r}")
    if label not in found.question["labels"]:
        raise ConfigError(f"label must be one of {', '.join(found.question['labels'])}")
    row = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id,
                                               Adjudication.key == key))
    before = row.label if row is not None else None
    if row is None:
        row = Adjudication(item_id=item.id, key=key, label=label, account_id=by.id)
        db.add(row)
    row.label, row.account_id, row.at = label, by.id, now()
    db.add(audit(by.id, item.id, "adjudicate", key=key, before=before, after=label,
                 labels=found.labels))
    db.commit()
