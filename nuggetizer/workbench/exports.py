"""A project's judgments as the files `score`, `report` and `agreement` read: a post-edited
key (nuggets JSONL), per-run judgment files of assignment, support and rubric grading, the
battles journal, and qrels of citation support; each record's provenance names its assessors.

An item judged twice goes once into the task's folder (its first assessor's, the primary),
and every assessor's own judgments into `by-assessor/NAME/TASK/` for `agreement`.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from nuggetizer.errors import ConfigError
from nuggetizer.formats.writing import run_file_name, write_jsonl_atomic, write_text_atomic
from nuggetizer.methods.battles.method import BATTLES_FILE, outcome
from nuggetizer.run.provenance import provenance
from nuggetizer.workbench.store import Account, Assignment, Item, Judgment, Project
from nuggetizer.workbench.tasks import filled

FOLDERS = {"postedit": "nuggets", "assign": "assign", "support": "support",
           "rubric": "rubrics", "battle": "battles"}
QREL_GRADES = {"full_support": 2, "partial_support": 1, "no_support": 0}


def _judged(db: Session, project: Project) -> list[tuple[Item, list[tuple[str, Judgment]]]]:
    """Every item with its judgments, in the order its assessors were assigned."""
    names = {a.id: a.name for a in db.scalars(select(Account))}
    judgments: dict[int, dict[int, Judgment]] = defaultdict(dict)
    for j in db.scalars(select(Judgment).join(Item).where(Item.project_id == project.id)):
        judgments[j.item_id][j.account_id] = j
    order: dict[int, list[int]] = defaultdict(list)
    for a in db.scalars(select(Assignment).join(Item).where(Item.project_id == project.id)
                        .order_by(Assignment.id)):
        order[a.item_id].append(a.account_id)
    items = db.scalars(select(Item).where(Item.project_id == project.id)
                       .options(undefer(Item.record)).order_by(Item.position)).all()
    return [(item, [(names[who], judgments[item.id][who]) for who in order[item.id]
                    if who in judgments[item.id]]) for item in items]


def _record(item: Item, name: str, judgment: Judgment, stamp: dict[str, Any]
            ) -> dict[str, Any]:
    record = filled(item.task, item.record, judgment.value)
    if item.task == "battle":
        record.update(outcome(record))
    return {**record, "provenance": {**stamp, "assessors": [name],
                                     "saved": judgment.saved.isoformat(timespec="seconds")}}


def export_project(db: Session, name: str, out: Path) -> dict[str, int]:
    """Write the project's files into `out`; {folder: records written}."""
    project = db.scalar(select(Project).where(Project.name == name))
    if project is None:
        raise ConfigError(f"no project {name!r}")
    stamp = provenance({"assessor": "manual", "workbench": project.name}, ())
    primary: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    mine: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for item, judged in _judged(db, project):
        for k, (who, judgment) in enumerate(judged):
            record = _record(item, who, judgment, stamp)
            file = (f"{item.qid}.jsonl" if item.task == "postedit" else BATTLES_FILE
                    if item.task == "battle" else run_file_name(str(record["run_id"])))
            if k == 0:
                record["provenance"]["assessors"] = [n for n, _ in judged]
                primary[item.task][file].append(record)
            mine[(who, item.task)][file].append(_record(item, who, judgment, stamp))
    counts: dict[str, int] = {}
    for task, files in primary.items():
        folder = out / FOLDERS[task]
        if task == "postedit":  # one key file
            records = [r for rs in files.values() for r in rs]
            write_jsonl_atomic(out / "nuggets.jsonl", records)
            counts["nuggets.jsonl"] = len(records)
            continue
        for file, records in files.items():
            write_jsonl_atomic(folder / file, records)
        counts[FOLDERS[task]] = sum(len(r) for r in files.values())
        if task == "support":
            write_text_atomic(out / "support.qrels", _qrels(files))
    for (who, task), files in mine.items():
        for file, records in files.items():
            write_jsonl_atomic(out / "by-assessor" / who / FOLDERS[task] / file, records)
    return counts


def _qrels(files: dict[str, list[dict[str, Any]]]) -> str:
    """TREC qrels of the cited passages: the best support any sentence of a topic's answers
    found in each passage (2 full, 1 partial, 0 none)."""
    best: dict[tuple[str, str], int] = {}
    for records in files.values():
        for r in records:
            for sentence in r["sentences"]:
                for pair in sentence["pairs"]:
                    if pair.get("docid") and pair["label"] in QREL_GRADES:
                        ids = (str(r["qid"]), str(pair["docid"]))
                        best[ids] = max(best.get(ids, 0), QREL_GRADES[pair["label"]])
    return "".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(best.items()))
