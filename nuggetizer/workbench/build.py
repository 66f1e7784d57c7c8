"""A project made by an organizer from a track's files: the items of each task, each showing
its topic's narrative and sub-narratives, and the LLM's labels as suggestions.

The topics file gives each topic's narrative (TSV `qid<TAB>narrative`, or a narratives JSONL);
the sub-narratives come from a narratives file (`narratives`, or the topics file itself when it
is one), else from the distinct sub-narratives the nuggets map to. A battle is two items, one
per presentation order: the first orders of every battle come first in the queue and the
second orders after all of them, so the two pages of one battle are far apart; which run is
shown first is drawn per battle from the project's seed, never by name.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.assessments import assessment_record
from nuggetizer.formats.narratives import read_narratives, sub_narratives_from_nuggets
from nuggetizer.formats.nuggets import nuggets_record
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.track_inputs import Wanted, read_track_inputs
from nuggetizer.interface.base import AnswerKeyMethod, Target
from nuggetizer.interface.registry import make_method
from nuggetizer.methods.battles.method import BATTLES_FILE, first_shown, render_answer
from nuggetizer.plan.sources import make_targets, wanted_to_judge
from nuggetizer.scoring.engine import judgment_files, read_judged
from nuggetizer.workbench import tasks as tk
from nuggetizer.workbench.assign import assign, people
from nuggetizer.workbench.store import Account, Item, Project, audit

METHODS = {"assign": "nuggets", "support": "support", "rubric": "rubrics", "battle": "battles"}
FILES = ("topics", "narratives", "runs", "nuggets", "corpus", "rubrics")


@dataclass
class ProjectSpec:
    """What an organizer gives to make a project."""

    name: str
    topics: Path
    tasks: Sequence[str]
    assessors: Sequence[str] = ()
    runs: Sequence[Path] = ()
    nuggets: Path | None = None
    corpus: Path | None = None
    rubrics: Path | None = None
    grading: str = "binary"
    double: float = 0.0  # the share of topics judged by two assessors
    show_llm: bool = False
    llm: dict[str, list[Path]] = field(default_factory=dict)  # task -> the LLM's judgments
    narratives: Path | None = None  # the sub-narratives, when the topics file has none
    seed: int = 0  # draws which run a battle shows first


def _needs(spec: ProjectSpec) -> None:
    name = spec.name.strip()
    if not name or len(name) > 120:
        raise ConfigError("a project name is 1 to 120 characters")
    unknown = [t for t in spec.tasks if t not in tk.TASKS]
    if unknown:
        raise ConfigError(f"unknown task {unknown[0]!r}: choose from {', '.join(tk.TASKS)}")
    if not spec.tasks:
        raise ConfigError("a project needs at least one task")
    wants = {"postedit": ("nuggets",), "assign": ("nuggets", "runs"), "support": ("runs",),
             "battle": ("runs",), "rubric": ("rubrics", "runs")}
    for task in spec.tasks:
        for need in wants[task]:
            if not getattr(spec, need):
                flag = "run" if need == "runs" else need
                raise ConfigError(f"task {task} needs --{flag}")
    for task in spec.llm:
        if task not in spec.tasks:
            raise ConfigError(f"--llm {task}: the project has no task {task}")
    twice = sorted({a for a in spec.assessors if list(spec.assessors).count(a) > 1})
    if twice:
        raise ConfigError(f"assessor {twice[0]!r} is named twice: name each assessor once")
    if not 0.0 <= spec.double <= 1.0:
        raise ConfigError("--double is a share of topics, from 0 to 1")
    if spec.double and len(spec.assessors) < 2:
        raise ConfigError("--double needs at least two assessors")


def _sub_narratives(spec: ProjectSpec) -> dict[str, list[str]]:
    """Each topic's sub-narratives: the narratives file's, the topics file's when it is a
    narratives file, else those the nuggets map to (none where nothing gives them)."""
    if spec.narratives is not None:
        return read_narratives(spec.narratives)
    if str(spec.topics).endswith((".jsonl", ".json")):
        try:
            return read_narratives(spec.topics)
        except InputError:  # a topics JSONL without sub-narratives
            pass
    if spec.nuggets is not None:
        return sub_narratives_from_nuggets(spec.nuggets)
    return {}


def topics_of(spec: ProjectSpec) -> dict[str, dict[str, Any]]:
    """qid -> the topic as pages show it (narrative, sub-narratives), in file order."""
    subs = _sub_narratives(spec)
    return {qid: tk.topic_of(qid, t.text, subs.get(qid, []))
            for qid, t in read_topics(spec.topics).items()}


def _llm_labels(task: str, method: AnswerKeyMethod, paths: list[Path]) -> dict[tuple, dict]:
    """(ids) -> a judged record of the LLM's judgments of a task (a battle's whole record)."""
    found: dict[tuple, dict] = {}
    if task == "battle":
        for path in paths:
            journal = path / BATTLES_FILE if path.is_dir() else path
            for judged in read_judged(method, [journal]):
                r = judged.record
                found[(str(r["qid"]), *sorted((str(r["run_a"]), str(r["run_b"]))))] = r
        return found
    for judged in read_judged(method, judgment_files(paths)):
        record = judged.record if isinstance(judged.record, dict) else \
            assessment_record(judged.record)
        found[(str(record["run_id"]), str(record["qid"]))] = record
    return found


def _as_dict(record: Any) -> dict[str, Any]:
    return record if isinstance(record, dict) else assessment_record(record)


def answer_text(target: Target) -> str:
    """An answer as an assessor reads it: each answer object (sentence) on a line of its own,
    Markdown kept (the page renders it safely)."""
    if not target.sentences:
        return target.answer or ""
    return "\n".join(s.text.strip() for s in target.sentences)


Made = tuple[str, str, dict, dict, dict | None]  # task, qid, shown, record, LLM labels


def _battles(spec: ProjectSpec, topics: dict[str, dict], targets: dict[str, dict[str, Target]],
             llm: dict[tuple, dict]) -> list[Made]:
    """Both orders of every battle: all first orders (topic by topic), then all second
    orders (each topic's in a seeded shuffle), so one battle's two pages are far apart."""
    firsts: list[Made] = []
    seconds: list[Made] = []
    for qid, topic in topics.items():
        runs = sorted(run for run, by_topic in targets.items() if qid in by_topic)
        later: list[Made] = []
        for a, b in combinations(runs, 2):
            texts = {a: render_answer(targets[a][qid]), b: render_answer(targets[b][qid])}
            first = a if first_shown(spec.seed, f"{qid}\x1f{a}\x1f{b}") == "a" else b
            other = b if first == a else a
            judged = llm.get((qid, a, b))
            for order, (x, y) in enumerate(((first, other), (other, first))):
                shown, record = tk.battle_item(qid, topic, (a, b), (x, texts[x]), (y, texts[y]))
                record["order"] = order
                labels = (tk.labels_of("battle", judged, x) or None) if judged else None
                (firsts if order == 0 else later).append(("battle", qid, shown, record,
                                                          labels))
        random.Random(f"{spec.seed}\x1f{qid}").shuffle(later)
        seconds += later
    return firsts + seconds


def project_items(spec: ProjectSpec) -> list[Made]:
    """(task, qid, shown, record, LLM labels) of every item of the project, in queue order."""
    _needs(spec)
    topics = topics_of(spec)
    items: list[Made] = []
    nuggets_method = make_method("nuggets")
    keys = nuggets_method.read_keys(spec.nuggets) if spec.nuggets else {}
    if "postedit" in spec.tasks:
        for qid, key in keys.items():
            topic = topics.get(qid) or tk.topic_of(qid, key.query, [])
            shown, record = tk.postedit_item(nuggets_record(key), topic)
            items.append(("postedit", qid, shown, record, None))
    for task in ("assign", "support", "rubric", "battle"):
        if task not in spec.tasks:
            continue
        settings = {"grading": spec.grading} if task == "rubric" else {}
        method = make_method(METHODS[task], settings)
        targets = make_targets(method, read_track_inputs(wanted_to_judge([method], Wanted(
            corpus=spec.corpus, runs=tuple(spec.runs), allow_missing=True))))
        llm = _llm_labels(task, method, spec.llm[task]) if spec.llm.get(task) else {}
        if task == "battle":
            items += _battles(spec, topics, targets, llm)
            continue
        task_keys = keys if task == "assign" else (
            method.read_keys(spec.rubrics) if task == "rubric" and spec.rubrics else {})
        for run, by_topic in sorted(targets.items()):
            for qid, target in by_topic.items():
                if task != "support" and qid not in task_keys:
                    continue
                topic = topics.get(qid) or tk.topic_of(qid, target.query, [])
                record = _as_dict(method.blank_judgment(task_keys.get(qid), target))
                shown = (tk.assign_item(record, topic, answer_text(target)) if task == "assign"
                         else tk.support_item(record, topic) if task == "support" else
                         tk.rubric_item(record, topic, spec.grading, answer_text(target)))
                judged = llm.get((run, qid))
                items.append((task, qid, shown, record,
                              (tk.labels_of(task, judged) or None) if judged else None))
    if not items:
        raise ConfigError("the project has no items: do the runs answer the topics of the key?")
    order = {qid: k for k, qid in enumerate(topics)}  # a topic's answers one after another
    # a battle's orders are in their queue order already (the sort is stable)
    return sorted(items, key=lambda it: (tk.TASKS.index(it[0]), 0 if it[0] == "battle"
                                         else order.get(it[1], len(order))))


def _files(spec: ProjectSpec) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in FILES:
        value = getattr(spec, name)
        if value:
            found[name] = [str(p) for p in value] if isinstance(value, list | tuple) \
                else str(value)
    return found


def create_project(db: Session, spec: ProjectSpec, organizer: Account) -> Project:
    """Make the project and its items; with assessors named, assign its topics to them in
    turn (workbench/assign.py, `double` the share of topics judged twice)."""
    if db.scalar(select(Project).where(Project.name == spec.name.strip())) is not None:
        raise ConfigError(f"project {spec.name.strip()!r} exists already")
    _needs(spec)
    chosen = people(db, spec.assessors)
    made = project_items(spec)
    project = Project(name=spec.name.strip(), settings={
        "tasks": list(spec.tasks), "double": spec.double, "show_llm": spec.show_llm,
        "grading": spec.grading, "seed": spec.seed, "files": _files(spec),
        "topics": list(dict.fromkeys(qid for _, qid, *_ in made))})
    db.add(project)
    db.flush()
    for position, (task, qid, shown, record, llm) in enumerate(made):
        db.add(Item(ref=secrets.token_urlsafe(12), project_id=project.id, task=task, qid=qid,
                    position=position, shown=shown, record=record, suggestion=llm))
    db.add(audit(organizer.id, None, "create-project", project=project.name, items=len(made)))
    db.flush()
    if chosen:
        assign(db, project, chosen, overlap=spec.double, by=organizer)
    db.commit()
    return project

