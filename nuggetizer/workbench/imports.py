"""Existing work brought into a project as one assessor's judgments: judgment files (JSONL, or
folders of them) and the TSV sheets of `export-sheets` for assignment, support and rubrics; a
battles journal, or blind battle sheets with their mapping; a nuggets file or a post-edited
nugget sheet for post-editing. Each record lands on the item of the same run and topic (a
battle: topic and runs); one that matches no item is counted, never guessed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from nuggetizer.errors import ConfigError
from nuggetizer.formats.assessments import assessment_record
from nuggetizer.formats.nuggets import nuggets_record, read_nuggets
from nuggetizer.formats.sheets import read_nugget_sheet
from nuggetizer.interface.registry import make_method
from nuggetizer.methods.battles.method import BATTLES_FILE
from nuggetizer.methods.battles.sheets import read_battle_sheets
from nuggetizer.scoring.engine import judgment_files, read_judged
from nuggetizer.workbench.build import METHODS
from nuggetizer.workbench.store import Account, Assignment, Item, Judgment, Project, audit
from nuggetizer.workbench.tasks import labels_of


def _is_sheet(paths: Sequence[Path]) -> bool:
    return all(p.suffix == ".tsv" or (p.is_dir() and any(p.glob("*.tsv"))) for p in paths)


def _records(task: str, paths: Sequence[Path], project: Project,
             mapping: Path | None) -> list[dict[str, Any]]:
    """The judged records the files hold."""
    if task == "postedit":
        keys = (read_nugget_sheet(paths[0], allow_blank=True) if _is_sheet(paths)
                else read_nuggets(paths[0]))
        return [nuggets_record(nl) for nl in keys.values()]
    settings = {"grading": project.settings.get("grading", "binary")} if task == "rubric" else {}
    method = make_method(METHODS[task], settings)
    if task == "battle":
        if _is_sheet(paths):
            if mapping is None:
                raise ConfigError("blind battle sheets need --mapping (the mapping file of "
                                  "their export)")
            return read_battle_sheets(list(paths), mapping)
        journals = [p / BATTLES_FILE if p.is_dir() else p for p in paths]
        return [j.record for j in read_judged(method, journals)]
    if _is_sheet(paths):
        files = project.settings.get("files", {})
        key_file = files.get("nuggets") if task == "assign" else files.get("rubrics")
        task_keys = method.read_keys(key_file) if key_file else None
        by_run = method.read_sheets(list(paths), task_keys, True)
        return [r for records in by_run.values() for r in records]
    return [j.record if isinstance(j.record, dict) else assessment_record(j.record)
            for j in read_judged(method, judgment_files(list(paths)))]


def _ids(task: str, record: dict[str, Any]) -> tuple[str, ...]:
    if task == "postedit":
        return (str(record["qid"]),)
    if task == "battle":
        a, b = sorted((str(record["run_a"]), str(record["run_b"])))
        return (str(record["qid"]), a, b)
    return (str(record["qid"]), str(record["run_id"]))


def import_judgments(db: Session, project_name: str, task: str, assessor: str,
                     paths: Sequence[Path], mapping: Path | None = None) -> tuple[int, int]:
    """Save the files' judgments as `assessor`'s: (items filled, records matching no item)."""
    project = db.scalar(select(Project).where(Project.name == project_name))
    if project is None:
        raise ConfigError(f"no project {project_name!r}")
    person = db.scalar(select(Account).where(Account.name == assessor))
    if person is None:
        raise ConfigError(f"no account {assessor!r}")
    items = {_ids(task, i.record): i for i in db.scalars(
        select(Item).where(Item.project_id == project.id, Item.task == task)
        .options(undefer(Item.record)))}
    filled = unmatched = 0
    for record in _records(task, paths, project, mapping):
        item = items.get(_ids(task, record))
        if item is None:
            unmatched += 1
            continue
        value: dict[str, Any] = ({"nuggets": record["nuggets"]} if task == "postedit"
                                 else labels_of(task, record))
        if task == "assign":
            value.update({f"span:n{k}": n["span"] for k, n in enumerate(record["nuggets"])
                          if n.get("span")})
        if db.scalar(select(Assignment).where(Assignment.item_id == item.id,
                                              Assignment.account_id == person.id)) is None:
            db.add(Assignment(item_id=item.id, account_id=person.id))
        judgment = db.scalar(select(Judgment).where(Judgment.item_id == item.id,
                                                    Judgment.account_id == person.id))
        if judgment is None:
            judgment = Judgment(item_id=item.id, account_id=person.id, value={})
            db.add(judgment)
        judgment.value = {**judgment.value, **value}
        db.add(audit(person.id, item.id, "import", files=[str(p) for p in paths]))
        filled += 1
    db.commit()
    return filled, unmatched
