"""Agreement of N judges (N >= 2) on the same items: every pair, and all of them at once.

Every pair: the pair's own report (for qrels, `qrels_agreement.compare_qrels`: Cohen's kappa
on the grades and at grade >= 1 and >= 2, ordinal alpha, P/R/F1 at --relevant, and the ranking
tau when runs are given). All of them: Krippendorff's alpha over every item judged by at
least two judges (missing judgments allowed): ordinal and nominal on the values, and nominal on
the binary value at each threshold (value >= t).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar

from nuggetizer.measures import agreement as ma

K = TypeVar("K", bound=Hashable)  # an item: what every judge's judgments are keyed by


@dataclass
class PairRow:
    """The agreement of judges `a` and `b`: their common items and measures."""

    a: str
    b: str
    items: int
    measures: dict[str, float]


@dataclass
class JudgesAgreement:
    """N judges: every pair, and Krippendorff's alpha over all of them."""

    names: list[str]
    pairs: list[PairRow]
    items: int  # judged by at least two judges
    by_all: int  # judged by every judge
    overall: dict[str, float]
    what: str = "items"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"judges": self.names, "items": self.items, "judged_by_all": self.by_all,
                "pairs": [{"a": p.a, "b": p.b, "items": p.items,
                           "measures": {k: _num(v) for k, v in p.measures.items()}}
                          for p in self.pairs],
                "all": {k: _num(v) for k, v in self.overall.items()}}

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def tsv(self, prefix: str = "", header: bool = True) -> str:
        """`a b measure value` rows: every pair's, then all judges' (a = all, b empty); each
        measure's name after `prefix`."""
        rows = []
        for p in self.pairs:
            rows.append((p.a, p.b, "items", str(p.items)))
            rows += [(p.a, p.b, k, _fmt(v)) for k, v in p.measures.items()]
        rows += [("all", "", "items", str(self.items)), ("all", "", "judged_by_all",
                                                          str(self.by_all))]
        rows += [("all", "", k, _fmt(v)) for k, v in self.overall.items()]
        body = "".join(f"{a}\t{b}\t{prefix}{k}\t{v}\n" for a, b, k, v in rows)
        return ("a\tb\tmeasure\tvalue\n" if header else "") + body

    def markdown(self, labels: Mapping[str, str] | None = None) -> str:
        """The report: the judges, a table of every pair, then alpha over all of them;
        `labels` names the measures shown (all of them when None)."""
        shown = labels or {k: k for k in (self.pairs[0].measures if self.pairs else {})}
        lines = [f"Agreement of {len(self.names)} judges over {self.items} {self.what} judged "
                 f"by at least two ({self.by_all} by all)", ""]
        lines += [f"- J{i + 1}: {name}" for i, name in enumerate(self.names)]
        index = {name: f"J{i + 1}" for i, name in enumerate(self.names)}
        lines += ["", "| pair | " + " | ".join(["items", *shown.values()]) + " |",
                  "|---|" + "---:|" * (len(shown) + 1)]
        for p in self.pairs:
            cells = [str(p.items)] + [_fmt(p.measures.get(k)) for k in shown]
            lines.append(f"| {index[p.a]}-{index[p.b]} | " + " | ".join(cells) + " |")
        lines += ["", f"All {len(self.names)} judges", "", "| measure | value |", "|---|---:|"]
        lines += [f"| {_overall_label(k)} | {_fmt(v)} |" for k, v in self.overall.items()]
        return "\n".join(lines) + "\n"


def _overall_label(key: str) -> str:
    metric, _, threshold = key.removeprefix("alpha_").partition("_ge")
    metric = metric.replace("_", ", ", 1).replace("_", " ")
    return f"Krippendorff's alpha ({metric}" + (f", >= {threshold})" if threshold else ")")


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def _fmt(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.4f}"


def units_of(judgments: Sequence[Mapping[K, Any]]) -> tuple[list[list[Any]], int]:
    """Per item judged by at least two judges, every judge's value (None: not judged), in the
    order items are first seen; and how many items every judge judged."""
    order = list(dict.fromkeys(item for judged in judgments for item in judged))
    units = [[judged.get(item) for judged in judgments] for item in order]
    units = [u for u in units if sum(v is not None for v in u) >= 2]
    return units, sum(all(v is not None for v in u) for u in units)


def overall_alpha(units: Sequence[Sequence[int | None]], thresholds: Sequence[int]
                  ) -> dict[str, float]:
    """Krippendorff's alpha over every judge: ordinal and nominal on the values, nominal on
    the binary value at each threshold."""
    result = {"alpha_ordinal": ma.krippendorff_alpha(units, "ordinal"),
              "alpha_nominal": ma.krippendorff_alpha(units, "nominal")}
    for t in thresholds:
        binary = [[None if v is None else int(v >= t) for v in u] for u in units]
        result[f"alpha_nominal_ge{t}"] = ma.krippendorff_alpha(binary, "nominal")
    return result


def judges_agreement(names: Sequence[str], judgments: Sequence[Mapping[K, Any]],
                     pair_measures: Callable[[int, int], tuple[int, dict[str, float]]],
                     overall: Callable[[list[list[Any]]], dict[str, float]],
                     what: str = "items") -> JudgesAgreement:
    """Every pair's measures (`pair_measures(i, j)` -> (common items, measures)) and the
    measures `overall` gives of the items judged by at least two (`judgments`: per judge,
    item -> value)."""
    pairs = []
    for i, j in combinations(range(len(names)), 2):
        items, measures = pair_measures(i, j)
        pairs.append(PairRow(names[i], names[j], items, measures))
    units, by_all = units_of(judgments)
    return JudgesAgreement(list(names), pairs, len(units), by_all, overall(units), what)


def label_pair(judgments: Sequence[Mapping[K, int]], thresholds: Sequence[int]
               ) -> Callable[[int, int], tuple[int, dict[str, float]]]:
    """Pair measures of ordinal labels: Cohen's kappa on the values and at each threshold,
    and the pair's ordinal alpha, over the items both judge."""
    def pair(i: int, j: int) -> tuple[int, dict[str, float]]:
        common = [k for k in judgments[i] if k in judgments[j]]
        x, y = [judgments[i][k] for k in common], [judgments[j][k] for k in common]
        measures = {"kappa": ma.cohen_kappa(x, y)}
        for t in thresholds:
            measures[f"kappa_ge{t}"] = ma.cohen_kappa(ma.binary(x, t), ma.binary(y, t))
        measures["alpha_ordinal"] = ma.krippendorff_alpha_ordinal(x, y)
        return len(common), measures
    return pair
