"""What the assessors of the TREC RAG 2026 development data see, item by item (no server):
every task's topic with its narrative and sub-narratives (post-editing included: it showed an
empty query), each nugget's sub-narrative among the choices, answers' Markdown rendered (no raw
`##`, no HTML from the answer), and battles one presentation order a page, the two far apart
in the queue, the run shown first drawn per battle from the seed and never by name."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from campaign_data import NUGGETS, RUNS, TOPICS, narratives, nuggets, write_campaign  # noqa: E402
from sqlalchemy import select  # noqa: E402
from workbench_server import HOSTILE, PASSWORD  # noqa: E402

from nuggetizer.formats.narratives import clean  # noqa: E402
from nuggetizer.workbench.build import ProjectSpec, create_project  # noqa: E402
from nuggetizer.workbench.exports import export_project  # noqa: E402
from nuggetizer.workbench.pages import item_page  # noqa: E402
from nuggetizer.workbench.security import add_account  # noqa: E402
from nuggetizer.workbench.store import Account, Item, Project, make_engine, sessions  # noqa: E402


def _project(tmp: Path, name: str, seed: int = 0) -> tuple[object, list[Item]]:
    track = write_campaign(tmp / "track")
    factory = sessions(make_engine(str(tmp / "wb.sqlite")))
    db = factory()
    if db.scalar(select(Account).where(Account.name == "boss")) is None:
        add_account(db, "boss", "organizer", PASSWORD)
        add_account(db, "ann", "assessor", PASSWORD)
    boss = db.scalar(select(Account).where(Account.name == "boss"))
    create_project(db, ProjectSpec(
        name, TOPICS, ("postedit", "assign", "support", "battle", "rubric"), ("ann",),
        [track[f"run:{r}"] for r in RUNS], NUGGETS, track["corpus"], track["rubrics"],
        seed=seed), boss)
    project = db.scalar(select(Project).where(Project.name == name))
    items = list(db.scalars(select(Item).where(Item.project_id == project.id)
                            .order_by(Item.position)))
    return db, items


def test_every_item_shows_its_narrative_and_sub_narratives(tmp_path: Path) -> None:
    db, items = _project(tmp_path, "dev26")
    texts, keys = narratives(), nuggets()
    assert {i.task for i in items} == {"postedit", "assign", "support", "battle", "rubric"}
    for item in items:
        topic = item.shown["topic"]
        assert topic["narrative"] == texts[item.qid], item.task
        assert topic["sub_narratives"], (item.task, item.qid)
    posts = [i for i in items if i.task == "postedit"]
    assert len(posts) == 22
    for item in posts:
        subs = item.shown["topic"]["sub_narratives"]
        for shown, original in zip(item.shown["nuggets"], keys[item.qid], strict=True):
            assert shown["mapped_sub_narrative"] == clean(original["mapped_sub_narrative"])
            assert shown["mapped_sub_narrative"] in subs  # never a blank drop-down
    export_project(db, "dev26", tmp_path / "out")  # type: ignore[arg-type]
    key = [json.loads(line) for line in (tmp_path / "out" / "nuggets.jsonl").read_text()
           .splitlines()]
    assert [k["query"] for k in key] == [texts[k["qid"]] for k in key]


def test_answers_markdown_is_rendered_and_nothing_of_it_runs(tmp_path: Path) -> None:
    _, items = _project(tmp_path, "dev26")
    rubric = next(i for i in items if i.task == "rubric" and i.record["run_id"] ==
                  "dev-thorough")
    page = item_page("rubric", rubric.shown, {}, None, "/x", "t")
    answer = page[page.index('id="answer"'):page.index("</section>", page.index('id="answer"'))]
    assert "<h2>What matters for topic" in answer and "## " not in answer
    assert answer.count("<br />") >= 3  # each answer object on a line of its own
    hostile = {**rubric.shown, "answer": " ".join(HOSTILE) + "\n## Heading"}
    page = item_page("rubric", hostile, {}, None, "/x", "t")
    assert "<script>window" not in page and "<img" not in page and "<a " not in page
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert "[click me](javascript:window.pwned=3)" in page  # a link shown as its text


def test_battles_are_one_order_a_page_far_apart_the_first_run_drawn_per_battle(
        tmp_path: Path) -> None:
    db, items = _project(tmp_path, "seed0", seed=0)
    battles = [i for i in items if i.task == "battle"]
    pairs: dict[tuple, list[Item]] = defaultdict(list)
    for i in battles:
        pairs[(i.qid, i.record["run_a"], i.record["run_b"])].append(i)
    assert len(pairs) == 22 * 3 and all(len(v) == 2 for v in pairs.values())
    for first, second in pairs.values():
        assert len(first.shown["questions"]) == 1
        assert {first.record["first"], second.record["first"]} == \
            {first.record["run_a"], first.record["run_b"]}
        assert abs(first.position - second.position) >= len(pairs) // 2  # far apart
        page = item_page("battle", first.shown, {}, None, "/x", "t")
        assert not any(r in page for r in RUNS)
        assert "swapped" not in page and "Order 2" not in page
    shown_first = {ids: min(v, key=lambda i: i.position).record["first"]
                   for ids, v in pairs.items()}
    alphabetical = sum(first == ids[1] for ids, first in shown_first.items())
    assert 0 < alphabetical < len(pairs)  # drawn, not by name
    _, again = _project(tmp_path, "seed0-again", seed=0)
    _, other = _project(tmp_path, "seed1", seed=1)

    def draws(found: list[Item]) -> list[str]:
        return [i.record["first"] for i in found if i.task == "battle"]
    assert draws(again) == draws(items)  # the same seed, the same draw
    assert draws(other) != draws(items)
