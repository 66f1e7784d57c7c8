"""Agreement and progress on the organizer's page, and the export of items judged twice:
two assessors and the LLM label the same questions; kappa and alpha are those of
measures/agreement.py on the same labels; each assessor's judgments go to their own folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from workbench_server import populate

from nuggetizer.measures.agreement import cohen_kappa, krippendorff_alpha
from nuggetizer.workbench.exports import export_project
from nuggetizer.workbench.progress import LLM, agreement, progress
from nuggetizer.workbench.store import (
    Account,
    Assignment,
    Item,
    Judgment,
    Project,
    make_engine,
    sessions,
)
from nuggetizer.workbench.tasks import ORDINAL


def test_agreement_progress_and_export_of_items_judged_twice(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=1.0)
    factory = sessions(make_engine(database))
    scale = ORDINAL["assign"]
    labels = list(scale)
    with factory() as db:
        alice, bob = (db.scalar(select(Account).where(Account.name == n)) for n in ("alice", "bob"))
        project = db.scalar(select(Project).where(Project.name == "sample"))
        items = db.scalars(select(Item).where(Item.project_id == project.id,
                                              Item.task == "assign")).all()
        twice = [i for i in items if len(db.scalars(select(Assignment).where(
            Assignment.item_id == i.id)).all()) == 2]
        assert len(twice) == len(items)  # double=1.0: every item to two assessors
        a_labels, b_labels, llm_labels = [], [], []
        for k, item in enumerate(twice):
            a = {q["key"]: labels[(k + j) % 3] for j, q in enumerate(item.shown["questions"])}
            b = {q["key"]: labels[(k + j + (j == 0)) % 3]
                 for j, q in enumerate(item.shown["questions"])}
            item.suggestion = dict(a)
            db.add(Judgment(item_id=item.id, account_id=alice.id, value=a, seconds=10.0 + k))
            db.add(Judgment(item_id=item.id, account_id=bob.id, value=b, seconds=20.0))
            for key in a:
                a_labels.append(scale[a[key]])
                b_labels.append(scale[b[key]])
                llm_labels.append(scale[a[key]])
        db.commit()
        found = agreement(db, project)["assign"]
        pairs = {(p.a, p.b): p for p in found.pairs}
        assert pairs[("alice", "bob")].items == len(a_labels)
        assert pairs[("alice", "bob")].measures["kappa"] == pytest.approx(
            cohen_kappa(a_labels, b_labels))
        assert pairs[("alice", LLM)].measures["kappa"] == pytest.approx(1.0)
        assert found.overall["alpha_ordinal"] == pytest.approx(krippendorff_alpha(
            list(zip(a_labels, b_labels, llm_labels)), "ordinal"))
        rows = {(r[0], r[1]): r for r in progress(db, project).by_assessor}
        assert rows[("alice", "assign")][2:5] == (len(items), len(items), 0)
        assert rows[("alice", "support")][3] == 0
        assert rows[("bob", "assign")][5] == pytest.approx(20.0)
        counts = export_project(db, "sample", tmp_path / "out")
    assert counts["assign"] == len(items)
    first = json.loads(next((tmp_path / "out" / "assign").glob("*.jsonl")).read_text()
                       .splitlines()[0])
    assert sorted(first["provenance"]["assessors"]) == ["alice", "bob"]
    for name in ("alice", "bob"):
        mine = list((tmp_path / "out" / "by-assessor" / name / "assign").glob("*.jsonl"))
        assert sum(len(p.read_text().splitlines()) for p in mine) == len(items)
