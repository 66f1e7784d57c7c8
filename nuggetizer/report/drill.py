"""The report's drill-down pages: one per run (its score on every topic, and under each topic
what its judgments show: the answer with each nugget's verdict, its citations' support, its
battles ...) and one per topic (its query, every run's scores on it, the answer key with the
runs that supported each nugget fully or partly, the answers best first, the topic's battles).

Light at track scale: what pages share is written once. Each page is a small shell holding its
own scores (compact JSON); the names of the runs and topics are in `data/index.js`; each
topic's judgments in `data/topics/NAME.js` (its key once, each distinct answer once, one
verdict character per nugget of an answer, the methods' pieces of HTML), deflated and in
base64; `drill.js`, one renderer, draws every page from them in the browser. Offline and
self-contained: scripts beside the pages, no network; every text set as text (the methods'
pieces escaped by them)."""

from __future__ import annotations

import html
import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from nuggetizer.formats.writing import write_bytes_atomic
from nuggetizer.interface.report_part import ReportPart, unkept
from nuggetizer.report.html import NOT_RECORDED, SCRIPT, STYLE, Cell, page_html, rows_html
from nuggetizer.scoring.engine import ScoreTable

RUNS, TOPICS, DATA = "runs", "topics", "data"
RENDERER, STYLES = "drill.js", "drill.css"
# base 85 (RFC 1924's characters, none of which ends a JavaScript string): 4 bytes in 5
# characters, where base 64 takes 6
BASE85 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
COUNTS = ("battles",)  # measures that are counts: printed whole
OPEN_BYTES = 2 * 2**20  # topics' data up to this size in all: every judgment shown at once
LEVEL = 4  # zlib's level for the topics' data: 0.36 of their size at 150 x 300 in 0.4 of the
# time of level 6 (0.34)
E = html.escape


def file_names(ids: Iterable[str]) -> dict[str, str]:
    """A file name (`.html`) for each id: its safe characters, a number added where two ids
    would share one (case aside)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for ident in ids:
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", ident)[:100].lstrip(".") or "_"
        name, k = stem, 1
        while name.lower() in taken:
            k += 1
            name = f"{stem}-{k}"
        taken.add(name.lower())
        names[ident] = f"{name}.html"
    return names


def links(table: ScoreTable) -> tuple[dict[str, str], dict[str, str]]:
    """The pages' paths from index.html: {run: runs/NAME.html}, {topic: topics/NAME.html}."""
    runs = {r: f"{RUNS}/{n}" for r, n in file_names(table.ranking()).items()}
    topics = {q: f"{TOPICS}/{n}" for q, n in file_names(table.topics).items()}
    return runs, topics


def number(measure: str, value: float | None) -> str:
    """A value as the pages print it: 4 decimals (as the TSV tables), a count (battles)
    whole."""
    if value is None:
        return "-"
    if measure in COUNTS and float(value).is_integer():
        return str(int(value))
    return f"{value:.4f}"


def _value(row: Mapping[str, float] | None, measure: str) -> Cell:
    value = None if row is None else row.get(measure)
    return Cell(number(measure, value), sort=value)


def _compact(measure: str, value: float | None) -> float | int | None:
    """A value as the pages' data hold it: what `number` prints, as a number."""
    if value is None:
        return None
    if measure in COUNTS and float(value).is_integer():
        return int(value)
    return round(float(value), 4)


def base85(data: bytes) -> bytes:
    """`data` in BASE85: each 4 bytes (the last zero-padded) as a big-endian number written
    in 5 digits, most significant first (drill.js reads them back)."""
    words = np.frombuffer(data + b"\0" * (-len(data) % 4), dtype=">u4").astype(np.int64)
    digits = np.empty((len(words), 5), dtype=np.uint8)
    for place in range(4, -1, -1):
        words, digits[:, place] = np.divmod(words, 85)
    return np.frombuffer(BASE85, dtype=np.uint8)[digits].tobytes()


def _json(value: Any) -> str:
    """JSON for a <script> element: compact, and no "</" that would end it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def _topic_data(part: ReportPart, qid: str, runs: Sequence[str], number_of: Mapping[str, int]
                ) -> dict[str, Any] | None:
    """One topic's judgments: its key, its distinct answers and, for each run judged on it,
    [run number, answer number (-1: none), verdicts (None: none), pieces of HTML]."""
    answered = part.answers.get(qid, {})
    pieces = {r: part.details[r][qid] for r in runs if qid in part.details.get(r, {})}
    if not answered and not pieces:
        return None
    key = part.key.get(qid, [])
    answers: dict[str, int] = {}
    entries = []
    for run in runs:
        if run not in answered and run not in pieces:
            continue
        answer, codes = answered.get(run, (None, None))
        place = -1 if answer is None else answers.setdefault(answer, len(answers))
        entries.append([number_of[run], place,
                        None if codes is None else codes.ljust(len(key), "-"),
                        [unkept(p) for p in pieces.get(run, ())] or None])
    return {"key": [list(k) for k in key], "answers": list(answers), "runs": entries}


def _write_topic(number: int, path: Path, data: bytes) -> int:
    """A topic's data file, `DRILL.topic(number, length, "deflated in base 85")`; its
    size."""
    deflated = zlib.compress(data, LEVEL)
    text = f"DRILL.topic({number},{len(deflated)},\"".encode() + base85(deflated) + b'");\n'
    write_bytes_atomic(path, text, sync=False)
    return len(text)


def write_drill(out_dir: Path, table: ScoreTable, ranks: Mapping[str, int],
                queries: Mapping[str, str], part: ReportPart, title: str) -> None:
    """Write every run's and every topic's page under `out_dir` (runs/, topics/), their data
    (data/) and the renderer."""
    run_links, topic_links = links(table)
    measures = list(table.measures)
    ranked = table.ranking()
    number_of = {r: k for k, r in enumerate(ranked)}
    names = {q: Path(topic_links[q]).stem for q in table.topics}
    def topic(k: int) -> tuple[int, list[int], int] | None:
        """Topic k's data file written: (k, the runs it holds, its size), None if none."""
        data = _topic_data(part, table.topics[k], ranked, number_of)
        if data is None:
            return None
        path = out_dir / DATA / TOPICS / f"{names[table.topics[k]]}.js"
        return k, [entry[0] for entry in data["runs"]], _write_topic(
            k, path, _json(data).encode("utf-8"))

    # in threads (zlib and numpy let go of the interpreter meanwhile), one topic's data in
    # memory at a time in each
    with ThreadPoolExecutor(4) as pool:
        written = [found for found in pool.map(topic, range(len(table.topics))) if found]
    data_files = {table.topics[k]: f"{DATA}/{TOPICS}/{names[table.topics[k]]}.js"
                  for k, _, _ in written}
    runs_on = {table.topics[k]: runs for k, runs, _ in written}  # topic: runs with data
    judged: dict[str, list[int]] = {}  # run: the numbers of the topics it has data on
    for k, runs, _ in written:
        for number in runs:
            judged.setdefault(ranked[number], []).append(k)
    size = sum(length for _, _, length in written)
    index = {"title": title, "measures": measures,
             "primary": measures.index(table.primary) if table.primary in measures else 0,
             "counts": [m in COUNTS for m in measures],
             "runs": [[r, ranks[r], run_links[r]] for r in ranked],
             "topics": [[q, queries.get(q, NOT_RECORDED), topic_links[q], data_files.get(q)]
                        for q in table.topics],
             "open": size <= OPEN_BYTES}
    _write(out_dir / DATA / "index.js", f"window.DRILL={{index:{_json(index)}}};\n")
    _write(out_dir / RENDERER, SCRIPT.replace('document.querySelectorAll("table")'
                                              '.forEach(sortable);', "") + "\n"
           + files("nuggetizer.report").joinpath(RENDERER).read_text(encoding="utf-8"))
    _write(out_dir / STYLES, STYLE + "\n")
    home = "<p><a href='../index.html'>&larr; " + E(title) + "</a></p>"
    said = ("" if data_files else "<p class='none'>The judgments themselves are not shown: a "
            "per-topic table holds only scores (report a method's judgment files for "
            "them).</p>")
    for run in ranked:
        rows = table.per_topic.get(run, {})
        mine = judged.get(run, [])
        shell = {"kind": "run", "run": number_of[run],
                 "judged": True if len(mine) == len(table.topics) else mine,
                 "scores": [[_compact(m, rows[q].get(m)) for m in measures] if q in rows
                            else None for q in table.topics]}
        body = [home, f"<h1>{ranks[run]}. {E(run)}</h1>",
                rows_html(["measure", "value"], [[m, _value(table.means[run], m)]
                                                 for m in measures], ["text run"]),
                said, *_renderer(shell)]
        _write(out_dir / run_links[run], page_html(f"{run}: {title}", body, f"../{STYLES}"))
    first = table.primary
    for qid in table.topics:
        scored = [r for r in ranked if qid in table.per_topic.get(r, {})]
        scored.sort(key=lambda r: -(table.per_topic[r][qid].get(first, float("-inf"))))
        theirs = runs_on.get(qid, [])
        shell = {"kind": "topic", "topic": table.topics.index(qid),
                 "judged": True if len(theirs) == len(ranked) else theirs,
                 "data": qid in data_files,
                 "scores": [[number_of[r], *(_compact(m, table.per_topic[r][qid].get(m))
                                             for m in measures)] for r in scored]}
        body = [home, f"<h1>Topic {E(qid)}</h1>",
                f"<p class='answer'>{E(queries.get(qid, NOT_RECORDED))}</p>",
                f"<p>{len(scored)} of {len(ranked)} runs scored, best first on "
                f"{E(first)}; a run's name leads to its judgment of this topic.</p>",
                *_renderer(shell, data_files.get(qid))]
        _write(out_dir / topic_links[qid], page_html(f"{qid}: {title}", body, f"../{STYLES}"))


def _renderer(shell: Mapping[str, Any], data: str | None = None) -> list[str]:
    """The scripts that draw a page: its own data, the index, the renderer (and the topic's
    data, on its own page)."""
    return ["<div id='drill'><noscript><p class='none'>The tables and judgments of this page "
            "are drawn by its script: allow scripts to see them.</p></noscript></div>",
            f"<script>window.PAGE={_json(shell)};</script>",
            f"<script src='../{DATA}/index.js'></script>",
            f"<script src='../{RENDERER}'></script>",
            *([f"<script src='../{E(data)}'></script>"] if data else [])]


def _write(path: Path, text: str) -> None:
    """A page, atomically (not fsynced one by one: hundreds of pages a rerun rewrites)."""
    write_bytes_atomic(path, text.encode("utf-8"), sync=False)
