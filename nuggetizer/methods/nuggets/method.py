"""AutoNuggetizer, the TREC 2024 RAG Track's nugget evaluation: iterative creation, importance
labels, listwise assignment (the steps: methods/nuggets/steps.py), as an answer-key method."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError
from nuggetizer.formats.assessments import (
    MISSING,
    align_with_key,
    assessment_record,
    iter_assessments,
    keep_key_extras,
    parse_assessment,
)
from nuggetizer.formats.label_rows import LabelRow, iter_label_rows
from nuggetizer.formats.nuggets import (
    add_queries,
    extras_record,
    nuggets_record,
    parse_nugget_list,
    read_nuggets,
)
from nuggetizer.formats.sheets import assignment_sheets, read_assignment_sheets
from nuggetizer.interface.base import (
    AnswerKeyMethod,
    Checked,
    Judged,
    KeyInput,
    Outcome,
    Target,
)
from nuggetizer.interface.judging import AnswerKey, Judging
from nuggetizer.interface.registry import register
from nuggetizer.labels import UNJUDGED
from nuggetizer.measures.nuggets import (
    DECLARED,
    LENGTH_LIMIT,
    Picks,
    answer_length,
    answer_scores,
    failures_scored,
    importance_picks,
    label_scores,
    no_vital,
    text_length,
)
from nuggetizer.measures.subnarratives import SUB_NARRATIVE_DECLARED, sub_narrative_coverage
from nuggetizer.methods.nuggets.mapping import map_sub_narratives
from nuggetizer.methods.nuggets.report import Gaps
from nuggetizer.methods.nuggets.steps import (
    AGENTIC_PROMPT,
    ASSIGN_PROMPTS,
    MAPPING_PROMPT,
    PROMPTS,
    NuggetConfig,
    assign_nuggets,
    create_nuggets,
)
from nuggetizer.types import AssessedNugget, Assessment, Nugget, NuggetList, Sentence, Topic

_NONE_UNJUDGED: Counter[str] = Counter()


@dataclass(slots=True)
class _KeyColumns:
    """A key's nugget texts, importance labels and sub-narratives (None when no nugget is
    mapped to one), the picks of its vital and okay nuggets' labels, and the Checked of an
    answer that agrees with it and has nothing unjudged (None: the key has a nugget of
    unjudged importance), shared by all such answers (never changed)."""

    key: NuggetList
    texts: list[str]
    importance: list[str]
    mapped: list[str | None] | None
    picks: Picks
    plain: Checked | None

    @classmethod
    def of(cls, key: NuggetList) -> _KeyColumns:
        importance: list[str] = [n.importance for n in key.nuggets]
        mapped = [n.mapped_sub_narrative for n in key.nuggets]
        plain = None if UNJUDGED in importance else Checked(
            _NONE_UNJUDGED, [], None if "vital" in importance else no_vital(key.qid))
        return cls(key, [n.text for n in key.nuggets], importance,
                   mapped if any(m is not None for m in mapped) else None,
                   importance_picks(tuple(importance)), plain)


def _length(judgment: Assessment | LabelRow) -> float:
    """L of a judged answer: its length as given, else (or when it was self-reported)
    counted from its text."""
    length = judgment.length
    if length is None or judgment.stated_length:  # L from the text, never self-reported
        length = text_length(judgment.answer_text)
    return float(length)


@register
class NuggetsMethod(AnswerKeyMethod):
    """AutoNuggetizer (TREC 2024 RAG Track): nuggets from judged passages, importance labels,
    listwise assignment of each nugget to an answer.

    The answer-key interface (interface/base.py) over the functions above; its records are a
    NuggetList per topic and an Assessment per (run, topic) (formats/nuggets.py,
    formats/assessments.py)."""

    name = "nuggets"
    prompts = PROMPTS
    declared = (*DECLARED, *SUB_NARRATIVE_DECLARED)  # the latter for keys with sub-narratives
    primary = "V_strict"
    targets = ("answer",)
    config_type = NuggetConfig
    judging = Judging.keyed(AnswerKey(needs={"qrels", "corpus"}, file="nuggets.jsonl",
                                      skip_without_documents=True),
                            judgments_dir="assessments", scored_with_key=False)
    key_kinds = frozenset({"importance"})  # an off-menu importance: the key's, not the judge's

    # where the sub-narratives the nuggets are mapped to came from (None: not mapped)
    sub_narrative_source: dict[str, str] | None = None

    def take_sub_narratives(self, source: Mapping[str, str]) -> None:
        self.sub_narrative_source = dict(source)

    def unrendered_key_calls(self, inputs: Sequence[KeyInput]) -> int:
        """Importance labelling (not rendered in a dry run), and the mapping to sub-narratives
        of the inputs that carry them: one call per importance batch's worth of nuggets."""
        config = self.config
        batches = math.ceil(config.max_nuggets / max(1, config.label_batch))
        mapped = sum(1 for i in inputs if i.sub_narratives)
        return (len(inputs) if config.label else 0) * batches + mapped * batches

    def used_prompts(self) -> tuple[str, ...]:
        unused = {AGENTIC_PROMPT} | ({MAPPING_PROMPT} if self.sub_narrative_source is None
                                    else set())
        unused |= {p for g, (p, _) in ASSIGN_PROMPTS.items() if g != self.config.grades}
        return tuple(p for p in self.prompts if p not in unused)

    def settings(self) -> dict[str, Any]:
        found = super().settings()
        if self.sub_narrative_source is not None:
            found["sub_narratives"] = dict(self.sub_narrative_source)
        return found

    def key_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                   ) -> NuggetList:
        return parse_nugget_list(obj, path, line, lenient=lenient)

    def read_keys(self, path: str | Path, lenient: bool = False) -> dict[str, Any]:
        """The nuggets file; under `lenient` its off-menu labels said in one warning."""
        return dict(read_nuggets(path, lenient=lenient))

    def complete_keys(self, keys: dict[str, Any], path: Path,
                      topics: Mapping[str, Topic] | None) -> None:
        """The query a key line lacks (the TREC RAG 2026 nuggets have none), from the topics:
        the assignment prompt shows it."""
        add_queries(keys, path, topics)

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> Assessment:
        return parse_assessment(obj, path, line, lenient=lenient)

    def judgment_ids(self, judgment: Assessment) -> tuple[str, str]:
        return judgment.run_id, judgment.qid

    def read_judged(self, path: Path, lenient: bool = False) -> Iterator[Judged]:
        for number, assessment in iter_assessments(path, lenient=lenient):
            yield Judged(assessment.run_id, assessment.qid, assessment, path, number)

    def read_scored(self, path: Path, lenient: bool = False) -> Iterator[Judged]:
        """Lines exactly as `assign` writes them as LabelRow columns, the others as
        Assessments (formats/assessments.py `iter_label_rows`)."""
        for number, record in iter_label_rows(path, lenient=lenient):
            yield Judged(record.run_id, record.qid, record, path, number)

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        result = await create_nuggets(assessor, item.qid, item.query, item.documents,
                                      self.config)
        if item.sub_narratives and result.nuggets.nuggets:
            result.unparsed += await map_sub_narratives(
                assessor, item.query, result.nuggets.nuggets, item.sub_narratives, self.config)
        record = nuggets_record(result.nuggets)
        if result.unparsed:
            record["unparsed"] = [u.record() for u in result.unparsed]
        problems = len(result.unparsed) + sum(
            1 for n in result.nuggets.nuggets if n.importance == UNJUDGED)
        return Outcome(record, problems)

    async def judge(self, assessor: Assessor, key: NuggetList, target: Target) -> Outcome:
        # a plain-text answer (a report's) is judged as one sentence
        answer = target if target.sentences else \
            dataclasses.replace(target, sentences=[Sentence(text=target.answer or "")])
        assessment = await assign_nuggets(assessor, key, answer, self.length(target),
                                          self.config)
        return Outcome(assessment_record(assessment), self.judge_unjudged(assessment))

    @staticmethod
    def length(target: Target) -> int:
        """L of a target's answer (words, trimmed at its track's limit by dropping trailing
        sentences: 400, or a TREC RAG 2026 answer's 1,024): the target's own `length` when it
        gives one, else counted from its sentences (the run's answer objects, as `validate`
        counts them)."""
        if target.length is not None:
            return target.length
        return answer_length([s.text for s in target.sentences],
                             target.word_limit or LENGTH_LIMIT)

    def score(self, key: NuggetList | None, judgment: Assessment | LabelRow, pool: Any
              ) -> dict[str, float]:
        labelled: Iterable[tuple[str | None, str, str]]
        picks = None
        if isinstance(judgment, LabelRow):
            importance, assignment = judgment.importance, judgment.assignment
            # a row's nuggets are the key's, in its order (`_check_row`): their sub-narratives
            # are the key's (none mapped, or no key: no coverage to compute)
            columns = self._keyed(key) if key is not None else None
            mapped = columns.mapped if columns is not None else None
            picks = columns.picks if columns is not None else None
            labelled = zip(mapped, importance, assignment) if mapped else ()
        else:
            importance = [n.importance for n in judgment.nuggets]
            assignment = [n.assignment for n in judgment.nuggets]
            labelled = ((n.mapped_sub_narrative, n.importance, n.assignment)
                        for n in judgment.nuggets)
        # the ragdoll profile: a failed assignment counts as not_support (RAGDoll's reading)
        scores = failures_scored(importance, assignment) if self.profile.failures_zero else \
            answer_scores(importance, assignment, picks)
        scores["L"] = _length(judgment)
        if labelled:  # nuggets mapped to sub-narratives (else there is no coverage)
            scores.update(sub_narrative_coverage(labelled))
        return scores

    def score_agreeing(self, key: NuggetList | None, judged: Judged
                       ) -> tuple[dict[str, float], str | None] | None:
        """A LabelRow whose nuggets are its key's (texts and importance, in order) with
        every one assigned, scored from the key's columns; the others go through `check`."""
        row = judged.record
        if type(row) is not LabelRow or key is None or self.profile.failures_zero:
            return None
        columns = self._keyed(key)
        plain, assignment = columns.plain, row.assignment
        if plain is None or UNJUDGED in assignment or row.texts != columns.texts \
                or row.importance != columns.importance:
            return None
        scores = label_scores(columns.importance, assignment, columns.picks, True)
        scores["L"] = _length(row)
        if columns.mapped:  # nuggets mapped to sub-narratives (else there is no coverage)
            scores.update(sub_narrative_coverage(zip(columns.mapped, columns.importance,
                                                     assignment)))
        return scores, plain.warning

    def nothing_judged(self, judgment: Assessment | LabelRow) -> str | None:
        """An answer whose every nugget stayed unassigned: no score from it (under the
        ragdoll profile it scores, every failed assignment counting as not_support)."""
        if self.profile.failures_zero:
            return None
        if isinstance(judgment, LabelRow):
            labels = judgment.assignment
            return "answer" if labels and labels[0] == UNJUDGED and \
                labels.count(UNJUDGED) == len(labels) else None
        labels = [n.assignment for n in judgment.nuggets]
        return "answer" if labels and all(a == UNJUDGED for a in labels) else None

    def unjudged(self, judgment: Assessment) -> Counter[str]:
        counts: Counter[str] = Counter()
        for n in judgment.nuggets:
            if n.assignment == UNJUDGED:
                counts["missing" if n.raw == MISSING else "assignment"] += 1
            if n.importance == UNJUDGED:
                counts["importance"] += 1
        return counts

    def report_part(self, runs: Collection[str] | None) -> Gaps:
        """The report's list of the nuggets no run supported (methods/nuggets/report.py)."""
        return Gaps(runs)

    # --- sheets (formats/sheets.py) --------------------------------------------------------

    sheet_hint = "fill assignment with support, partial_support or not_support"

    def blank_judgment(self, key: NuggetList, target: Target) -> Assessment:
        return Assessment(
            run_id=target.run_id, qid=target.qid, query=key.query,
            answer_text=target.answer or "", length=self.length(target),
            nuggets=[AssessedNugget(text=n.text, importance=n.importance, assignment=UNJUDGED,
                                    **extras_record(n)) for n in key.nuggets])

    def sheets(self, judgments: Sequence[Assessment], comment: str) -> dict[str, str]:
        return assignment_sheets(judgments, comment)

    def read_sheets(self, paths: Sequence[Path], keys: Mapping[str, Any] | None,
                    allow_blank: bool) -> dict[str, list[dict[str, Any]]]:
        if keys is None:
            raise ConfigError("--method nuggets: give --nuggets, the nuggets the sheets were "
                              "made from")
        queries = {q: nl.query for q, nl in keys.items()}
        by_run = read_assignment_sheets(paths, queries, allow_blank=allow_blank)
        for assessment in (a for items in by_run.values() for a in items):
            keep_key_extras(assessment, keys[assessment.qid])
        return {run: [assessment_record(a) for a in items] for run, items in by_run.items()}

    def _keyed(self, key: NuggetList) -> _KeyColumns:
        """The key's columns (`_KeyColumns`), made once per key (the last key's at hand:
        judgments come by topic, two asks each)."""
        held = self.__dict__.get("_last_key")
        if held is not None and held.key is key:
            return held
        cache: dict[int, _KeyColumns] = self.__dict__.setdefault("_key_columns", {})
        held = cache.get(id(key))
        if held is None or held.key is not key:
            held = cache[id(key)] = _KeyColumns.of(key)
        self.__dict__["_last_key"] = held
        return held

    def _check_row(self, key: NuggetList | None, judged: Judged, row: LabelRow
                   ) -> Checked | None:
        """`check` of a LabelRow on whole columns: None when its nuggets differ from the key's
        (texts or importance labels), for the Assessment path to resolve and note."""
        if key is not None:
            columns = self._keyed(key)
            if row.texts != columns.texts or row.importance != columns.importance:
                return None
            if columns.plain is not None and UNJUDGED not in row.assignment:
                return columns.plain  # shared: nothing unjudged, the key's warning
        counts = _NONE_UNJUDGED  # shared, never changed: most answers have none
        if UNJUDGED in row.importance or UNJUDGED in row.assignment:
            counts = +Counter(importance=row.importance.count(UNJUDGED),
                              assignment=row.assignment.count(UNJUDGED))
        warning = None if "vital" in row.importance else no_vital(judged.qid)
        return Checked(counts, [], warning)

    def check(self, key: NuggetList | None, judged: Judged, lenient: bool) -> Checked:
        """The assessment aligned with its key (formats/assessments.py `align_with_key`; the
        key's importance wins, noted), its unjudged items and its topic's warning, in one pass
        over the nuggets: this runs once per judged answer, 45,000 times for 150 runs. A
        LabelRow that agrees with its key is checked on whole columns; one that does not
        becomes its Assessment (`judged.record`) and is checked as one."""
        if type(judged.record) is LabelRow:
            checked = self._check_row(key, judged, judged.record)
            if checked is not None:
                return checked
            judged.record = judged.record.assessment()
        assessment: Assessment = judged.record
        notes: list[str] = []
        if key is not None and [n.text for n in assessment.nuggets] != self._keyed(key).texts:
            notes += align_with_key(assessment, key, judged.path, judged.line, lenient)
        counts: Counter[str] = Counter()
        vital = False
        keyed: Sequence[Nugget | AssessedNugget] = \
            key.nuggets if key is not None else assessment.nuggets
        for nugget, keyed_nugget in zip(assessment.nuggets, keyed):
            importance = keyed_nugget.importance
            if nugget.importance != importance:
                notes.append(f"{judged.path}:{judged.line}: run {judged.run_id!r} topic "
                             f"{judged.qid!r}: nugget {nugget.text!r} is {nugget.importance} "
                             f"here but {importance} in the key (the key's is used)")
                nugget.importance = importance
            if keyed_nugget.mapped_sub_narrative is not None:  # the key's mapping wins too
                nugget.mapped_sub_narrative = keyed_nugget.mapped_sub_narrative
            if importance == "vital":
                vital = True
            elif importance == UNJUDGED:
                counts["importance"] += 1
            if nugget.assignment == UNJUDGED:
                counts["missing" if nugget.raw == MISSING else "assignment"] += 1
        warning = None if vital else no_vital(judged.qid)
        return Checked(counts, notes, warning)
