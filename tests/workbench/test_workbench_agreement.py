"""Agreement and progress on the organizer's page, and the export of items judged twice:
two assessors and the LLM label the same questions; kappa and alpha are those of
measures/agreement.py on the same labels; each assessor's judgments go to their own folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from sqlalchemy import select  # noqa: E402
from workbench_server import populate  # noqa: E402

from nuggetizer.measures.agreement import cohen_kappa, krippendorff_alpha  # noqa: E402
from nuggetizer.workbench.exports import export_project  # noqa: E402
from nuggetizer.workbench.progress import LLM, agreement, progress  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Assignment,
    Item,
    Judgment,
    Project,
    make_engine,
    sessions,
)
from nuggetizer.workbench.tasks import ORDINAL  # noqa: E402


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
    assert counts["assign items"] == len(items) and counts["assign not judged yet"] == 0
    first = json.loads(next((tmp_path / "out" / "assign").glob("*.jsonl")).read_text()
                       .splitlines()[0])
    assert sorted(first["provenance"]["assessors"]) == ["alice", "bob"]
    for name in ("alice", "bob"):
        mine = list((tmp_path / "out" / "by-assessor" / name / "assign").glob("*.jsonl"))
        assert sum(len(p.read_text().splitlines()) for p in mine) == len(items)


def test_export_imports_back_as_another_assessors_work(tmp_path: Path) -> None:
    """Alice's exported judgments of every task, imported as Bob's, are the same labels on
    the same items; a nugget sheet of `export-nuggets` imports as a post-edit."""
    import subprocess
    import sys

    from nuggetizer.workbench.imports import import_judgments

    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    factory = sessions(make_engine(database))
    with factory() as db:
        alice = db.scalar(select(Account).where(Account.name == "alice"))
        bob = db.scalar(select(Account).where(Account.name == "bob"))
        mine = db.scalars(select(Item).join(Assignment).where(
            Assignment.account_id == alice.id)).all()
        for k, item in enumerate(mine):
            if item.task == "postedit":
                value = {"nuggets": [{**n, "importance": "vital"} for n in
                                     item.shown["nuggets"]]}
            else:
                value = {q["key"]: q["labels"][k % len(q["labels"])]
                         for q in item.shown["questions"]}
            db.add(Judgment(item_id=item.id, account_id=alice.id, value=value))
        db.commit()
        export_project(db, "sample", tmp_path / "out")
        export_project(db, "rag", tmp_path / "rag")
        base = tmp_path / "out" / "by-assessor" / "alice"
        for task, path in (("assign", base / "assign"), ("support", base / "support"),
                           ("battle", base / "battles"), ("postedit", base / "nuggets.jsonl")):
            assert import_judgments(db, "sample", task, "bob", [path]) > 0
        import_judgments(db, "rag", "rubric", "bob",
                         [tmp_path / "rag" / "by-assessor" / "alice" / "rubrics"])
        values = {(j.item_id, j.account_id): j.value for j in db.scalars(select(Judgment))}
        for item in mine:
            theirs, ours = values[(item.id, alice.id)], values[(item.id, bob.id)]
            if item.task == "postedit":
                assert [n["text"] for n in ours["nuggets"]] == \
                    [n["text"] for n in theirs["nuggets"]]
            else:
                assert ours == theirs, item.task
    sheet = tmp_path / "key.tsv"
    subprocess.run([sys.executable, "-m", "nuggetizer", "export-nuggets",
                    str(tmp_path / "key.jsonl"), "-o", str(sheet)], check=True)
    with factory() as db:
        assert import_judgments(db, "sample", "postedit", "boss", [sheet]) == 4


def test_llm_judgments_become_suggestions_shown_only_where_the_project_says(tmp_path: Path
                                                                           ) -> None:
    """Judgment files given as the LLM's are each item's suggestions (the same labels); the
    page shows them when the project shows the LLM, and never otherwise."""
    from workbench_server import ROOT, write_key

    from nuggetizer.workbench.build import ProjectSpec, create_project
    from nuggetizer.workbench.pages import item_page

    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    factory = sessions(make_engine(database))
    with factory() as db:
        alice = db.scalar(select(Account).where(Account.name == "alice"))
        boss = db.scalar(select(Account).where(Account.name == "boss"))
        assigned = db.scalars(select(Item).join(Assignment).where(
            Assignment.account_id == alice.id, Item.task == "assign")).all()
        for k, item in enumerate(assigned):
            db.add(Judgment(item_id=item.id, account_id=alice.id, value={
                q["key"]: q["labels"][(k + j) % 3]
                for j, q in enumerate(item.shown["questions"])}))
        db.commit()
        export_project(db, "sample", tmp_path / "out")
        judged = {(i.record["run_id"], i.qid): {q["key"]: q["labels"][(k + j) % 3] for j, q
                                                in enumerate(i.shown["questions"])}
                  for k, i in enumerate(assigned)}
        for name, show in (("shown", True), ("hidden", False)):
            create_project(db, ProjectSpec(
                name, ROOT / "tracks/sample/topics.tsv", ("assign",), ("alice",),
                [ROOT / "runs/sample/good.jsonl", ROOT / "runs/sample/middling.jsonl",
                 tmp_path / "hostile.jsonl"], write_key(tmp_path / "key2.jsonl"),
                show_llm=show, llm={"assign": [tmp_path / "out" / "assign"]}), boss)
            project = db.scalar(select(Project).where(Project.name == name))
            items = db.scalars(select(Item).where(Item.project_id == project.id)).all()
            for item in items:  # the LLM judged alice's topics only
                assert item.suggestion == judged.get((item.record["run_id"], item.qid))
            assert sum(i.suggestion is not None for i in items) == len(judged)
            assert project.settings["show_llm"] is show
        first = next(i for i in items if i.suggestion)
        page = item_page("assign", first.shown, {}, first.suggestion, "/x", "t")
        assert "LLM suggests" in page
        assert "LLM suggests" not in item_page("assign", first.shown, {}, None, "/x", "t")


def test_adjudicated_labels_go_into_the_export_with_who_decided_and_score_reads_them(
        tmp_path: Path) -> None:
    """Alice and Bob differ on every answer's second nugget; the organizer settles some:
    the export carries the settled label, both assessors' and who decided, and lists the
    unsettled ones; `score` scores the settled labels."""
    import subprocess
    import sys

    from nuggetizer.workbench.campaign import disagreements_of, settle_question

    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=1.0)
    with sessions(make_engine(database))() as db:
        people = {a.name: a for a in db.scalars(select(Account))}
        items = db.scalars(select(Item).where(Item.task == "assign")).all()
        for item in items:
            for who, second in (("alice", "support"), ("bob", "not_support")):
                db.add(Judgment(item_id=item.id, account_id=people[who].id, value={
                    "n0": "support", "n1": second, "n2": "not_support"}))
        db.commit()
        found = disagreements_of(db, "sample")
        assert [d.question["key"] for d in found] == ["n1"] * len(items)
        settled = {d.item.ref for d in found[: len(found) // 2]}
        for d in found:
            if d.item.ref in settled:
                settle_question(db, "sample", d.item.ref, "n1", "partial_support",
                                people["boss"])
        export_project(db, "sample", tmp_path / "out")
        refs = {(i.record["run_id"], i.qid): i.ref for i in items}
    records = [json.loads(line) for f in (tmp_path / "out" / "assign").glob("*.jsonl")
               for line in f.read_text().splitlines()]
    assert len(records) == len(items)
    for r in records:
        p = r["provenance"]
        assert p["assessors"] == ["alice", "bob"]
        assert p["labels"]["bob"]["n1"] == "not_support" and p["labels"]["alice"]["n1"] == \
            "support"
        if refs[(r["run_id"], r["qid"])] in settled:
            assert r["nuggets"][1]["assignment"] == "partial_support"
            assert p["adjudicated"]["n1"]["by"] == "boss" and "unsettled" not in p
        else:  # not settled yet: the first assessor's, and said
            assert r["nuggets"][1]["assignment"] == "support" and p["unsettled"] == ["n1"]
    per_topic = tmp_path / "per-topic.tsv"
    subprocess.run([sys.executable, "-m", "nuggetizer", "score", str(tmp_path / "out" / "assign"),
                    "--nuggets", str(tmp_path / "key.jsonl"), "--per-topic", str(per_topic),
                    "-o", str(tmp_path / "board.tsv")], check=True, capture_output=True)
    scored = {(run, qid, m): float(v) for run, qid, m, v in
              (line.split("\t") for line in per_topic.read_text().splitlines()[1:])}
    for r in records:
        half = r["nuggets"][1]["assignment"] == "partial_support"
        # A: support 1, partial 0.5, over the three nuggets
        assert scored[(r["run_id"], r["qid"], "A")] == pytest.approx(
            (1 + (0.5 if half else 1)) / 3, abs=1e-4)


def test_post_edit_agreement_compares_nuggets_by_id_and_only_labels_a_person_set(
        tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=1.0)
    factory = sessions(make_engine(database))
    with factory() as db:
        people = {a.name: a for a in db.scalars(select(Account))}
        project = db.scalar(select(Project).where(Project.name == "sample"))
        items = db.scalars(select(Item).where(Item.task == "postedit")).all()
        for item in items:  # nobody chose an importance: the pre-filled ones are no label
            for who in ("alice", "bob"):
                db.add(Judgment(item_id=item.id, account_id=people[who].id,
                                value={"nuggets": list(item.shown["nuggets"])}))
        db.commit()
        assert "postedit" not in agreement(db, project)
        a_labels, b_labels = [], []
        for k, item in enumerate(items):
            nuggets = item.shown["nuggets"]
            alice = [{**n, "importance": ("vital", "okay")[(j + k) % 2], "set": True}
                     for j, n in enumerate(nuggets)]
            bob = [{**n, "importance": ("vital", "okay")[(j + k + (j == 1)) % 2],
                    "set": j != 2} for j, n in enumerate(nuggets)]
            bob = [bob[-1], *bob[:-1]]  # bob moved the last nugget first: ids, not places
            bob.insert(0, {"id": "new-1", "text": "bob's own", "importance": "vital",
                           "set": True, "source": "post-edit"})
            for who, value in (("alice", alice), ("bob", bob)):
                j = db.scalar(select(Judgment).where(Judgment.item_id == item.id,
                                                     Judgment.account_id == people[who].id))
                j.value = {"nuggets": value}
            by_id = {n["id"]: n for n in bob}
            for n in alice:
                theirs = by_id.get(n["id"])
                if theirs is not None and theirs.get("set"):
                    a_labels.append(ORDINAL["postedit"][n["importance"]])
                    b_labels.append(ORDINAL["postedit"][theirs["importance"]])
        db.commit()
        found = agreement(db, project)["postedit"]
    pair = next(p for p in found.pairs if (p.a, p.b) == ("alice", "bob"))
    assert pair.items == len(a_labels) == 2 * len(items)
    assert pair.measures["kappa"] == pytest.approx(cohen_kappa(a_labels, b_labels))
    assert pair.measures["kappa"] < 1.0
