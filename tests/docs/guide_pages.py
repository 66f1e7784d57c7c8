"""The command blocks of the guide's tutorials and how-to pages, read as a reader would run
them: every ```sh block in page order, each a step of the page's one terminal session.

What a page may say to its tests, in HTML comments (the built page does not show them):

- `<!-- not-run: REASON -->` on the line before a ```sh block: the block is not run (a
  download, a server of the reader's own, a GPU, a person at a keyboard), and the test says so
  with the reason;
- `<!-- test-setup: COMMANDS -->` (one or more lines): shell commands run at that point, for
  what the page asks the reader to have (the track's files, `runs/my_run.jsonl` for "your
  run", a PostgreSQL server): `$SHARED_DATA` is ../shared/data, `$CHECKOUT` the repository,
  `$PORT` a free port;
- `<!-- test-teardown: COMMANDS -->`: run when the page is done, whether its blocks passed or
  not (a server the set-up started, stopped).

A block in another fence (```bash, ```shell, ```console) or a command in an indented code block
is an error: every command of these pages is run or skipped by name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FOLDERS = ("tutorials", "how-to")
SHELL_FENCES = ("bash", "shell", "console", "zsh", "sh-session")
RESULTS: dict[str, Any] = {}  # page -> its test session (test_pages.py), for the summary
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
SETUP = re.compile(r"<!--\s*test-setup:(.*?)-->", re.S)
TEARDOWN = re.compile(r"<!--\s*test-teardown:(.*?)-->", re.S)


@dataclass
class Step:
    """A ```sh block of a page (`skip`: why it is not run) or a test set-up."""

    page: str
    line: int
    code: str
    skip: str | None = None
    setup: bool = False
    error: str | None = None  # the page cannot be read: this step fails with why

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}" + (" (set-up)" if self.setup else "")


@dataclass
class Page:
    path: Path
    steps: list[Step] = field(default_factory=list)
    teardown: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.relative_to(DOCS).as_posix()

    @property
    def tutorial(self) -> bool:
        return self.name.startswith("tutorials/")

    @property
    def blocks(self) -> list[Step]:
        return [s for s in self.steps if not s.setup]


class PageError(ValueError):
    """A page whose commands cannot all be accounted for."""


def pages() -> list[Page]:
    """Every tutorial and how-to page, read (a page that cannot be: one failing step)."""
    found = []
    for path in (p for folder in FOLDERS for p in sorted((DOCS / folder).glob("*.md"))):
        try:
            found.append(read_page(path))
        except PageError as exc:
            page = Page(path)
            page.steps.append(Step(page.name, 0, "", error=str(exc)))
            found.append(page)
    return found


def read_page(path: Path) -> Page:
    page = Page(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    name = page.name
    skip: tuple[int, str] | None = None
    k = 0
    while k < len(lines):
        line = lines[k]
        setup = SETUP.match("\n".join(lines[k:])) if line.lstrip().startswith(
            "<!-- test-setup:") else None
        if setup is not None:
            page.steps.append(Step(name, k + 1, setup.group(1).strip(), setup=True))
            k += setup.group(0).count("\n") + 1
            continue
        teardown = TEARDOWN.match("\n".join(lines[k:])) if line.lstrip().startswith(
            "<!-- test-teardown:") else None
        if teardown is not None:
            page.teardown.append(teardown.group(1).strip())
            k += teardown.group(0).count("\n") + 1
            continue
        marker = NOT_RUN.match(line.strip())
        if marker is not None:
            skip = (k + 1, marker.group(1))
            k += 1
            continue
        fence = re.match(r"^(\s*)(```+)\s*([\w-]*)", line)
        if fence is not None:
            end = next((j for j in range(k + 1, len(lines))
                        if lines[j].strip().startswith(fence.group(2))), None)
            if end is None:
                raise PageError(f"{name}:{k + 1}: a fence never closed")
            language = fence.group(3)
            if language in SHELL_FENCES:
                raise PageError(f"{name}:{k + 1}: a ```{language} block: write commands in "
                                "```sh blocks, which the guide's tests run")
            if language == "sh":
                reason = None
                if skip is not None:
                    reason = skip[1]
                    skip = None
                code = "\n".join(x[len(fence.group(1)):] for x in lines[k + 1:end])
                page.steps.append(Step(name, k + 1, code, skip=reason))
            elif skip is not None:
                raise PageError(f"{name}:{skip[0]}: a not-run marker before a ```{language} "
                                "block: it marks ```sh blocks only")
            k = end + 1
            continue
        if skip is not None and line.strip():
            raise PageError(f"{name}:{skip[0]}: a not-run marker that no ```sh block follows")
        if re.match(r"^ {4,}nuggetizer \w", line) and (k == 0 or not lines[k - 1].strip()):
            raise PageError(f"{name}:{k + 1}: a command in an indented code block: put it in "
                            "a ```sh block")
        k += 1
    if skip is not None:
        raise PageError(f"{name}:{skip[0]}: a not-run marker that no ```sh block follows")
    return page


def logical_lines(code: str) -> list[str]:
    """The block's commands one per line (backslash continuations joined, comment lines and
    trailing comments dropped)."""
    joined = re.sub(r"\\\n\s*", " ", code)
    found = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            found.append(line)
    return found
