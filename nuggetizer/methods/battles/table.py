"""Battles as `score` reads them: one table of arrays (`BattleTable`), read straight from the
battles.jsonl files.

Each line is parsed by orjson and its fields taken by `itemgetter`; every check of the
method's full reader that a well-formed line must pass (the runs differ, each order shows
run A or run B first and only once, each verdict is on the menu) runs on a block of lines at
once, on the arrays of their codes. A line any check refuses goes through the method's full
reader (`judgment_record`, pydantic), which names the file, line and field, or (under
`--lenient`) takes the line as it takes it. So 405k battles score in a couple of seconds,
in the memory of their arrays; the result of a battle is recomputed from its orders' verdicts,
as the full reader does (a hand-edited verdict decides).

Codes: a verdict as the judge gave it (the side shown first won: A, 0; B, 1; tie, 2;
unjudged, 3); a result for run A (a: 0, b: 1, tie: 2, unjudged: 3); a flip (-1: not judged
in both orders).
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

import msgspec
import orjson

from nuggetizer.errors import InputError
from nuggetizer.formats.digests import Digest
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.interface.table import Judged, JudgedTable, Twice
from nuggetizer.labels import UNJUDGED
from nuggetizer.measures.style import FEATURES

VERDICT_CODES = {"A": 0, "B": 1, "tie": 2, UNJUDGED: 3}
VERDICTS = tuple(VERDICT_CODES)
RESULTS = ("a", "b", "tie", UNJUDGED)
CHUNK = 1 << 23  # bytes of lines read and checked at once
_ONE = object()  # the verdict of the second order of a battle judged in one order


# A battle line as the quick path decodes it (msgspec skips every other field, the narrative
# and provenance included, without building them); ids, verdicts and counts as given, checked
# on the block's arrays. A line that does not decode to this goes through the full reader.
class _Order(msgspec.Struct, gc=False):
    first: Any
    verdict: Any


# An order whose verdict is on the menu (msgspec checks it, and gives the menu's own strings)
_QuickOrder = msgspec.defstruct("_QuickOrder", [("first", Any),
                                                ("verdict", Literal[VERDICTS])], gc=False)


def _battle_type(count: Any, order: Any, name: str) -> tuple[Any, Any]:
    """A battle line's type and its sides' type, each style count of type `count`."""
    side = msgspec.defstruct(f"{name}Side", [(f, count, 0) for f in FEATURES], gc=False)
    style = msgspec.defstruct(f"{name}Style", [("a", side), ("b", side)], gc=False)
    battle = msgspec.defstruct(f"{name}Battle", [
        ("qid", Any), ("run_a", Any), ("run_b", Any), ("orders", list[order]),
        ("style", style | None, None)], gc=False)
    return battle, side


# The full reader's battle (counts and verdicts as given, checked on the block), and the quick
# path's: each style count a JSON integer and each verdict on the menu (msgspec checks both
# while decoding; a line with any other count, true or 1.0, or verdict is read by the full
# reader), so that a block's counts become an array at once (`_style_block`).
_Battle, _Side = _battle_type(Any, _Order, "_")
_IntBattle, _ = _battle_type(int, _QuickOrder, "_Int")
_DECODE = msgspec.json.Decoder(_IntBattle).decode
_COUNTS = attrgetter(*FEATURES)
_EACH = tuple(map(attrgetter, FEATURES))
_NO_STYLE = _Side()  # a battle's sides without style
_NOT_QUICK = (msgspec.MsgspecError, ValueError)  # ValueError: e.g. not UTF-8, or 3 orders

FullCheck = Callable[[dict[str, Any], Path, int], dict[str, Any]]


class _Codes(dict[Any, int]):
    """Names to codes, a new name getting the next code."""

    def __missing__(self, key: Any) -> int:
        self[key] = code = len(self)
        return code


class _Verdicts(dict[Any, int]):
    """Verdicts to codes: 4 for the absent second order, -1 for anything off the menu."""

    def __init__(self) -> None:
        super().__init__(VERDICT_CODES)
        self[_ONE] = 4

    def __missing__(self, key: Any) -> int:
        return -1


@dataclass(frozen=True)
class BattleTable(JudgedTable):
    """Battles as arrays, one entry per battle: its topic, run A and run B (codes into
    `topics` and `runs`, both sorted), each order's verdict as given (`first_a`: the first
    order shows run A first), the result for run A, the flip, the unjudged orders, both
    answers' style (battles x (A's covariates, B's); `styled`: whether the battle carries it)
    and where it was read (`file` into `files`, `line`)."""

    runs: list[str]
    topics: list[str]
    files: list[Path]
    topic: Any
    a: Any
    b: Any
    first_a: Any
    v1: Any
    v2: Any
    result: Any
    flip: Any
    unjudged_orders: Any
    style: Any
    styled: Any
    file: Any
    line: Any

    def __len__(self) -> int:
        return len(self.topic)

    def take(self, keep: Any) -> BattleTable:
        """The battles `keep` selects (a mask), names and files as they are (this very table
        when it selects every one: 400k battles are not copied for nothing)."""
        if keep.all():
            return self
        arrays = {f.name: getattr(self, f.name)[keep] for f in fields(self)
                  if f.name not in ("runs", "topics", "files")}
        return replace(self, **arrays)

    def compact(self) -> BattleTable:
        """The same battles, naming only the runs and topics they hold (renumbered)."""
        import numpy as np

        runs = np.zeros(len(self.runs), dtype=bool)
        runs[self.a] = runs[self.b] = True
        topics = np.zeros(len(self.topics), dtype=bool)
        topics[self.topic] = True
        if runs.all() and topics.all():
            return self
        run_code, topic_code = np.cumsum(runs) - 1, np.cumsum(topics) - 1
        return replace(self, runs=[r for r, kept in zip(self.runs, runs) if kept],
                       topics=[q for q, kept in zip(self.topics, topics) if kept],
                       a=run_code[self.a], b=run_code[self.b], topic=topic_code[self.topic])

    def records(self) -> Iterator[dict[str, Any]]:
        """Each battle as the report reads it: ids, orders, result, flip and unjudged."""
        runs, topics = self.runs, self.topics
        for k in range(len(self)):
            a, b = runs[self.a[k]], runs[self.b[k]]
            firsts = (a, b) if self.first_a[k] else (b, a)
            orders = [{"first": firsts[0], "verdict": VERDICTS[self.v1[k]]}]
            if self.v2[k] != 4:
                orders.append({"first": firsts[1], "verdict": VERDICTS[self.v2[k]]})
            yield {"qid": topics[self.topic[k]], "run_a": a, "run_b": b, "orders": orders,
                   "result": RESULTS[self.result[k]], "flipped": bool(self.flip[k] == 1),
                   "unjudged": int(self.unjudged_orders[k])}

    def __iter__(self) -> Iterator[Judged]:
        for k, record in enumerate(self.records()):
            yield Judged(f"{record['run_a']} vs {record['run_b']}", record["qid"], record,
                         self.files[self.file[k]], int(self.line[k]))

    def topics_read(self) -> list[str]:
        import numpy as np

        codes, first = np.unique(self.topic, return_index=True)
        return [self.topics[int(codes[k])] for k in np.argsort(first)]

    def restricted(self, qids: Collection[str]) -> tuple[BattleTable, int]:
        import numpy as np

        wanted = np.array([q in qids for q in self.topics], dtype=bool)
        keep = wanted[self.topic] if len(self) else np.zeros(0, dtype=bool)
        return self.take(keep), int(len(self) - keep.sum())

    def twice(self) -> Twice | None:
        import numpy as np

        n, t = len(self.runs), len(self.topics)
        keys = (self.a.astype(np.int64) * n + self.b) * t + self.topic
        order = np.argsort(keys, kind="stable")
        repeats = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if not len(repeats):
            return None
        # the repeat read last of all the first repeats is not the point: the earliest second
        seconds = order[repeats + 1]
        second = int(seconds.min())
        first = int(order[repeats[seconds.argmin()]])
        return Twice(f"{self.runs[self.a[second]]} vs {self.runs[self.b[second]]}",
                     self.topics[self.topic[second]], self._place(first), self._place(second))

    def _place(self, k: int) -> tuple[Path, int]:
        return self.files[self.file[k]], int(self.line[k])

    def unjudged(self) -> Counter[str]:
        total = int(self.unjudged_orders.sum())
        return Counter({"verdicts": total}) if total else Counter()

    def judged(self) -> tuple[BattleTable, str, dict[str, list[str]]]:
        nothing = self.result == 3
        empty: dict[str, list[str]] = {}
        for k in nothing.nonzero()[0]:
            pair = f"{self.runs[self.a[k]]} vs {self.runs[self.b[k]]}"
            empty.setdefault(pair, []).append(self.topics[self.topic[k]])
        return self.take(~nothing), "answer", empty


def read_table(paths: Sequence[Path], full: FullCheck) -> BattleTable:
    """Every battle of the files as one table; `full(obj, path, line)`: the method's checked
    record, for a line the quick checks refuse (its error names the line)."""
    reader = _Reader(full)
    collecting = gc.isenabled()
    gc.disable()  # hundreds of thousands of short-lived acyclic objects
    try:
        for file in range(len(paths)):
            reader.read(paths, file)
    finally:
        if collecting:
            gc.enable()
    return reader.table(list(paths))


def table_of(records: Sequence[tuple[dict[str, Any], Path, int]]) -> BattleTable:
    """Checked battle records (the full reader's, with where they were read) as one table."""
    index = {path: k for k, path in enumerate(dict.fromkeys(p for _, p, _ in records))}
    paths = list(index)
    reader = _Reader(lambda obj, path, line: obj)
    block = _Block()
    for record, path, line in records:
        block.add(_normalized(record), index[path], line)
    reader.accept(block, paths)
    return reader.table(paths)


def _normalized(record: dict[str, Any]) -> dict[str, Any]:
    """A record the full reader checked, its ids as text and its style kept only when it
    is both sides' covariates."""
    return {**record, "qid": str(record["qid"]), "run_a": str(record["run_a"]),
            "run_b": str(record["run_b"]),
            "orders": [{"first": str(o["first"]), "verdict": o["verdict"]}
                       for o in record["orders"]], "style": _style_or_none(record)}


class _Block:
    """Lines read and not yet checked: each line's fields as given (qid, run_a, run_b, each
    order's first run and verdict, both answers' style), where it was read, the raw line."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.raw: list[bytes] = []
        self.file: Any = []  # each row's file (an index), a list or an array
        self.line: Any = []  # each row's line
        self.whole = False  # every style count a Python int (the quick path's `_IntBattle`)

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, obj: Any, file: int, line: int, raw: bytes = b"") -> None:
        """One record the full reader checked."""
        self.rows.append(_fields(msgspec.convert(obj, _Battle)))
        self.file.append(file)
        self.line.append(line)
        self.raw.append(raw)

    def line_of(self, k: int) -> tuple[bytes, int, int]:
        """Row k's raw line, file and line number."""
        return self.raw[k], int(self.file[k]), int(self.line[k])


def _fields(battle: Any) -> tuple[Any, ...]:
    """qid, run_a, run_b, each order's first run and verdict (the second order's first run
    and verdict `_ONE` when judged in one order), both answers' style (`_NO_STYLE`: none)."""
    orders = battle.orders
    count = len(orders)
    if count == 2:
        one, two = orders
        first, verdict, second, other = one.first, one.verdict, two.first, two.verdict
    elif count == 1:
        first, verdict = orders[0].first, orders[0].verdict
        second, other = first, _ONE
    else:
        raise ValueError("one or two orders")
    style = battle.style
    side_a, side_b = (_NO_STYLE, _NO_STYLE) if style is None else (style.a, style.b)
    return battle.qid, battle.run_a, battle.run_b, first, verdict, second, other, side_a, side_b


class _Reader:
    """Reads lines into blocks, checks each block at once, keeps the checked arrays."""

    def __init__(self, full: FullCheck) -> None:
        self.full = full
        self.runs, self.topics = _Codes(), _Codes()
        self.verdict_codes = _Verdicts()
        self.parts: list[dict[str, Any]] = []

    def read(self, paths: Sequence[Path], file: int) -> None:
        """A file's lines, a block (about `CHUNK` bytes of whole lines) at a time."""
        line, rest = 1, b""
        with paths[file].open("rb") as f:
            digest = Digest(paths[file], os.fstat(f.fileno()))  # the sidecar's, read once
            while chunk := f.read(CHUNK):
                digest.feed(chunk)
                lines = chunk.split(b"\n")
                lines[0] = rest + lines[0]
                rest = lines.pop()  # the start of a line the next chunk ends
                if lines:
                    self.read_lines(lines, file, line, paths)
                    line += len(lines)
        if rest:
            self.read_lines([rest], file, line, paths)
        digest.done()

    def read_lines(self, lines: list[bytes], file: int, first: int, paths: Sequence[Path]
                   ) -> None:
        """Lines `first`, `first` + 1, ... of a file: the battles of those the quick path
        takes checked at once, the others (not a battle's shape, or refused by a check)
        through the full reader, each blank line skipped."""
        rows: list[tuple[Any, ...]] = []
        decode, fields_of, append, skipped = _DECODE, _fields, rows.append, []
        for k, raw in enumerate(lines):
            try:
                append(fields_of(decode(raw)))
            except _NOT_QUICK:
                skipped.append(k)
        import numpy as np

        block = _Block()
        block.rows, block.file = rows, np.full(len(rows), file, dtype=np.int32)
        block.whole = True
        if not skipped:
            block.raw, block.line = lines, np.arange(first, first + len(lines), dtype=np.int32)
        else:
            taken = np.delete(np.arange(len(lines)), skipped)
            block.raw, block.line = [lines[k] for k in taken], (first + taken).astype(np.int32)
        self.close(block, paths, [(lines[k], file, first + k) for k in skipped
                                  if lines[k].strip()])

    def one_by_one(self, lines: Sequence[tuple[bytes, int, int]], paths: Sequence[Path]
                   ) -> None:
        """Lines through the full reader (which raises for a bad one, naming it), in order."""
        if not lines:
            return
        block = _Block()
        for raw, file, number in lines:
            path = paths[file]
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:  # the JSONL reader's message for the bad line
                obj = next(parsed for line, parsed in iter_jsonl(path) if line == number)
            block.add(_normalized(self.full(obj, path, number)), file, number)
        self.accept(block, paths)

    def accept(self, block: _Block, paths: Sequence[Path]) -> None:
        """Keep a block of records the full reader checked (an error for one it should have
        refused)."""
        bad = self.checked(block) if len(block) else None
        if bad is not None:
            _, file, number = block.line_of(int(bad[0]))
            raise InputError(paths[file], number, "battle not understood: its orders must show "
                             "run_a or run_b first, each once, with a verdict of "
                             f"{', '.join(VERDICTS)}")

    def close(self, block: _Block, paths: Sequence[Path],
              others: Sequence[tuple[bytes, int, int]] = ()) -> None:
        """Check a block: keep its arrays, and send the lines a check refuses (or, when a
        name is not text or not hashable, the whole block), with the `others` the quick path
        could not take, through the full reader, in the file's order."""
        if not len(block):
            self.one_by_one(others, paths)
            return
        runs, topics = len(self.runs), len(self.topics)
        try:
            bad = self.checked(block)
        except TypeError:  # an unhashable name or verdict: the full reader says which
            self._forget(runs, topics)
            bad = range(len(block))
        else:
            if not all(type(name) is str for name in list(self.runs)[runs:]) or \
                    not all(type(name) is str for name in list(self.topics)[topics:]):
                self._forget(runs, topics)  # ids that are not text: the full reader str()s
                self.parts.pop()
                bad = range(len(block))
        refused = [block.line_of(k) for k in bad] if bad is not None else []
        self.one_by_one(sorted([*refused, *others], key=lambda line: line[1:]), paths)

    def _forget(self, runs: int, topics: int) -> None:
        for codes, size in ((self.runs, runs), (self.topics, topics)):
            for name in list(codes)[size:]:
                del codes[name]

    def checked(self, block: _Block) -> Any:
        """Keep the block's well-formed battles as arrays; the indices of the others (None:
        every one is well formed)."""
        import numpy as np

        qid, run_a, run_b, first, one, second, two, side_a, side_b = zip(*block.rows)
        n = len(qid)  # the codes are ints of the dicts: an array in one pass each
        topic = np.fromiter(map(self.topics.__getitem__, qid), dtype=np.int32, count=n)
        code = self.runs.__getitem__
        a, b, first_run, second_run = (np.fromiter(map(code, column), dtype=np.int32, count=n)
                                       for column in (run_a, run_b, first, second))
        verdict = self.verdict_codes.__getitem__
        v1 = np.fromiter(map(verdict, one), dtype=np.int8, count=n)
        v2 = np.fromiter(map(verdict, two), dtype=np.int8, count=n)
        single = v2 == 4
        ok = (a != b) & ((first_run == a) | (first_run == b)) & (v1 >= 0) & (v1 <= 3) & (
            single | ((second_run == a) | (second_run == b)) & (second_run != first_run)
            & (v2 >= 0) & (v2 <= 3))
        first_a = first_run == a
        swap = np.array([1, 0, 2, 3])
        r1 = np.where(first_a, v1, swap[np.clip(v1, 0, 3)])
        r2 = np.where(first_a, swap[np.clip(v2, 0, 3)], v2)  # the other run shown first
        missing = (v1 == 3) | (~single & (v2 == 3))
        agree = single | (r1 == r2)
        result = np.where(missing, 3, np.where(agree, r1, 2))
        flip = np.where(single | missing, -1, (~agree).astype(np.int8))
        style, styled = _style_block(side_a, side_b, block.whole)
        ok &= styled | np.array([side is _NO_STYLE for side in side_a], dtype=bool)  # a style
        # that is not counts: the full reader refuses it (or, --lenient, drops it)
        file = np.asarray(block.file, dtype=np.int32)
        line = np.asarray(block.line, dtype=np.int32)
        self.parts.append({"topic": topic[ok], "a": a[ok], "b": b[ok],
                           "first_a": first_a[ok], "v1": v1[ok],
                           "v2": v2[ok], "result": result[ok].astype(np.int8),
                           "flip": flip[ok].astype(np.int8),
                           "unjudged_orders": ((v1 == 3).astype(np.int8) + (v2 == 3))[ok],
                           "style": style[ok], "styled": styled[ok],
                           "file": file[ok], "line": line[ok]})
        bad = np.flatnonzero(~ok)
        return bad if len(bad) else None

    def table(self, paths: list[Path]) -> BattleTable:
        """The arrays of every block in reading order, names sorted (codes renumbered)."""
        import numpy as np

        if not self.parts:
            self.checked_empty()
        arrays = {name: np.concatenate([p[name] for p in self.parts])
                  for name in self.parts[0]}
        self.parts = []
        if len(arrays["line"]) > 1:  # lines the full reader took come after their block
            place = arrays["file"].astype(np.int64) * (int(arrays["line"].max()) + 1) + \
                arrays["line"]
            if (np.diff(place) < 0).any():
                order = np.argsort(place, kind="stable")
                arrays = {name: values[order] for name, values in arrays.items()}
        runs, run_code = _sorted(self.runs)
        topics, topic_code = _sorted(self.topics)
        arrays["a"], arrays["b"] = run_code[arrays["a"]], run_code[arrays["b"]]
        arrays["topic"] = topic_code[arrays["topic"]]
        return BattleTable(runs, topics, paths, **arrays)

    def checked_empty(self) -> None:
        """The arrays of no battle at all (files of blank lines)."""
        block = _Block()
        block.add({"qid": "", "run_a": "", "run_b": "", "orders": [{"first": "",
                                                                    "verdict": None}]}, 0, 0)
        self.checked(block)
        self.parts[-1] = {name: values[:0] for name, values in self.parts[-1].items()}
        self._forget(0, 0)


def _sorted(codes: _Codes) -> tuple[list[str], Any]:
    """The names in sorted order, and old code -> new code."""
    import numpy as np

    names = list(codes)
    order = sorted(range(len(names)), key=names.__getitem__)
    renumber = np.empty(len(names), dtype=np.int64)
    renumber[order] = np.arange(len(names))
    return [names[k] for k in order], renumber


def _style_block(side_a: Sequence[Any], side_b: Sequence[Any], whole: bool = False
                 ) -> tuple[Any, Any]:
    """A block's covariates (battles x (A's features, B's), as counts) and which battles
    carry them: a battle without style, or with a count that is not a whole number from 0
    to 2^32, has none (all 0). `whole`: every count is a Python int (read in one pass)."""
    import numpy as np

    m, width = len(side_a), 2 * len(FEATURES)
    styled = np.array([side is not _NO_STYLE for side in side_a], dtype=bool)
    values = None
    if whole:  # a column per feature and side (a tuple per side costs half as much again)
        values = np.empty((m, width), dtype=np.int64)
        try:
            for k, count in enumerate(_EACH):
                values[:, k] = np.fromiter(map(count, side_a), dtype=np.int64, count=m)
                values[:, len(FEATURES) + k] = np.fromiter(map(count, side_b),
                                                           dtype=np.int64, count=m)
        except OverflowError:  # beyond 64 bits: out of range, found below
            values = None
    try:
        if values is None:
            values = np.array([*map(_COUNTS, side_a), *map(_COUNTS, side_b)])
            if values.shape == (2 * m, len(FEATURES)):
                values = np.concatenate([values[:m], values[m:]], axis=1)
    except ValueError:  # counts that are lists: an array of no shape
        values = np.array([None])
    if values.dtype.kind not in "iub" or values.shape != (m, width):
        rows = [_counts(a, b) for a, b in zip(side_a, side_b)]
        styled &= np.array([row is not None for row in rows], dtype=bool)
        return np.array([row or (0,) * width for row in rows], dtype=np.uint32
                        ).reshape(m, width), styled
    styled &= ((values >= 0) & (values < 2 ** 32)).all(axis=1)
    values[~styled] = 0
    return values.astype(np.uint32), styled


def _counts(side_a: Any, side_b: Any) -> tuple[int, ...] | None:
    """Both sides' counts when every one is a whole number from 0 to 2^32, else None."""
    values = (*_COUNTS(side_a), *_COUNTS(side_b))
    if all(type(v) in (int, bool) and 0 <= v < 2 ** 32 for v in values):
        return tuple(int(v) for v in values)
    return None


def _style_or_none(record: dict[str, Any]) -> Any:
    """A checked record's style when it is both sides' covariates (missing ones 0), else
    None: the battle is scored without style control."""
    given = record.get("style")
    try:
        side_a, side_b = given["a"], given["b"]  # type: ignore[index]
        return {"a": {name: side_a.get(name, 0) for name in FEATURES},
                "b": {name: side_b.get(name, 0) for name in FEATURES}}
    except (TypeError, KeyError, AttributeError):
        return None
