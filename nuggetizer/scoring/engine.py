"""The one score engine: every method's judgments become per-topic scores and run means.

The rules are the TREC 2024 RAG Track's, for every method, read from each measure's declaration
(interface/declare.py `Measure.missing`): a topic of the answer key that a run did not answer
scores the measure's `missing` value, 0 (so skipping topics cannot raise a mean); a measure
whose `missing` is None (the AutoNuggetizer's L) is averaged over the topics a run answered;
unjudged items are left out by the method's own measures and counted here, by kind; a judgment
of which nothing was judged (the method's `nothing_judged`: every item unjudged) has no score:
it is left out of its run's rows and means (never scored 0) and counted, as are the topics and
runs with nothing judged at all; a judgment whose topic is not in the key is counted, not
scored. Under the `ragdoll` scoring profile (interface/profile.py, the method's `profile`) an
unanswered topic has no row and every mean is over the topics a run answered, as castorini
RAGDoll's run means are; what the method scores under it is the method's.
A folder of judgments may list those that nobody has judged yet (NOT_JUDGED_YET, which the
workbench's export of a campaign in progress writes): left out the same way, they are counted
as not judged yet ("12 of 40 answers not judged yet").
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.profile import GUIDELINE
from nuggetizer.interface.table import Judged, JudgedTable
from nuggetizer.measures.base import counted


@dataclass
class ScoreTable:
    """Scores of every run on every topic of the universe, with run means."""

    measures: tuple[str, ...]
    primary: str
    topics: list[str]
    per_topic: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    means: dict[str, dict[str, float]] = field(default_factory=dict)
    unjudged: dict[str, int] = field(default_factory=dict)  # per run
    kinds: Counter[str] = field(default_factory=Counter)  # unjudged items by kind, all runs
    missing: dict[str, int] = field(default_factory=dict)  # unanswered topics per run
    # a method scored per run (battles): the topics where a run drew no battle, per run; no
    # cell, never a 0 (the run answered them, the schedule left them out)
    not_drawn: dict[str, int] = field(default_factory=dict)
    outside: int = 0  # judgments of topics outside the answer key
    warnings: list[str] = field(default_factory=list)  # about topics, in topic order
    notes: list[str] = field(default_factory=list)  # where judgments and the key disagree
    empty: dict[str, list[str]] = field(default_factory=dict)  # run: topics with nothing judged
    left_out: Counter[str] = field(default_factory=Counter)  # e.g. "answers with nothing judged"
    extras: dict[str, str] = field(default_factory=dict)  # a method scored per run's other tables
    profile: str = GUIDELINE.name  # the scoring profile (interface/profile.py)
    # the measures written whole, its method's counts (battles); None: those of every
    # registered method (scoring/tables.py `counts`), for a table made elsewhere
    whole: frozenset[str] | None = None

    @property
    def judged_nothing(self) -> bool:
        """Judgments were read and not one of them was judged: there is no score at all."""
        return not self.means and bool(self.left_out)

    def ranking(self) -> list[str]:
        """Runs by the primary measure descending (runs without it last), then run id."""
        primary = self.primary
        return sorted(self.means, key=lambda r: (-self.means[r].get(primary, -1.0), r))


NOT_JUDGED_YET = "not-judged-yet.tsv"  # (judgment id, topic) lines, after a header line


def not_judged_yet(paths: Sequence[Path]) -> set[tuple[str, str]]:
    """The (judgment id, topic) pairs the folders given list as not judged yet."""
    found: set[tuple[str, str]] = set()
    for path in paths:
        listed = path / NOT_JUDGED_YET
        if path.is_dir() and listed.is_file():
            for line in listed.read_text(encoding="utf-8").splitlines()[1:]:
                cells = line.split("\t")
                if len(cells) >= 2:
                    found.add((cells[0], cells[1]))
    return found


def _nothing_kind(nothing: str, ids: tuple[str, str], yet: Collection[tuple[str, str]]) -> str:
    return f"{nothing}s not judged yet" if ids in yet else f"{nothing}s with nothing judged"


def _of_all(left_out: Counter[str], read: int) -> None:
    """"12 answers not judged yet" as "12 of 40 answers not judged yet" (40 read)."""
    for kind in [k for k in left_out if k.endswith("s not judged yet")]:
        left_out[f"of {read} {kind}"] = left_out.pop(kind)


def judgment_files(paths: Sequence[Path]) -> list[Path]:
    """Files given, and the `*.jsonl` files inside folders given (checked before any is read)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise InputError(path, None, "folder holds no *.jsonl judgment files")
            files += found
        else:
            files.append(path)
    return files


def read_judged(method: AnswerKeyMethod, paths: Sequence[Path], lenient: bool = False,
                scoring: bool = False) -> Iterable[Judged]:
    """Every judgment of the files (or folders of them), in order; a (run, topic) judged twice
    is an InputError naming both places. `scoring`: the records as the score engine reads
    them (the method's `read_scored`; a method scored per run's `read_table`, one table),
    for `score_judged` only."""
    if scoring and method.judging.scoring == "runs":
        files = judgment_files(paths)
        table = method.read_table(files, lenient)
        if not len(table):
            _no_judgment(method, files)
        twice = table.twice()
        if twice is not None:
            raise InputError(twice.second[0], twice.second[1], f"run {twice.judgment!r} topic "
                             f"{twice.qid!r} judged twice (also at {twice.first[0]}:"
                             f"{twice.first[1]})")
        return table
    return _read_each(method, paths, lenient, scoring)


def _read_each(method: AnswerKeyMethod, paths: Sequence[Path], lenient: bool, scoring: bool
               ) -> Iterator[Judged]:
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    read = method.read_scored if scoring else method.read_judged
    files = judgment_files(paths)
    for path in files:
        for judged in read(path, lenient):
            where = seen.setdefault((judged.run_id, judged.qid), (judged.path, judged.line))
            if where != (judged.path, judged.line):
                raise InputError(judged.path, judged.line, f"run {judged.run_id!r} topic "
                                 f"{judged.qid!r} judged twice (also at {where[0]}:{where[1]})")
            yield judged
    if not seen:
        _no_judgment(method, files)


def _no_judgment(method: AnswerKeyMethod, files: Sequence[Path]) -> None:
    """InputError: not one judgment in any of `files` (empty files): nothing to score or
    report, which a table of 0 runs would hide."""
    named = str(files[0]) if len(files) == 1 else f"{files[0]} and {len(files) - 1} more files"
    raise InputError(named, None, f"no {method.name} judgment in it (an empty file): give the "
                     "judgments `assign` wrote, or judge first")


def score_judged(
    method: AnswerKeyMethod, judged: Iterable[Judged], keys: Mapping[str, Any] | None = None,
    lenient: bool = False, topics: Sequence[str] | None = None,
    yet: Collection[tuple[str, str]] = frozenset(),
) -> ScoreTable:
    """Score judgments against `keys` (whose topics are the universe; without keys, `topics`,
    else every topic judged; a key of None stands for a topic without its key record). Methods that
    score from the whole topic's pool (`judging.scoring` "pool") are given it; the others are
    scored as the judgments stream by and only their scores are kept. A method scored per run
    (`judging.scoring` "runs") is given them as one table (`read_judged`'s, else made of the
    judgments given). `yet`: the (judgment id, topic) pairs not judged yet (`not_judged_yet`)."""
    if method.judging.scoring == "runs":
        return _run_level(method, judged if isinstance(judged, JudgedTable)
                          else method.table_of(list(judged)), keys, topics, yet)
    notes: list[str] = []
    unjudged: dict[str, int] = {}
    kinds: Counter[str] = Counter()
    scored: dict[str, dict[str, dict[str, float]]] = {}
    warnings: dict[str, str] = {}
    seen: dict[str, None] = {}
    outside = 0
    empty: dict[str, list[str]] = {}
    left_out: Counter[str] = Counter()
    universe = dict.fromkeys(topics) if topics is not None else None
    keys, blank = _judgeable(method, keys, left_out)
    pools: dict[str, list[Judged]] = {}
    read = 0
    collecting = gc.isenabled()
    gc.disable()  # millions of short-lived acyclic objects: the collector would only rescan them
    try:
        # bound once: this loop runs once per judgment, 45,000 times at 150 runs x 301 topics
        check, nothing_judged, score = method.check, method.nothing_judged, method.score
        pooled = method.judging.scoring == "pool"
        agreeing = None if pooled or type(method).score_agreeing is \
            AnswerKeyMethod.score_agreeing else method.score_agreeing
        for item in judged:
            qid = item.qid
            if qid not in blank and ((keys is not None and qid not in keys) or (
                    keys is None and universe is not None and qid not in universe)):
                outside += 1
                continue
            key = blank[qid] if qid in blank else keys[qid] if keys is not None else None
            done = agreeing(key, item) if agreeing is not None and qid not in blank else None
            if done is not None:  # what the steps below give it, in one
                read += 1
                seen.setdefault(qid)
                if done[1] is not None:
                    warnings.setdefault(qid, done[1])
                scored.setdefault(item.run_id, {})[qid] = done[0]
                continue
            checked = check(key, item, lenient)
            if qid in blank:  # its topic is counted, not scored
                continue
            nothing = nothing_judged(item.record)
            read += 1
            if checked.notes:
                notes += checked.notes
            if checked.unjudged:
                unjudged[item.run_id] = unjudged.get(item.run_id, 0) + checked.unjudged.total()
                kinds.update(checked.unjudged)
            if nothing is not None:
                empty.setdefault(item.run_id, []).append(qid)
                left_out[_nothing_kind(nothing, (item.run_id, qid), yet)] += 1
                continue
            seen.setdefault(qid)
            if checked.warning is not None:
                warnings.setdefault(qid, checked.warning)
            if pooled:
                pools.setdefault(qid, []).append(item)
            else:
                row = score(key, item.record, ())
                scored.setdefault(item.run_id, {})[qid] = row
    finally:
        if collecting:
            gc.enable()
    _of_all(left_out, read)
    order = list(keys if keys is not None else universe if universe is not None else seen)
    for qid, pool in pools.items():
        records = [j.record for j in pool]
        key = keys.get(qid) if keys is not None else None
        for item in pool:
            scored.setdefault(item.run_id, {})[qid] = method.score(key, item.record, records)
    table = ScoreTable(method.measures, method.primary, order, outside=outside,
                       unjudged=unjudged, kinds=+kinds, notes=notes, empty=empty,
                       profile=method.profile.name, whole=counted(method.declared))
    for run_id, answered in scored.items():
        _fill(table, method, run_id, answered)
    table.measures = tuple(m.name for m in method.declared if not m.diagnostic
                           or any(m.name in means for means in table.means.values()))
    _count_left_out(table, left_out, scored)
    table.warnings = [warnings[q] for q in order if q in warnings]
    return table


def _judgeable(method: AnswerKeyMethod, keys: Mapping[str, Any] | None,
               left_out: Counter[str]) -> tuple[Mapping[str, Any] | None, dict[str, Any]]:
    """The keys that give something to judge, and those that do not ({qid: key}: left out of
    the universe, never scored 0, counted in `left_out` by the method's reason)."""
    if keys is None:
        return None, {}
    blank: dict[str, Any] = {}
    for qid, key in keys.items():
        why = method.nothing_to_judge(key) if key is not None else None
        if why is not None:
            blank[qid] = key
            left_out[f"topics with {why} in the key"] += 1
    if not blank:
        return keys, blank
    return {q: k for q, k in keys.items() if q not in blank}, blank


def _run_level(method: AnswerKeyMethod, table: JudgedTable, keys: Mapping[str, Any] | None,
               topics: Sequence[str] | None, yet: Collection[tuple[str, str]] = frozenset()
               ) -> ScoreTable:
    """The table of a method scored per run (`judging.scoring` "runs"): the rules above, asked
    of its judgments' table at once (topics outside the key or `topics` counted, a key's
    topic with nothing to judge neither judged nor scored, judgments with nothing judged left
    out and counted), then its `score_runs` over the rest (the unjudged items per run are the
    method's to count, its judgments' ids not being runs)."""
    left_out: Counter[str] = Counter()
    keys, blank = _judgeable(method, keys, left_out)
    outside = 0
    if keys is not None or topics is not None:
        known = set(keys if keys is not None else topics or ())
        table, outside = table.restricted(known | set(blank))
        if blank:
            table, _ = table.restricted(known)
    kinds = table.unjudged()
    read = len(table)
    table, nothing, empty = table.judged()
    for ids, qids in empty.items():
        for qid in qids:
            left_out[_nothing_kind(nothing, (ids, qid), yet)] += 1
    _of_all(left_out, read)
    order = list(keys if keys is not None else topics if topics is not None else
                 table.topics_read())
    runs = method.score_runs(table, order)
    scored = ScoreTable(method.measures, method.primary, order, outside=outside,
                        unjudged=dict(runs.unjudged), kinds=+kinds, empty=empty,
                        extras=runs.extras, profile=method.profile.name,
                        whole=counted(method.declared))
    scored.per_topic, scored.means = runs.per_topic, runs.means
    _count_left_out(scored, left_out, runs.per_topic)
    for run_id in runs.means:
        scored.unjudged.setdefault(run_id, 0)
        scored.missing[run_id] = 0
        scored.not_drawn[run_id] = len(order) - len(runs.per_topic.get(run_id, {}))
    return scored


def _count_left_out(table: ScoreTable, left_out: Counter[str],
                    scored: Mapping[str, Mapping[str, Any]]) -> None:
    """Count, beside the judgments with nothing judged, the topics and runs that have no
    score at all because of them (added to what `_fill` counted)."""
    if not left_out:
        return
    scored_topics = {q for rows in scored.values() for q in rows}
    empty_topics = {q for qids in table.empty.values() for q in qids} - scored_topics
    runs = set(table.empty) - set(scored)
    table.left_out.update(left_out)
    if empty_topics:
        table.left_out["topics with nothing judged"] = len(empty_topics)
    if runs:
        table.left_out["runs with nothing judged"] = len(runs)


def _fill(table: ScoreTable, method: AnswerKeyMethod, run_id: str,
          answered: dict[str, dict[str, float]]) -> None:
    """One run's per-topic rows over the universe and its means (a topic the run answered
    with nothing judged has no row and is left out of the means; a measure a judgment gives
    as NaN, nothing having been judged for it, is left out of its row and of that measure's
    mean, and counted in `left_out`)."""
    given = [m for m in method.declared if any(m.name in r for r in answered.values())]
    zero = method.profile.unanswered_zero  # else an unanswered topic has no row, no 0
    missing = {m.name: m.missing for m in given if m.missing is not None}
    rows: dict[str, dict[str, float]] = {}
    answered_rows: list[dict[str, float]] = []
    unscored: dict[str, set[str]] = {}  # topic: its measures with nothing judged
    empty = set(table.empty.get(run_id, ())) - set(answered)
    unanswered = 0
    for qid in table.topics:
        row = answered.get(qid)
        if row is None and qid in empty:
            continue
        if row is None:
            unanswered += 1
            if zero:
                rows[qid] = dict(missing)
            continue
        total = sum(row.values())
        if total != total:  # a NaN among them: nothing judged for that measure
            unscored[qid] = {m for m, v in row.items() if v != v}
            row = {m: v for m, v in row.items() if v == v}
        rows[qid] = row
        answered_rows.append(row)
    means: dict[str, float] = {}
    for measure in given:
        m, value = measure.name, measure.missing if zero else None
        if value is None:  # left out where missing: the mean over the answered topics
            values = [r[m] for r in answered_rows if m in r]
            means[m] = sum(values) / len(values) if values else 0.0
        else:
            kept = list(rows.values()) if not unscored else \
                [r for q, r in rows.items() if m not in unscored.get(q, ())]
            if kept or not rows:  # else nothing was judged for it anywhere: no mean ("-")
                try:  # every row has it (most do): the same sum, in the same order
                    total = sum(map(itemgetter(m), kept))
                except KeyError:
                    total = sum(r.get(m, value) for r in kept)
                means[m] = total / (len(kept) or 1)
    for names in unscored.values():
        for m in names:
            table.left_out[f"{m} of topics with nothing judged for it"] += 1
    table.per_topic[run_id] = rows
    table.means[run_id] = means
    table.missing[run_id] = unanswered
    table.unjudged.setdefault(run_id, 0)


def score_paths(method: AnswerKeyMethod, paths: Sequence[Path],
                keys: Mapping[str, Any] | None = None, lenient: bool = False,
                topics: Sequence[str] | None = None) -> ScoreTable:
    """Read judgment files (or folders of them) and score them."""
    return score_judged(method, read_judged(method, paths, lenient, scoring=True), keys,
                        lenient, topics)


def combine_tables(tables: Sequence[ScoreTable]) -> ScoreTable:
    """Several methods' tables of the same runs as one: every measure side by side (the
    measure names must differ), ranked by the first table's primary measure. Topics are the
    first table's, then any other table's; a run a method did not score has none of its
    measures (a "-" in the leaderboard)."""
    measures = tuple(m for t in tables for m in t.measures)
    if len(set(measures)) != len(measures):
        raise ValueError(f"measure names repeat across the tables: {measures}")
    topics = list(dict.fromkeys(q for t in tables for q in t.topics))
    wholes = [t.whole for t in tables if t.whole is not None]
    combined = ScoreTable(measures, tables[0].primary, topics, profile=tables[0].profile,
                          whole=frozenset().union(*wholes) if len(wholes) == len(tables)
                          else None)
    for table in tables:
        for run_id, rows in table.per_topic.items():
            mine = combined.per_topic.setdefault(run_id, {})
            for qid, row in rows.items():
                mine.setdefault(qid, {}).update(row)
            combined.means.setdefault(run_id, {}).update(table.means[run_id])
            combined.unjudged[run_id] = combined.unjudged.get(run_id, 0) + \
                table.unjudged.get(run_id, 0)
            combined.missing[run_id] = max(combined.missing.get(run_id, 0),
                                           table.missing.get(run_id, 0))
        combined.kinds.update(table.kinds)
        combined.left_out.update(table.left_out)
        for run_id, qids in table.empty.items():
            combined.empty.setdefault(run_id, []).extend(qids)
        combined.outside += table.outside
        combined.warnings += table.warnings
        combined.notes += table.notes
    for rows in combined.per_topic.values():  # the topics' order, whatever table came first
        ordered = {q: rows[q] for q in topics if q in rows}
        rows.clear()
        rows.update(ordered)
    return combined
