"""Scoring judgment files into the tables asked for: the leaderboard, per topic, the AutoJudge
leaderboard and crux's diversity qrels, each with its provenance sidecar."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from nuggetizer.errors import ConfigError, NothingJudgedError
from nuggetizer.formats.leaderboards import table_rows, write_leaderboard
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.table import JudgedTable
from nuggetizer.run.chosen import note_unknown
from nuggetizer.run.provenance import hash_ahead, write_sidecar
from nuggetizer.scoring.engine import (
    ScoreTable,
    judgment_files,
    not_judged_yet,
    read_judged,
    score_judged,
)
from nuggetizer.scoring.tables import write_tables


@runtime_checkable
class DiversityQrels(Protocol):
    """A method that writes diversity qrels (`score --diversity-qrels`; crux does)."""

    def diversity_qrels(self, keys: Mapping[str, Any], files: Sequence[Path], out: Path
                        ) -> None: ...


@dataclass
class ScoreScope:
    """What the runs are scored on: the answer key's topics (`key`), else the `topics`
    file's (an unanswered one scores 0), else every topic judged; `only`: the chosen topics
    of those; `lenient`: differences from the key resolved, not errors."""

    key: Path | None = None
    topics: Path | None = None
    only: set[str] | None = None
    lenient: bool = False


@dataclass
class ScoreFiles:
    """The tables a scoring writes (None: not written): the leaderboard and per-topic TSVs,
    the AutoJudge leaderboard in `autojudge_format`, crux's diversity qrels."""

    output: Path | None = None
    per_topic: Path | None = None
    autojudge: Path | None = None
    autojudge_format: str = "tot"
    diversity: Path | None = None

    def any(self) -> bool:
        return any(p is not None for p in (self.output, self.per_topic, self.autojudge,
                                           self.diversity))


def left_out_text(table: ScoreTable) -> str:
    """`2 answers with nothing judged, 1 topics with nothing judged`, or ""."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(table.left_out.items()))


def score_files(method: AnswerKeyMethod, paths: Sequence[Path], scope: ScoreScope,
                out: ScoreFiles) -> ScoreTable:
    """Score judgment files (or folders of them) against the key (else over the `topics`
    file's topics, else every topic judged); write the tables `out` names."""
    key, topics, only, lenient = scope.key, scope.topics, scope.only, scope.lenient
    if key is None and method.judging.scored_with_key:
        raise ConfigError(f"--method {method.name} needs --key (its answer key file)")
    if out.diversity is not None and not isinstance(method, DiversityQrels):
        raise ConfigError(f"--diversity-qrels: --method {method.name} writes no diversity qrels")
    files = judgment_files(list(paths))
    keys = method.read_keys(key, lenient) if key is not None else None
    universe = list(read_topics(topics)) if topics is not None and keys is None else None
    inputs = [p for p in (key, topics) if p is not None] + files
    # the judgments' digests are made of the bytes their reader reads (formats/digests.py);
    # the files it does not digest (gzipped) are hashed when the sidecars are written
    hashing = hash_ahead(inputs[:len(inputs) - len(files)]) if out.any() else None
    judged = read_judged(method, files, lenient, scoring=True)
    if only is not None:  # scored on the chosen topics only
        if keys is not None:
            note_unknown(only, set(keys), f"the answer key {key}")
            keys = {q: k for q, k in keys.items() if q in only}
        elif universe is not None:
            note_unknown(only, set(universe), f"the topics file {topics}")
            universe = [q for q in universe if q in only]
        elif isinstance(judged, JudgedTable):
            judged, _ = judged.restricted(only)
        else:
            judged = (j for j in judged if j.qid in only)
    table = score_judged(method, judged, keys, lenient, universe, not_judged_yet(list(paths)))
    if only is not None and keys is None and universe is None and not table.topics:
        raise ConfigError("--only-topics: none of the chosen topics is judged in "
                          f"{', '.join(map(str, paths))}")
    if table.judged_nothing:
        # nothing judged yet (a campaign's export), rather than judged and failed
        failed = [k for k in table.left_out if k.endswith("s with nothing judged")
                  and not k.startswith(("topics ", "runs "))]
        waiting = not failed and any(k.endswith("not judged yet") for k in table.left_out)
        raise NothingJudgedError(
            f"score --method {method.name}: nothing was judged in {len(files)} judgment "
            f"files ({left_out_text(table)}); no leaderboard written: " +
            ("judge some of them first" if waiting else
             "judge again with an assessor that answers"))
    if hashing is not None:
        hashing.join()
    write_tables(table, out.output, out.per_topic)
    if out.output is not None:  # a method scored per run's other tables, beside the leaderboard
        for name, text in table.extras.items():
            write_text_atomic(out.output.with_name(f"{out.output.stem}.{name}.tsv"), text)
    if out.autojudge is not None:
        write_leaderboard(out.autojudge, table_rows(table), out.autojudge_format)
    if out.diversity is not None and isinstance(method, DiversityQrels):
        method.diversity_qrels(keys or {}, files, out.diversity)
        write_sidecar(out.diversity, inputs)
    write_sidecar([p for p in (out.output, out.per_topic, out.autojudge) if p is not None],
                  inputs, table.left_out, {"profile": table.profile})
    return table
