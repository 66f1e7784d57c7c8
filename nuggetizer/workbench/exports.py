"""A project's judgments as the files `score`, `report` and `agreement` read: a post-edited
key (nuggets JSONL), per-run judgment files of assignment, support and rubric grading, the
battles journal, and qrels of citation support.

Every item of the project is in the export, judged or not: an item no assessor has finished is
written with every label unjudged and listed in its folder's `not-judged-yet.tsv` (`score`
then leaves it out and counts it, never a 0); a post-edit not finished keeps the key's nuggets
as they were. An item finished by several assessors is written once, each question with the
label they gave when they agree, else the organizer's adjudicated label, else (not settled
yet) the first assessor's; its provenance names every assessor, their labels, the
adjudications and who decided, and the questions still unsettled. Every assessor's own
judgments also go to `by-assessor/NAME/TASK/` for `agreement` (NAME made safe as a folder
name: an account's name is never a path).

The export is written into a new folder beside the output and moved into place at the end, so
an export that fails leaves the output as it was.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from nuggetizer.errors import ConfigError, OutputError
from nuggetizer.formats.writing import run_file_name, write_jsonl_atomic, write_text_atomic
from nuggetizer.methods.battles.method import BATTLES_FILE, outcome
from nuggetizer.run.provenance import provenance
from nuggetizer.scoring.engine import NOT_JUDGED_YET
from nuggetizer.workbench.store import Account, Adjudication, Assignment, Item, Judgment, Project
from nuggetizer.workbench.tasks import answered, battle_record, edited_nuggets, filled

FOLDERS = {"postedit": "nuggets", "assign": "assign", "support": "support",
           "rubric": "rubrics", "battle": "battles"}
QREL_GRADES = {"full_support": 2, "partial_support": 1, "no_support": 0}
_UNSAFE = re.compile(r"[^A-Za-z0-9_@-]|^\.")


def folder_name(name: str) -> str:
    """An account name as one safe folder name: every character but letters, digits, `_`,
    `-`, `@` (and a `.` not first) written as %XX, so `../x` is `..%2Fx`, never a path."""
    out = "".join(f"%{b:02X}" for b in name[:1].encode()) if name.startswith(".") else ""
    rest = name[1:] if out else name
    return out + "".join(c if not _UNSAFE.match(c) or c == "." else
                         "".join(f"%{b:02X}" for b in c.encode()) for c in rest) or "%00"


@dataclass
class Resolved:
    """An item's labels for the export: the final value, who judged it, and how each
    question was decided."""

    value: dict[str, Any] | None  # None: nobody finished it yet
    assessors: list[str]
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)  # per assessor
    adjudicated: dict[str, dict[str, str]] = field(default_factory=dict)
    unsettled: list[str] = field(default_factory=list)


def resolve(item: Item, judged: Sequence[tuple[str, Judgment]],
            settled: Mapping[str, tuple[str, str, str]]) -> Resolved:
    """The final value of an item from its assessors' finished judgments and the
    organizer's adjudications ({question: (label, by, when)})."""
    done = [(who, j.value) for who, j in judged if answered(item.task, item.shown, j.value)]
    if not done:
        return Resolved(None, [])
    names = [who for who, _ in done]
    if item.task == "postedit" or len(done) == 1:
        return Resolved(dict(done[0][1]), names)
    value = dict(done[0][1])
    result = Resolved(value, names, labels={who: dict(v) for who, v in done})
    for q in item.shown["questions"]:
        given = [v.get(q["key"]) for _, v in done]
        if len(set(given)) == 1:
            continue
        if q["key"] in settled:
            label, by, when = settled[q["key"]]
            value[q["key"]] = label
            result.adjudicated[q["key"]] = {"label": label, "by": by, "at": when}
        else:
            result.unsettled.append(q["key"])
    return result


def judged_items(db: Session, project: Project
                 ) -> list[tuple[Item, list[tuple[str, Judgment]]]]:
    """Every item with its assessors' judgments, in the order they were assigned."""
    return [(item, judged) for item, _, judged in assigned_items(db, project)]


def assigned_items(db: Session, project: Project
                   ) -> list[tuple[Item, list[str], list[tuple[str, Judgment]]]]:
    """Every item with its assessors (in the order they were assigned) and their
    judgments."""
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
    return [(item, [names[who] for who in order[item.id]],
             [(names[who], judgments[item.id][who]) for who in order[item.id]
              if who in judgments[item.id]]) for item in items]


def adjudications(db: Session, project: Project) -> dict[int, dict[str, tuple[str, str, str]]]:
    """item id -> {question: (label, organizer, when)}."""
    names = {a.id: a.name for a in db.scalars(select(Account))}
    found: dict[int, dict[str, tuple[str, str, str]]] = defaultdict(dict)
    for a in db.scalars(select(Adjudication).join(Item).where(Item.project_id == project.id)):
        found[a.item_id][a.key] = (a.label, names.get(a.account_id, "?"),
                                   a.at.isoformat(timespec="seconds"))
    return found


def _stamp(base: dict[str, Any], r: Resolved, judged: Sequence[tuple[str, Judgment]]
           ) -> dict[str, Any]:
    block = {**base, "assessors": r.assessors}
    if r.value is None:
        block["state"] = "not judged yet"
        block["assigned"] = [who for who, _ in judged]
    else:
        saved = [j.saved for who, j in judged if who in r.assessors]
        block["saved"] = max(saved).isoformat(timespec="seconds")
    if r.labels:
        block["labels"] = r.labels
    if r.adjudicated:
        block["adjudicated"] = r.adjudicated
    if r.unsettled:
        block["unsettled"] = r.unsettled
    return block


@dataclass
class _Files:
    """The files of an export, by path inside it: records, and the TSV lines of items not
    judged yet."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    pending: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    manifest: dict[str, Any] = field(default_factory=dict)


def _pending_line(run: str, qid: str, assigned: Sequence[str],
                  judged: Sequence[tuple[str, Judgment]], item: Item) -> str:
    values = dict(judged)
    who = ", ".join(f"{name} ({_progress(item, values[name].value)})" if name in values
                    else f"{name} (not opened)" for name in assigned) or "nobody yet"
    return f"{run}\t{qid}\t{who}\n"


def _progress(item: Item, value: Mapping[str, Any]) -> str:
    if item.task == "postedit":
        nuggets = value.get("nuggets", [])
        return f"{sum(n.get('importance') in ('vital', 'okay') for n in nuggets)} of " \
               f"{len(nuggets)} importances"
    keys = [q["key"] for q in item.shown["questions"]]
    return f"{sum(k in value for k in keys)} of {len(keys)} questions"


Order = tuple[Item, Resolved, list[str], list[tuple[str, Judgment]]]


def _battles(files: _Files, orders: list[Order], base: dict[str, Any]) -> None:
    """One battle's record from its two order items."""
    orders.sort(key=lambda o: o[0].record.get("order", 0))
    verdicts = [(i.record, (r.value or {}).get("o", "unjudged")) for i, r, _, _ in orders]
    record = battle_record(verdicts)
    record.update(outcome(record))
    record["provenance"] = {**base, "orders": [_stamp({}, r, j) for _, r, _, j in orders]}
    path = f"{FOLDERS['battle']}/{BATTLES_FILE}"
    files.records[path].append(record)
    waiting = [o for o in orders if o[1].value is None]
    if waiting:
        first = orders[0][0].record
        item, _, assigned, judged = waiting[0]
        files.pending[f"{FOLDERS['battle']}/{NOT_JUDGED_YET}"].append(_pending_line(
            f"{first['run_a']} vs {first['run_b']}", str(first["qid"]), assigned, judged,
            item))


def _collect(db: Session, project: Project) -> tuple[_Files, dict[str, int]]:
    base = provenance({"assessor": "manual", "workbench": project.name}, ())
    files = _Files()
    settled = adjudications(db, project)
    battles: dict[tuple, list[Order]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for item, assigned, judged in assigned_items(db, project):
        r = resolve(item, judged, settled.get(item.id, {}))
        if item.task != "battle":  # a battle (two order items) is counted once
            counts[f"{item.task} items"] += 1
            counts[f"{item.task} not judged yet"] += r.value is None
        for who, j in judged:
            mine = filled(item.task, item.record, j.value) if item.task != "battle" else None
            if mine is not None:
                mine["provenance"] = {**base, "assessors": [who],
                                      "saved": j.saved.isoformat(timespec="seconds")}
                files.records[_own_path(who, item, mine)].append(mine)
        if item.task == "battle":
            ids = (item.qid, item.record["run_a"], item.record["run_b"])
            battles[ids].append((item, r, assigned, judged))
            continue
        record = filled(item.task, item.record, r.value or {}) if \
            (item.task != "postedit" or r.value) else \
            dict(item.record, nuggets=edited_nuggets(item.record["nuggets"]))
        record["provenance"] = _stamp(base, r, judged)
        folder = FOLDERS[item.task]
        if item.task == "postedit":
            files.records["nuggets.jsonl"].append(record)
            if r.value is None:
                files.pending[f"nuggets.{NOT_JUDGED_YET}"].append(
                    _pending_line("-", item.qid, assigned, judged, item))
            continue
        files.records[f"{folder}/{run_file_name(str(record['run_id']))}"].append(record)
        if r.value is None:
            files.pending[f"{folder}/{NOT_JUDGED_YET}"].append(
                _pending_line(str(record["run_id"]), item.qid, assigned, judged, item))
    for orders in battles.values():
        _battles(files, orders, base)
        counts["battle items"] += 1
        counts["battle not judged yet"] += any(r.value is None for _, r, _, _ in orders)
    _own_battles(files, battles, base)
    return files, dict(counts)


def _own_path(who: str, item: Item, record: Mapping[str, Any]) -> str:
    if item.task == "postedit":
        return f"by-assessor/{folder_name(who)}/nuggets.jsonl"
    return f"by-assessor/{folder_name(who)}/{FOLDERS[item.task]}/" + \
        run_file_name(str(record["run_id"]))


def _own_battles(files: _Files, battles: Mapping[tuple, list[Order]],
                 base: dict[str, Any]) -> None:
    """Each assessor's own battle records (the orders they judged)."""
    for orders in battles.values():
        mine: dict[str, list[tuple[dict, str]]] = defaultdict(list)
        for item, _, _, judged in sorted(orders, key=lambda o: o[0].record.get("order", 0)):
            for who, j in judged:
                mine[who].append((item.record, j.value.get("o", "unjudged")))
        for who, verdicts in mine.items():
            if len(verdicts) < len(orders):  # an order this assessor has not seen
                seen = {r["first"] for r, _ in verdicts}
                verdicts += [(i.record, "unjudged") for i, *_ in orders
                             if i.record["first"] not in seen]
            record = battle_record(verdicts)
            record.update(outcome(record))
            record["provenance"] = {**base, "assessors": [who]}
            files.records[f"by-assessor/{folder_name(who)}/battles/{BATTLES_FILE}"].append(
                record)


def export_project(db: Session, name: str, out: Path) -> dict[str, int]:
    """Write the project's files into `out` (replacing an earlier export there); counts of
    items and of items not judged yet, per task."""
    project = db.scalar(select(Project).where(Project.name == name))
    if project is None:
        raise ConfigError(f"no project {name!r}")
    files, counts = _collect(db, project)
    files.manifest = {"project": project.name, "items": counts,
                      "provenance": provenance({"assessor": "manual",
                                                "workbench": project.name}, ())}
    out = Path(out).absolute()
    _may_replace(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise OutputError(out, exc) from None
    try:
        _write(files, staging)
        _swap(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return counts


def _inside(root: Path, relative: str) -> Path:
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):  # never: every name was made safe
        raise ConfigError(f"export: {relative!r} would be outside the output folder")
    return path


MANIFEST = "workbench-export.json"  # what makes a folder an export, that a new one replaces


def _may_replace(out: Path) -> None:
    """An export goes to a new or empty folder, or replaces an earlier export: never a folder
    holding anything else (it would be removed)."""
    if out.is_file():
        raise ConfigError(f"{out} is a file: export to a folder (-o)")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ConfigError(f"{out} holds files that are not an earlier export: export to a new "
                          "or empty folder (-o)")


def _write(files: _Files, root: Path) -> None:
    write_text_atomic(root / MANIFEST, json.dumps(files.manifest, indent=2, sort_keys=True)
                      + "\n")
    for relative, records in files.records.items():
        write_jsonl_atomic(_inside(root, relative), records)
    head = "run_id\tqid\tassigned to (progress)\n"
    for relative, lines in files.pending.items():
        write_text_atomic(_inside(root, relative), head + "".join(lines))
    support = {k: v for k, v in files.records.items() if k.startswith("support/")}
    if support:
        write_text_atomic(root / "support.qrels", _qrels(support))


def _swap(staging: Path, out: Path) -> None:
    """Move the finished export to `out`, an earlier one there moved aside and removed."""
    old = None
    try:
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        if out.exists():
            old = out.with_name(f".{out.name}.old-{staging.name}")
            out.rename(old)
        staging.rename(out)
    except OSError as exc:
        if old is not None and not out.exists():
            old.rename(out)
        raise OutputError(out, exc) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _qrels(files: Mapping[str, list[dict[str, Any]]]) -> str:
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
