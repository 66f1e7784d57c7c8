"""UMBRELA's two grading scales: 0-3 (query and passage, TREC RAG 2024/2025; relevant at
grade >= 1, "related", the grade the 2024 nuggets were made from) and 0-4 (narrative,
sub-narratives and passage, the TREC RAG 2026 development qrels; relevant at grade >= 2, a
passage answering at least one sub-narrative).

Graded qrels declare their scale in their `.provenance.json` sidecar (`"scale": "0-4"`);
qrels read together (--fill, qrels-agreement) must declare the same scale. Qrels without a
sidecar, or whose sidecar declares none, are of an unknown scale: never an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer import names
from nuggetizer.assessors.untrusted import inline
from nuggetizer.errors import ConfigError
from nuggetizer.parsing import ParseFailure
from nuggetizer.run.provenance import read_json_object
from nuggetizer.templates import load_prompt

_FINAL = re.compile(r"final[\s_-]*score\W{0,3}?\s*[:=]\s*\**\s*([+-]?\d+(?:\.\d+)?)",
                    re.IGNORECASE)


def grade_parser(grades: Sequence[int]) -> Callable[[str], int]:
    """The parser of a scale: the grade after the last "##final score:" (any case, with or
    without the hashes, spaces and bold markers, in JSON or followed by other text);
    ParseFailure unless it is one of `grades`."""
    allowed = {str(g) for g in grades}
    listed = ", ".join(map(str, grades[:-1])) + f" or {grades[-1]}"

    def parse(text: str) -> int:
        found = _FINAL.findall(text or "")
        if not found:
            raise ParseFailure('no "##final score: N" found; end with ##final score: and one '
                               f"of {listed}")
        value = found[-1].lstrip("+")
        if value not in allowed:
            raise ParseFailure(f"the final score must be an integer from {grades[0]} to "
                               f"{grades[-1]}, not {value}")
        return int(value)

    return parse


@dataclass(frozen=True)
class Scale:
    """A grading scale: its name, grades, prompt and the grade from which a passage counts
    as relevant (pools, keys without qrels, agreement's binary kappa and P/R/F1)."""

    name: str
    grades: tuple[int, ...]
    prompt: str
    relevant: int
    sub_narratives: bool  # whether the prompt shows the narrative's sub-narratives

    @property
    def parse(self) -> Callable[[str], int]:
        return grade_parser(self.grades)

    @property
    def schema(self) -> dict[str, Any]:
        """The published answer format as the only choice, for schema-constrained models."""
        return {
            "type": "object",
            "properties": {"answer": {"type": "string",
                                      "enum": [f"##final score: {g}" for g in self.grades]}},
            "required": ["answer"],
            "additionalProperties": False,
        }


SCALES = {
    "0-3": Scale("0-3", (0, 1, 2, 3), "umbrela_grade", 1, False),
    "0-4": Scale("0-4", (0, 1, 2, 3, 4), "umbrela_subnarrative", 2, True),
}
assert tuple(SCALES) == names.SCALE_NAMES  # the names the command line offers
DEFAULT_SCALE = names.DEFAULT_SCALE


def get_scale(name: str) -> Scale:
    """The scale called `name` (0-3 or 0-4)."""
    try:
        return SCALES[name]
    except KeyError:
        raise ConfigError(f"unknown relevance scale {name!r}: use {' or '.join(SCALES)}"
                          ) from None


def sidecar_of(qrels: Path) -> Path:
    return qrels.with_name(qrels.name + ".provenance.json")


def declared_scale(qrels: Path) -> str | None:
    """The scale the provenance sidecar of `qrels` declares; None when there is no sidecar,
    it cannot be read, or it declares none (qrels made elsewhere, or before scales)."""
    block = read_json_object(sidecar_of(qrels))
    scale = block.get("scale") if block is not None else None
    return scale if isinstance(scale, str) else None


def common_scale(paths: Sequence[Path], chosen: str | None = None,
                 chosen_where: str = "--scale") -> str | None:
    """The one scale that the qrels `paths` declare (and `chosen`, if given); an error naming
    both files (or the file and the option) when two differ. None when nothing declares one."""
    seen: tuple[str, str] | None = (chosen, chosen_where) if chosen is not None else None
    for path in paths:
        scale = declared_scale(path)
        if scale is None:
            continue
        if seen is None:
            seen = (scale, str(path))
        elif scale != seen[0]:
            raise ConfigError(f"mixed relevance scales: {path} is {scale} (its "
                              f"{sidecar_of(path).name} says so), {seen[1]} is {seen[0]}: "
                              "read qrels of one scale together")
    return None if seen is None else seen[0]


@dataclass(frozen=True)
class Grading:
    """How pairs are graded: the scale and, on 0-4, each narrative's sub-narratives and where
    they came from (recorded in the provenance)."""

    scale: Scale = SCALES[DEFAULT_SCALE]
    sub_narratives: Mapping[str, Sequence[str]] | None = None
    source: Mapping[str, str] | None = None

    def check(self, qids: Iterable[str], topics: str) -> None:
        """On a sub-narrative scale, every topic graded needs its sub-narratives."""
        if not self.scale.sub_narratives:
            if self.sub_narratives is not None:
                raise ConfigError(f"sub-narratives go with --scale 0-4, not {self.scale.name}")
            return
        if self.sub_narratives is None:
            raise ConfigError(f"--scale {self.scale.name} shows each narrative's sub-narratives: "
                              "give --narratives FILE or --sub-narratives-from NUGGETS")
        where = (self.source or {}).get("path", "the sub-narratives")
        lacking = [q for q in qids if not self.sub_narratives.get(q)]
        if lacking:
            raise ConfigError(f"{where}: no sub-narratives for {len(lacking)} topics of "
                              f"{topics}, e.g. {lacking[0]!r}: add them, or leave those "
                              "topics out (--only-topics)")

    def messages(self, qid: str, query: str, passage: str) -> tuple[tuple[str, str], ...]:
        """The published prompt of the scale, each input on one line (sub-narratives as a
        JSON list)."""
        if not self.scale.sub_narratives:
            return load_prompt(self.scale.prompt).render(query=inline(query),
                                                         passage=inline(passage))
        subs = [inline(s) for s in (self.sub_narratives or {}).get(qid, ())]
        return load_prompt(self.scale.prompt).render(
            narrative=inline(query), sub_narratives=json.dumps(subs, ensure_ascii=False),
            passage=inline(passage))

    def declared(self) -> dict[str, Any]:
        """What the qrels' provenance sidecar declares."""
        block: dict[str, Any] = {"scale": self.scale.name, "relevant_from": self.scale.relevant}
        if self.source is not None:
            block["sub_narratives"] = dict(self.source)
        return block


DEFAULT_GRADING = Grading()
