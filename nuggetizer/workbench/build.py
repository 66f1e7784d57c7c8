"""A project made by an organizer from a track's files: the items of each task, which
assessors judge which topics, which items are judged twice, the LLM's labels as suggestions."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError
from nuggetizer.formats.assessments import assessment_record
from nuggetizer.formats.narratives import read_narratives
from nuggetizer.formats.nuggets import nuggets_record
from nuggetizer.formats.rag26 import narratives
from nuggetizer.formats.topics import read_topics
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.registry import make_method
from nuggetizer.methods.battles.method import BATTLES_FILE, render_answer
from nuggetizer.plan.sources import make_targets
from nuggetizer.scoring.engine import judgment_files, read_judged
from nuggetizer.workbench import tasks as tk
from nuggetizer.workbench.store import Account, Assignment, Item, Project, audit

METHODS = {"assign": "nuggets", "support": "support", "rubric": "rubrics", "battle": "battles"}


@dataclass
class ProjectSpec:
    """What an organizer gives to make a project."""

    name: str
    topics: Path
    tasks: Sequence[str]
    assessors: Sequence[str]
    runs: Sequence[Path] = ()
    nuggets: Path | None = None
    corpus: Path | None = None
    rubrics: Path | None = None
    grading: str = "binary"
    double: float = 0.0  # the share of items judged by two assessors
    show_llm: bool = False
    llm: dict[str, list[Path]] = field(default_factory=dict)  # task -> the LLM's judgments


def _needs(spec: ProjectSpec) -> None:
    unknown = [t for t in spec.tasks if t not in tk.TASKS]
    if unknown:
        raise ConfigError(f"unknown task {unknown[0]!r}: choose from {', '.join(tk.TASKS)}")
    wants = {"postedit": ("nuggets",), "assign": ("nuggets", "runs"), "support": ("runs",),
             "battle": ("runs",), "rubric": ("rubrics", "runs")}
    for task in spec.tasks:
        for need in wants[task]:
            if not getattr(spec, need):
                flag = "run" if need == "runs" else need
                raise ConfigError(f"task {task} needs --{flag}")
    if not spec.assessors:
        raise ConfigError("a project needs at least one --assessor")
    if not 0.0 <= spec.double <= 1.0:
        raise ConfigError("--double is a share of items, from 0 to 1")
    if spec.double and len(spec.assessors) < 2:
        raise ConfigError("--double needs at least two assessors")


def _subs(topics: Path) -> dict[str, list[str]]:
    try:
        return read_narratives(topics)
    except Exception:  # a topics TSV has no sub-narratives
        return {}


def _llm_labels(task: str, method: AnswerKeyMethod, paths: list[Path]) -> dict[tuple, dict]:
    """(ids) -> {question: label} of the LLM's judgments of a task."""
    found: dict[tuple, dict] = {}
    if task == "battle":
        for path in paths:
            journal = path / BATTLES_FILE if path.is_dir() else path
            for judged in read_judged(method, [journal]):
                r = judged.record
                found[(str(r["qid"]), str(r["run_a"]), str(r["run_b"]))] = tk.labels_of(task, r)
        return found
    for judged in read_judged(method, judgment_files(paths)):
        record = judged.record if isinstance(judged.record, dict) else \
            assessment_record(judged.record)
        found[(str(record["run_id"]), str(record["qid"]))] = tk.labels_of(task, record)
    return found


def _as_dict(record: Any) -> dict[str, Any]:
    return record if isinstance(record, dict) else assessment_record(record)


def project_items(spec: ProjectSpec) -> list[tuple[str, str, dict, dict, dict | None]]:
    """(task, qid, shown, record, LLM labels) of every item of the project."""
    _needs(spec)
    topics = {t.id: t.text for t in read_topics(spec.topics).values()} \
        if not str(spec.topics).endswith(".jsonl") or not _subs(spec.topics) else None
    subs = _subs(spec.topics)
    if topics is None:
        topics = narratives(spec.topics)
    items: list[tuple[str, str, dict, dict, dict | None]] = []
    nuggets_method = make_method("nuggets")
    keys = nuggets_method.read_keys(spec.nuggets) if spec.nuggets else {}
    if "postedit" in spec.tasks:
        for qid, key in keys.items():
            shown, record = tk.postedit_item(nuggets_record(key), subs.get(qid, []))
            items.append(("postedit", qid, shown, record, None))
    for task in ("assign", "support", "rubric", "battle"):
        if task not in spec.tasks:
            continue
        settings = {"grading": spec.grading} if task == "rubric" else {}
        method = make_method(METHODS[task], settings)
        targets = make_targets(method, list(spec.runs), (), spec.corpus, None,
                               allow_missing=True)
        llm = _llm_labels(task, method, spec.llm[task]) if spec.llm.get(task) else {}
        if task == "battle":
            for qid in topics:
                runs = sorted(run for run, by_topic in targets.items() if qid in by_topic)
                for a, b in combinations(runs, 2):
                    shown, record = tk.battle_item(
                        qid, topics[qid], (a, render_answer(targets[a][qid])),
                        (b, render_answer(targets[b][qid])))
                    items.append((task, qid, shown, record, llm.get((qid, a, b))))
            continue
        task_keys = keys if task == "assign" else (
            method.read_keys(spec.rubrics) if task == "rubric" and spec.rubrics else {})
        for run, by_topic in sorted(targets.items()):
            for qid, target in by_topic.items():
                if task != "support" and qid not in task_keys:
                    continue
                record = _as_dict(method.blank_judgment(task_keys.get(qid), target))
                shown = (tk.assign_item(record) if task == "assign" else
                         tk.support_item(record) if task == "support" else
                         tk.rubric_item(record, topics.get(qid, target.query), spec.grading))
                items.append((task, qid, shown, record, llm.get((run, qid))))
    if not items:
        raise ConfigError("the project has no items: do the runs answer the topics of the key?")
    order = {qid: k for k, qid in enumerate(topics)}  # a topic's answers one after another
    return sorted(items, key=lambda it: (tk.TASKS.index(it[0]), order.get(it[1], len(order))))


def _share(name: str, ref: str) -> float:
    digest = hashlib.sha256(f"{name}\x1f{ref}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def create_project(db: Session, spec: ProjectSpec, organizer: Account) -> Project:
    """Make the project, its items and their assignments (topic k to assessor k mod n; an
    item of the `double` share also to the next assessor)."""
    if db.scalar(select(Project).where(Project.name == spec.name)) is not None:
        raise ConfigError(f"project {spec.name!r} exists already")
    people = []
    for name in spec.assessors:
        account = db.scalar(select(Account).where(Account.name == name))
        if account is None or account.role != "assessor":
            raise ConfigError(f"no assessor {name!r}: add one with `nuggetizer workbench "
                              "account NAME`")
        people.append(account)
    made = project_items(spec)
    project = Project(name=spec.name, settings={
        "tasks": list(spec.tasks), "double": spec.double, "show_llm": spec.show_llm,
        "grading": spec.grading, "assessors": list(spec.assessors),
        "files": {k: [str(p) for p in v] if isinstance(v, list | tuple) else str(v)
                  for k, v in (("topics", spec.topics), ("runs", list(spec.runs)),
                               ("nuggets", spec.nuggets), ("corpus", spec.corpus),
                               ("rubrics", spec.rubrics)) if v}})
    db.add(project)
    db.flush()
    order = {qid: k for k, qid in enumerate(dict.fromkeys(qid for _, qid, *_ in made))}
    for position, (task, qid, shown, record, llm) in enumerate(made):
        item = Item(ref=secrets.token_urlsafe(12), project_id=project.id, task=task, qid=qid,
                    position=position, shown=shown, record=record, suggestion=llm)
        db.add(item)
        db.flush()
        first = order[qid] % len(people)
        chosen = [people[first]]
        if len(people) > 1 and _share(spec.name, f"{task}\x1f{position}") < spec.double:
            chosen.append(people[(first + 1) % len(people)])
        for person in chosen:
            db.add(Assignment(item_id=item.id, account_id=person.id))
    db.add(audit(organizer.id, None, "create-project", project=spec.name, items=len(made)))
    db.commit()
    return project
