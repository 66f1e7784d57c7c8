"""Who judges what: a project's topics given to assessors in turn for the chosen tasks, a
chosen share of them to a second assessor too (their agreement, and adjudication), and an
assessor's unfinished items moved to another. Work already saved is never taken away: an
assignment whose assessor has saved a judgment stays."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError
from nuggetizer.workbench.store import Account, Assignment, Item, Judgment, Project, audit
from nuggetizer.workbench.tasks import answered


@dataclass
class Assigned:
    """What an assignment did: assignments added and dropped, the topics given to two
    assessors, and assignments kept because their assessor had saved work."""

    added: int
    dropped: int
    twice: list[str]
    kept: int


def people(db: Session, names: Sequence[str]) -> list[Account]:
    """The assessor accounts of these names, in order (each named once, each enabled)."""
    found = []
    for name in names:
        if list(names).count(name) > 1:
            raise ConfigError(f"assessor {name!r} is named twice: name each assessor once")
        account = db.scalar(select(Account).where(Account.name == name))
        if account is None or account.role != "assessor":
            raise ConfigError(f"no assessor {name!r}: add one with `nuggetizer workbench "
                              "account NAME`")
        if account.disabled:
            raise ConfigError(f"assessor {name!r} is disabled: enable the account first")
        found.append(account)
    return found


def _chosen(project: Project, tasks: Sequence[str] | None, topics: Sequence[str] | None
            ) -> tuple[list[str], list[str]]:
    mine = list(project.settings.get("tasks", []))
    tasks = list(tasks) if tasks else mine
    for task in tasks:
        if task not in mine:
            raise ConfigError(f"project {project.name!r} has no task {task!r} (it has "
                              f"{', '.join(mine)})")
    every = list(project.settings.get("topics", []))
    if topics:
        unknown = [q for q in topics if q not in every]
        if unknown:
            raise ConfigError(f"project {project.name!r} has no topic {unknown[0]!r}")
        return tasks, [q for q in every if q in set(topics)]
    return tasks, every


def _rank(project: Project, qid: str) -> bytes:
    return hashlib.sha256(f"{project.name}\x1f{project.settings.get('seed', 0)}\x1f{qid}"
                          .encode()).digest()


def twice_topics(project: Project, topics: Sequence[str], overlap: float) -> list[str]:
    """The topics judged by two assessors: the share `overlap` of them (rounded), drawn by a
    hash of the project and topic so that the draw is the same every time."""
    if not 0.0 <= overlap <= 1.0:
        raise ConfigError("the overlap is a share of topics, from 0 to 1")
    count = round(overlap * len(topics))
    drawn = set(sorted(topics, key=lambda q: _rank(project, q))[:count])
    return [q for q in topics if q in drawn]


def _judged(db: Session, item_ids: list[int]) -> set[tuple[int, int]]:
    """(item, account) pairs with a saved judgment."""
    if not item_ids:
        return set()
    return {(j.item_id, j.account_id) for j in db.scalars(
        select(Judgment).where(Judgment.item_id.in_(item_ids)))}


def assign(db: Session, project: Project, assessors: Sequence[Account], *,
           tasks: Sequence[str] | None = None, topics: Sequence[str] | None = None,
           overlap: float = 0.0, by: Account | None = None) -> Assigned:
    """Give the chosen topics (all) of the chosen tasks (all) to the assessors in turn,
    topic k to assessor k mod n and, for the `overlap` share of topics, to the next one too;
    the items' other assignments are dropped unless their assessor saved work on them."""
    if not assessors:
        raise ConfigError("name at least one assessor")
    if overlap and len(assessors) < 2:
        raise ConfigError("an overlap needs at least two assessors")
    tasks, chosen = _chosen(project, tasks, topics)
    twice = set(twice_topics(project, chosen, overlap))
    turn = {qid: k for k, qid in enumerate(chosen)}
    items = db.scalars(select(Item).where(Item.project_id == project.id,
                                          Item.task.in_(tasks), Item.qid.in_(chosen))).all()
    ids = [i.id for i in items]
    saved = _judged(db, ids)
    current: dict[int, list[Assignment]] = {}
    for a in db.scalars(select(Assignment).where(Assignment.item_id.in_(ids))) if ids else ():
        current.setdefault(a.item_id, []).append(a)
    added = dropped = kept = 0
    n = len(assessors)
    for item in items:
        k = turn[item.qid]
        who = {assessors[k % n].id} | ({assessors[(k + 1) % n].id} if item.qid in twice
                                       else set())
        have = {a.account_id for a in current.get(item.id, [])}
        for a in current.get(item.id, []):
            if a.account_id in who:
                continue
            if (item.id, a.account_id) in saved:
                kept += 1
                continue
            db.delete(a)
            dropped += 1
        for account_id in sorted(who - have):
            db.add(Assignment(item_id=item.id, account_id=account_id))
            added += 1
    db.add(audit(by.id if by else None, None, "assign", project=project.name, tasks=tasks,
                 topics=len(chosen), assessors=[a.name for a in assessors], overlap=overlap,
                 added=added, dropped=dropped))
    db.commit()
    return Assigned(added, dropped, sorted(twice, key=turn.__getitem__), kept)


def reassign(db: Session, project: Project, source: Account, target: Account, *,
             tasks: Sequence[str] | None = None, topics: Sequence[str] | None = None,
             by: Account | None = None) -> int:
    """Move the source assessor's unfinished items (of the chosen tasks and topics) to the
    target; how many moved. Finished items stay with the source."""
    if source.id == target.id:
        raise ConfigError("reassign to another assessor than the one the items are from")
    people(db, [target.name])
    tasks, chosen = _chosen(project, tasks, topics)
    rows = db.execute(
        select(Assignment, Item).join(Item, Item.id == Assignment.item_id)
        .where(Item.project_id == project.id, Item.task.in_(tasks), Item.qid.in_(chosen),
               Assignment.account_id == source.id)).all()
    values = {j.item_id: j.value for j in db.scalars(select(Judgment).where(
        Judgment.account_id == source.id, Judgment.item_id.in_([i.id for _, i in rows])))}
    theirs = {a.item_id for a in db.scalars(select(Assignment).where(
        Assignment.account_id == target.id))}
    moved = 0
    for a, item in rows:
        if answered(item.task, item.shown, values.get(item.id)):
            continue
        db.delete(a)
        if item.id not in theirs:
            db.add(Assignment(item_id=item.id, account_id=target.id))
        moved += 1
    db.add(audit(by.id if by else None, None, "reassign", project=project.name,
                 source=source.name, target=target.name, moved=moved))
    db.commit()
    return moved
