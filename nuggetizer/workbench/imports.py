"""Existing work brought into a project as one assessor's judgments: judgment files (JSONL, or
folders of them) and the TSV sheets of `export-sheets` for assignment, support and rubrics; a
battles journal, or blind battle sheets with their mapping; a nuggets file or a post-edited
nugget sheet for post-editing.

Every record is checked against the project before anything is saved, and the import is
refused, naming the first difference, when a record names a (run, topic) or battle the project
does not have, or its nuggets, criteria or cited passages differ from the item's in number or
text: labels are attached to the questions they were given for, never by position alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from nuggetizer.errors import ConfigError
from nuggetizer.formats.assessments import assessment_record
from nuggetizer.formats.narratives import clean
from nuggetizer.formats.nuggets import nuggets_record, read_nuggets
from nuggetizer.formats.sheets import read_nugget_sheet
from nuggetizer.interface.registry import make_method
from nuggetizer.methods.battles.method import BATTLES_FILE
from nuggetizer.methods.battles.sheets import read_battle_sheets
from nuggetizer.scoring.engine import judgment_files, read_judged
from nuggetizer.workbench.build import METHODS
from nuggetizer.workbench.store import Account, Assignment, Item, Judgment, Project, audit
from nuggetizer.workbench.tasks import TASKS, labels_of

Found = tuple[str, dict[str, Any]]  # where a record was read (file:line), the record


def _is_sheet(paths: Sequence[Path]) -> bool:
    return all(p.suffix == ".tsv" or (p.is_dir() and any(p.glob("*.tsv"))) for p in paths)


def _records(task: str, paths: Sequence[Path], project: Project,
             mapping: Path | None) -> list[Found]:
    """The judged records the files hold, each with where it was read."""
    if task == "postedit":
        keys = (read_nugget_sheet(paths[0], allow_blank=True) if _is_sheet(paths)
                else read_nuggets(paths[0]))
        return [(str(paths[0]), nuggets_record(nl)) for nl in keys.values()]
    settings = {"grading": project.settings.get("grading", "binary")} if task == "rubric" else {}
    method = make_method(METHODS[task], settings)
    if task == "battle":
        if _is_sheet(paths):
            if mapping is None:
                raise ConfigError("blind battle sheets need --mapping (the mapping file of "
                                  "their export)")
            return [(", ".join(map(str, paths)), r)
                    for r in read_battle_sheets(list(paths), mapping)]
        journals = [p / BATTLES_FILE if p.is_dir() else p for p in paths]
        return [(f"{j.path}:{j.line}", j.record) for j in read_judged(method, journals)]
    if _is_sheet(paths):
        files = project.settings.get("files", {})
        key_file = files.get("nuggets") if task == "assign" else files.get("rubrics")
        task_keys = method.read_keys(key_file) if key_file else None
        by_run = method.read_sheets(list(paths), task_keys, True)
        return [(", ".join(map(str, paths)), r) for records in by_run.values() for r in records]
    return [(f"{j.path}:{j.line}", j.record if isinstance(j.record, dict)
             else assessment_record(j.record))
            for j in read_judged(method, judgment_files(list(paths)))]


def _ids(task: str, record: dict[str, Any]) -> tuple[str, ...]:
    if task == "postedit":
        return (str(record["qid"]),)
    if task == "battle":
        a, b = sorted((str(record["run_a"]), str(record["run_b"])))
        return (str(record["qid"]), a, b)
    return (str(record["qid"]), str(record["run_id"]))


def _named(task: str, ids: tuple[str, ...]) -> str:
    if task == "postedit":
        return f"topic {ids[0]!r}"
    if task == "battle":
        return f"battle {ids[1]!r} vs {ids[2]!r} on topic {ids[0]!r}"
    return f"run {ids[1]!r} topic {ids[0]!r}"


def _texts(task: str, record: dict[str, Any]) -> tuple[str, list[str]]:
    """What the questions of a record are about, in order: (what they are, their texts)."""
    if task == "assign":
        return "nuggets", [str(n["text"]) for n in record["nuggets"]]
    if task == "rubric":
        return "criteria", [str(c["criterion"]) for c in record["criteria"]]
    if task == "support":
        return "cited passages", [f"sentence {s + 1} cites {pair.get('docid') or '?'}"
                                  for s, sentence in enumerate(record["sentences"])
                                  for pair in sentence["pairs"]]
    return "", []


def difference(task: str, theirs: dict[str, Any], ours: dict[str, Any]) -> str | None:
    """The first way a record's questions differ from the project item's, or None."""
    what, given = _texts(task, theirs)
    _, wanted = _texts(task, ours)
    if given == wanted:
        return None
    for k, (a, b) in enumerate(zip(given, wanted, strict=False)):
        if a != b:
            return f"{what} {k + 1} reads {a[:80]!r} where the project has {b[:80]!r}"
    return f"{len(given)} {what} where the project has {len(wanted)}"


def _value(task: str, record: dict[str, Any], item: Item) -> dict[str, Any]:
    """The record's labels as an assessor's saved value of the item."""
    if task == "postedit":
        ids = {n["text"]: n["id"] for n in item.record["nuggets"]}
        return {"nuggets": [
            {"id": ids.get(n["text"], f"import{k}"), "text": n["text"],
             "importance": n.get("importance", "unjudged"),
             "mapped_sub_narrative": clean(n.get("mapped_sub_narrative") or ""),
             "source": n.get("source") or "original", "set": True}
            for k, n in enumerate(record["nuggets"])]}
    if task == "battle":
        return labels_of(task, record, item.record["first"])
    value: dict[str, Any] = labels_of(task, record)
    if task == "assign":
        value.update({f"span:n{k}": n["span"] for k, n in enumerate(record["nuggets"])
                      if n.get("span")})
    return value


def _matched(task: str, found: list[Found], items: dict[tuple, list[Item]]
             ) -> list[tuple[dict[str, Any], Item]]:
    """Each record with the item(s) it judges; the first record the project cannot take is
    a ConfigError naming it and the difference."""
    pairs = []
    for where, record in found:
        ids = _ids(task, record)
        mine = items.get(ids)
        if not mine:
            raise ConfigError(f"{where}: {_named(task, ids)} is not in the project: import "
                              "the judgments of the project's runs and topics only")
        why = difference(task, record, mine[0].record)
        if why is not None:
            raise ConfigError(f"{where}: {_named(task, ids)}: {why}: import judgments made "
                              "with the project's key")
        pairs += [(record, item) for item in mine]
    return pairs


def import_judgments(db: Session, project_name: str, task: str, assessor: str,
                     paths: Sequence[Path], mapping: Path | None = None,
                     by: Account | None = None) -> int:
    """Save the files' judgments as `assessor`'s; the items filled. Nothing is saved when
    any record does not fit the project."""
    if task not in TASKS:
        raise ConfigError(f"unknown task {task!r}: choose from {', '.join(TASKS)}")
    project = db.scalar(select(Project).where(Project.name == project_name))
    if project is None:
        raise ConfigError(f"no project {project_name!r}")
    if task not in project.settings.get("tasks", []):
        raise ConfigError(f"project {project_name!r} has no task {task!r}")
    person = db.scalar(select(Account).where(Account.name == assessor))
    if person is None:
        raise ConfigError(f"no account {assessor!r}")
    items: dict[tuple, list[Item]] = {}
    for i in db.scalars(select(Item).where(Item.project_id == project.id, Item.task == task)
                        .options(undefer(Item.record))):
        items.setdefault(_ids(task, i.record), []).append(i)
    pairs = _matched(task, _records(task, paths, project, mapping), items)
    assigned = {a.item_id for a in db.scalars(select(Assignment).where(
        Assignment.account_id == person.id))}
    saved = {j.item_id: j for j in db.scalars(select(Judgment).where(
        Judgment.account_id == person.id))}
    for record, item in pairs:
        if item.id not in assigned:
            db.add(Assignment(item_id=item.id, account_id=person.id))
            assigned.add(item.id)
        judgment = saved.get(item.id)
        if judgment is None:
            judgment = saved[item.id] = Judgment(item_id=item.id, account_id=person.id,
                                                 value={})
            db.add(judgment)
        judgment.value = {**judgment.value, **_value(task, record, item)}
        db.add(audit(person.id, item.id, "import", files=[str(p) for p in paths],
                     by=by.name if by else None))
    db.commit()
    return len(pairs)
