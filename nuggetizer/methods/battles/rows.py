"""Battle records as `score` reads them: a small row per battle (its ids, result, unjudged
orders, whether the verdict flipped with the order, and both answers' style packed in 40
bytes), read from a battles.jsonl by orjson and checked by hand; a line the quick check does
not pass goes through the method's full check (pydantic), which names the line and field.
405k battles then score in seconds, not the minute the full records took, and in a fraction
of their memory."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from nuggetizer.labels import UNJUDGED
from nuggetizer.measures.style import FEATURES
from nuggetizer.measures.verdicts import SWAPPED

_POSITION = {"A": "a", "B": "b", "tie": "tie"}
_STYLE = struct.Struct(f"<{2 * len(FEATURES)}I")


class BattleRow:
    """One battle with what scoring needs; read like its record (`row["result"]`)."""

    __slots__ = ("flip", "qid", "result", "run_a", "run_b", "style", "unjudged")

    def __init__(self, qid: str, run_a: str, run_b: str, result: str, unjudged: int,
                 flip: bool | None, style: bytes | None) -> None:
        self.qid, self.run_a, self.run_b, self.result = qid, run_a, run_b, result
        self.unjudged, self.flip, self.style = unjudged, flip, style

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def style_of(self) -> tuple[dict[str, int], dict[str, int]] | None:
        """Both answers' style covariates, when recorded."""
        if self.style is None:
            return None
        values = _STYLE.unpack(self.style)
        k = len(FEATURES)
        return dict(zip(FEATURES, values[:k])), dict(zip(FEATURES, values[k:]))


def pack_style(style: Any) -> bytes | None:
    """A record's `style` packed (A's covariates, then B's, as unsigned 32-bit counts), None
    when absent or not counts."""
    try:
        a, b = style["a"], style["b"]
        return _STYLE.pack(*[a.get(name, 0) for name in FEATURES],
                           *[b.get(name, 0) for name in FEATURES])
    except (TypeError, KeyError, AttributeError, struct.error):
        return None


def style_array(packed: list[bytes]) -> Any:
    """Packed styles as a battles x (2 x covariates) float array."""
    import numpy as np

    flat = np.frombuffer(b"".join(packed), dtype="<u4")
    return flat.reshape(len(packed), 2 * len(FEATURES)).astype(float)


def quick_row(obj: Any, intern: Callable[[str], str]) -> BattleRow | None:
    """The row of a well-formed battle record, None for anything the full check must see."""
    if type(obj) is not dict:
        return None
    qid, run_a, run_b, orders = obj.get("qid"), obj.get("run_a"), obj.get("run_b"), \
        obj.get("orders")
    if type(qid) is not str or type(run_a) is not str or type(run_b) is not str or \
            run_a == run_b or type(orders) is not list or not 1 <= len(orders) <= 2:
        return None
    given: dict[str, str | None] = {}
    unjudged = 0
    for order in orders:
        if type(order) is not dict:
            return None
        first, verdict = order.get("first"), order.get("verdict")
        if first not in (run_a, run_b) or first in given:
            return None
        if verdict not in _POSITION:
            if verdict != UNJUDGED:
                return None
            unjudged += 1
        given[first] = _POSITION.get(verdict)
    if len(orders) == 1:
        (first, verdict), = given.items()
        result = verdict if verdict in (None, "tie") or first == run_a else SWAPPED[verdict]
        flip = None
    else:
        one, two = given[run_a], given[run_b]
        if one is None or two is None:
            result, flip = None, None
        else:
            flip = one != SWAPPED[two]
            result = "tie" if flip else one
    return BattleRow(intern(qid), intern(run_a), intern(run_b), result or UNJUDGED, unjudged,
                     flip, pack_style(obj.get("style")))


def read_rows(path: Path, full: Callable[[dict[str, Any], Path, int], dict[str, Any]]
              ) -> Iterator[tuple[int, BattleRow]]:
    """(line, row) of every battle of a battles.jsonl; `full(obj, path, line)`: the method's
    checked record, for a line the quick check does not pass (its error names the line)."""
    import orjson

    from nuggetizer.formats.jsonl import iter_jsonl

    names: dict[str, str] = {}

    def intern(text: str) -> str:
        return names.setdefault(text, text)

    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                obj = None
            row = quick_row(obj, intern)
            if row is None:  # the full reader's message (a bad line, a bad field)
                if obj is None:
                    for line, parsed in iter_jsonl(path):
                        if line == number:
                            obj = parsed
                            break
                record = full(obj, path, number)
                row = BattleRow(intern(str(record["qid"])), intern(record["run_a"]),
                                intern(record["run_b"]), record["result"],
                                int(record.get("unjudged") or 0), _flip_of(record),
                                pack_style(record.get("style")))
            yield number, row


def _flip_of(record: Mapping[str, Any]) -> bool | None:
    if len(record["orders"]) != 2:
        return None
    return bool(record.get("flipped")) if record.get("result") != UNJUDGED else None
