"""The live board: each task's leaderboard from what is judged so far, scored the way `score`
scores the project's export (the export is written to a temporary folder and read back), so
an item not judged yet is left out and counted, never a 0."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.orm import Session

from nuggetizer.errors import NothingJudgedError, NuggetizerError
from nuggetizer.interface.registry import make_method
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.files import ScoreFiles, ScoreScope, left_out_text, score_files
from nuggetizer.scoring.tables import leaderboard_tsv
from nuggetizer.workbench.build import METHODS
from nuggetizer.workbench.exports import FOLDERS, export_project
from nuggetizer.workbench.store import Project

KEYS = {"assign": "nuggets", "rubric": "rubrics"}  # the key file a task is scored with


@dataclass
class Board:
    """One task's board: its leaderboard (TSV rows, ranked) and what it leaves out, or why
    there is none yet."""

    task: str
    rows: list[list[str]]
    left_out: str
    items: int
    not_judged: int
    note: str = ""


def _key(project: Project, task: str) -> Path | None:
    name = KEYS.get(task)
    path = project.settings.get("files", {}).get(name) if name else None
    return Path(path) if path and Path(path).is_file() else None


def _scored(project: Project, task: str, folder: Path) -> ScoreTable:
    settings = {"grading": project.settings.get("grading", "binary")} if task == "rubric" \
        else {}
    method = make_method(METHODS[task], settings)
    key = _key(project, task)
    if key is None and method.judging.scored_with_key:
        raise NothingJudgedError(f"the {KEYS[task]} key this project was made from is no "
                                 "longer readable, so its board cannot be scored")
    return score_files(method, [folder], ScoreScope(key=key), ScoreFiles())


def boards(db: Session, project: Project) -> list[Board]:
    """The board of every task the export scores (post-editing makes a key, not scores)."""
    found = []
    with tempfile.TemporaryDirectory(prefix="workbench-board-") as tmp:
        out = Path(tmp) / "export"
        counts = export_project(db, project.name, out)
        for task in project.settings.get("tasks", []):
            if task == "postedit":
                continue
            items = counts.get(f"{task} items", 0)
            yet = counts.get(f"{task} not judged yet", 0)
            try:
                table = _scored(project, task, out / FOLDERS[task])
            except NuggetizerError as exc:
                nothing = isinstance(exc, NothingJudgedError) and yet == items
                found.append(Board(task, [], "", items, yet,
                                   note="nothing judged yet" if nothing else str(exc)))
                continue
            rows = [line.split("\t") for line in leaderboard_tsv(table).splitlines()]
            found.append(Board(task, rows, left_out_text(table), items, yet))
    return found
