"""The leaderboard for a paper: `leaderboard.md` rendered by a Markdown renderer (markdown-it,
tables and strike-through on) gives back every run id as it is, whatever ASCII character it
holds, in columns aligned as their contents (text left, numbers right), with and without a
group column; `leaderboard.tex` writes each such character as a LaTeX command or escape."""

from __future__ import annotations

import html
import re
import string
from pathlib import Path

import pytest

pytest.importorskip("markdown_it", reason="markdown-it-py (the test extra) is not installed")

from click.testing import CliRunner  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402

from nuggetizer.cli import cli  # noqa: E402

# a run id for each ASCII punctuation character, between letters and at the edges
IDS = [f"r{k}{c}x{c}" for k, c in enumerate(string.punctuation) if c not in "\t"] + \
    ["--dash--", "_edge_", "a\\|b", "``q''", "<b>bold</b>", "*em* and **strong**"]

# the LaTeX escapes read back (the test's own table of what each command sets)
LATEX_READ = {r"\textbackslash{}": "\\", r"\&": "&", r"\%": "%", r"\$": "$", r"\#": "#",
              r"\_": "_", r"\{": "{", r"\}": "}", r"\textasciitilde{}": "~",
              r"\textasciicircum{}": "^", r"\textbar{}": "|", r"\textless{}": "<",
              r"\textgreater{}": ">", r"\textquotedbl{}": '"', r"\textquotesingle{}": "'",
              r"\textasciigrave{}": "`", "-{}": "-"}
# what LaTeX's default (OT1) fonts do not set as themselves when written bare
OT1_ODD = set("|<>\"'`")


def read_latex(cell: str) -> str:
    """A LaTeX cell read back: each escape to its character; a bare special character (or a
    "--" ligature) is an error."""
    found, k = [], 0
    while k < len(cell):
        for code, char in LATEX_READ.items():
            if cell.startswith(code, k):
                found.append(char)
                k += len(code)
                break
        else:
            char = cell[k]
            assert char not in "\\&%$#_{}~^" and char not in OT1_ODD, (cell, k)
            assert not cell.startswith("--", k), cell
            found.append(char)
            k += 1
    return "".join(found)


def rendered_cells(markdown: str) -> tuple[list[str], list[list[str]]]:
    """The table's column alignments and the text of each body cell, as a renderer gives."""
    page = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    head = re.findall(r"<th(?: style=\"text-align:(\w+)\")?>", page)
    body = page.split("<tbody>", 1)[1]
    raw = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
           for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    assert all("<" not in c for row in raw for c in row), raw  # no markup made of an id
    return head, [[html.unescape(c) for c in row] for row in raw]


def write_table(path: Path, topics: int) -> None:
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for k, run in enumerate(IDS):
        values = [((k * 7 + t * 3) % 11) / 10 for t in range(topics)]
        lines += [f"{run}\tq{t}\tV_strict\t{v}" for t, v in enumerate(values)]
        lines.append(f"{run}\tall\tV_strict\t{sum(values) / topics if topics else k / 100}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("topics", [0, 12])
def test_every_character_of_a_run_id_reads_back_from_markdown_and_latex(
        tmp_path: Path, topics: int) -> None:
    table = tmp_path / "per_topic.tsv"
    write_table(table, topics)
    out = tmp_path / "report"
    done = CliRunner().invoke(cli, ["report", str(table), "-o", str(out), "--no-pages",
                                    "--trials", "200"])
    assert done.exit_code == 0, done.output
    head, rows = rendered_cells((out / "leaderboard.md").read_text(encoding="utf-8"))
    grouped = topics > 0  # the groups need per-topic values
    text = 3 if grouped else 2
    assert head == ["right"] + ["left"] * (text - 1) + ["right"] * (len(head) - text)
    assert sorted(row[1] for row in rows) == sorted(IDS)
    assert all(re.fullmatch(r"\d\.\d{4}", row[text]) for row in rows)
    tex = (out / "leaderboard.tex").read_text(encoding="utf-8")
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", tex)
    assert spec is not None and spec.group(1).startswith("l" * text + "r")
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    cells = [line.removesuffix(r" \\").split(" & ") for line in body.splitlines()]
    assert sorted(read_latex(row[1]) for row in cells) == sorted(IDS)
