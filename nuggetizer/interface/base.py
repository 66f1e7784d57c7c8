"""The answer-key interface every evaluation method implements.

A method is three steps over its own records, converted once at the file edge:

    build_key(topic input)            -> key record of one topic      (LLM calls)
    judge(key, target)                -> judgment record of one (run, topic)  (LLM calls)
    score(key, judgment, pool)        -> {measure: value}             (pure)

The flow (nuggetizer/plan/, run/ and scoring/) owns the files, resume journals, provenance,
progress, summaries and the one score engine; the CLI and track configs ask the registry
(interface/registry.py) for a method by name. So a method is one module (a subclass registered
with `register`) plus its prompt templates."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from nuggetizer.assessors.base import DEFAULT_REASKS, Assessor
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import JudgmentIds, KeyIds, validated
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.interface.judging import Judging
from nuggetizer.interface.profile import GUIDELINE, Profile
from nuggetizer.interface.report_part import ReportPart
from nuggetizer.interface.table import Judged, JudgedTable
from nuggetizer.measures.base import Measure, names
from nuggetizer.templates import Prompt, load_prompt
from nuggetizer.types import Segment, Sentence, Topic

# the class switches `judging` replaced: a method of one's own that still sets one is told
REPLACED = frozenset({"key_needs", "key_reads", "key_file", "judgments_dir",
                      "skip_without_documents", "needs_pool", "scores_without_key",
                      "needs_key", "reads_citations", "run_level"})


@dataclass
class KeyInput:
    """What building one topic's key may read; each method uses the parts it needs."""

    qid: str
    query: str
    reference: str | None = None  # CRUX: the human-written reference summary
    documents: list[Segment] = field(default_factory=list)  # judged or retrieved passages
    grades: dict[str, int] = field(default_factory=dict)  # qrels grade of each document
    sub_narratives: list[str] = field(default_factory=list)  # nuggets are mapped to these


@dataclass
class Target:
    """One thing a run is judged on for one topic: an answer text or a retrieved context. An answer
    also carries its sentences with their citations and the run's references; for a method whose
    `judging` has `citations`, `cited` holds the texts of the cited passages (a citation that does
    not resolve, kept under --allow-missing, has no text there)."""

    run_id: str
    qid: str
    answer: str | None = None
    passages: list[Segment] | None = None  # a retrieval context, in rank order
    length: int | None = None  # an answer's length L, when given (else nuggets counts it)
    word_limit: int | None = None  # the words its track allows (None: TREC RAG 2024's 400)
    query: str = ""  # the topic text the run gives with its answer, if any
    sentences: list[Sentence] = field(default_factory=list)  # the answer's, with citations
    references: list[str] = field(default_factory=list)  # segment ids, cited by index
    cited: dict[str, Segment] = field(default_factory=dict)  # texts of the cited passages
    documents: dict[str, Segment] = field(default_factory=dict)  # a report's own passages
    path: str | None = None  # the run file and line of the answer, for messages
    line: int | None = None
    # a pairwise method's unit (battles): this answer against another run's to the same topic
    opponent: Target | None = None

    @property
    def where(self) -> str:
        """`file:line: run R topic Q` of the answer, for messages."""
        place = f"{self.path}:{self.line}: " if self.path else ""
        return f"{place}run {self.run_id!r} topic {self.qid!r}"


def resolve(target: Target, sentence: int, position: int) -> tuple[str | None, str | None]:
    """(segment id, None) of one citation of a target's sentence (0-based indexes), or (None,
    why it does not resolve): an index outside the references, or an id not in them."""
    cite = target.sentences[sentence].citations[position]
    if isinstance(cite, int) and 0 <= cite < len(target.references):
        return target.references[cite], None
    if isinstance(cite, str):
        return None, f"citation {cite!r} is not in the references"
    size = len(target.references)
    return None, (f"citation {cite} is outside the references (0..{size - 1})" if size
                  else f"citation {cite} but the references are empty")


def citation_problem(target: Target, sentence: int, position: int) -> str | None:
    """Why one citation cannot be judged (outside the references, or its passage not in the
    corpus read into `cited`), or None."""
    docid, why = resolve(target, sentence, position)
    if why is not None:
        return why
    if docid not in target.cited:
        return (f"passage {docid} is neither in the corpus nor in the report's documents"
                if target.documents else f"passage {docid} is not in the corpus")
    return None


@dataclass
class Outcome:
    """A record to write and how many of its items stayed unjudged (counted in the summary)."""

    record: dict[str, Any]
    unjudged: int = 0


@dataclass
class Checked:
    """What scoring learned of one judgment besides its measures."""

    unjudged: Counter[str]  # unjudged items by kind
    notes: list[str]  # differences with the key that were resolved
    warning: str | None  # about the topic, printed once


@dataclass
class RunScores:
    """What `score_runs` of a method scored per run (`judging.scoring` "runs") gives the score
    engine: per-topic rows and run measures computed from every judgment at once (e.g. a
    Bradley-Terry fit), the unjudged items per run, and extra tables to write beside the
    leaderboard ({name: TSV text}, written as `LEADERBOARD.NAME.tsv`)."""

    per_topic: dict[str, dict[str, dict[str, float]]]  # run: topic: measure: value
    means: dict[str, dict[str, float]]  # run: measure: value
    unjudged: dict[str, int] = field(default_factory=dict)  # items per run
    extras: dict[str, str] = field(default_factory=dict)


class AnswerKeyMethod(ABC):
    """One evaluation method: its prompts, measures, inputs, records and the three steps."""

    name: ClassVar[str]
    prompts: ClassVar[tuple[str, ...]]
    measures: ClassVar[tuple[str, ...]]
    primary: ClassVar[str]
    targets: ClassVar[tuple[str, ...]]  # "answer" and/or "context"
    config_type: ClassVar[type]  # a frozen dataclass of the method's settings
    judging: ClassVar[Judging] = Judging()  # what it reads, how it is judged and scored
    key_model: ClassVar[type[BaseModel]] = KeyIds  # a key line's record (methods/records.py)
    judgment_model: ClassVar[type[BaseModel]] = JudgmentIds  # a judgment line's record
    answered_only: ClassVar[frozenset[str]] = frozenset()  # means over answered topics only
    # measures a table lists only where some judgment gives them (e.g. per-sub-narrative
    # coverage, for keys that map nuggets to sub-narratives)
    diagnostic: ClassVar[frozenset[str]] = frozenset()
    prompt_dir: ClassVar[Path | None] = None  # templates outside nuggetizer.prompts
    # kinds of `unjudged` the key left so (an off-menu importance), not the judge: not counted
    # as the judge's in a step's summary (`judge_unjudged`)
    key_kinds: ClassVar[frozenset[str]] = frozenset()

    # the measures as declared (interface/declare.py), in `declared` (or, unchecked by mypy, as
    # Measure objects in `measures`): `measures`, `answered_only` and `diagnostic` are derived
    # from them. A class that lists bare names in `measures` gets Measures made of them.
    declared: ClassVar[tuple[Measure, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        flags = sorted(set(cls.__dict__) & REPLACED)
        if flags:
            raise TypeError(f"{cls.__name__}: {', '.join(flags)} is said in `judging` now "
                            "(interface/judging.py: Judging.keyed(...) or Judging.keyless(...))")
        own: Sequence[Any] = cls.__dict__.get("declared") or cls.__dict__.get("measures", ())
        if own and all(isinstance(m, Measure) for m in own):
            cls.declared = tuple(own)
            cls.measures = names(own)
            cls.answered_only = frozenset(m.name for m in own if m.answered_only)
            cls.diagnostic = frozenset(m.name for m in own if m.diagnostic)
        elif own:
            cls.declared = tuple(
                Measure(m, m, missing=None if m in cls.answered_only else 0.0,
                        diagnostic=m in cls.diagnostic) for m in own)

    # the reading of the definitions its scores take (interface/profile.py); set by
    # `configure`, the default's otherwise
    profile: Profile = GUIDELINE

    def __init__(self, config: Any = None) -> None:
        self.config = config if config is not None else self.config_type()

    @classmethod
    def configure(cls, settings: Mapping[str, Any] | None = None,
                  profile: Profile | None = None) -> AnswerKeyMethod:
        """The method with `settings` (None values keep the defaults, or those the scoring
        `profile` gives) scoring under `profile` (None: the default); strings (from --set)
        are typed after the setting's default. ConfigError names an unknown or bad one."""
        fields = {f.name: f for f in dataclasses.fields(cls.config_type)}
        given: dict[str, Any] = {}
        for raw_name, value in (settings or {}).items():
            name = raw_name.strip().replace("-", "_")
            if value is None:
                continue
            if name not in fields:
                raise ConfigError(f"method {cls.name!r} has no setting {name} (known: "
                                  f"{', '.join(sorted(fields))})")
            given[name] = _typed(name, value, fields[name].default)
        chosen = profile or GUIDELINE
        for name, value in chosen.settings_of(cls.name).items():
            given.setdefault(name, value)
        try:
            config = cls.config_type(**given)
            check_choices(config)
            method = cls(config)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"method {cls.name!r}: {exc}") from None
        method.profile = chosen
        return method

    def settings(self) -> dict[str, Any]:
        """The configuration recorded in provenance (must decide the outputs)."""
        return dataclasses.asdict(self.config)

    def used_prompts(self) -> tuple[str, ...]:
        """The prompts this configuration calls (their hashes go in the provenance)."""
        return self.prompts

    def prompt(self, name: str) -> Prompt:
        """One of the method's prompt templates (from `prompt_dir` when it has one)."""
        return load_prompt(name, self.prompt_dir)

    @property
    def first_citation_only(self) -> bool:
        """A method whose `judging` has `citations` reads only each sentence's first one (its
        passages alone are read from the corpus and checked)."""
        return False

    @property
    def depth(self) -> int:
        """Passages of a retrieval run read per topic (the method's `k`, else 5)."""
        return int(getattr(self.config, "k", 5))

    def unrendered_key_calls(self, inputs: Sequence[KeyInput]) -> int:
        """Calls of building the keys of `inputs` that a dry run cannot render (it counts
        them as estimated): none by default."""
        return 0

    def take_sub_narratives(self, source: Mapping[str, str]) -> None:
        """Map what it builds to the sub-narratives its key inputs carry, recording where they
        came from (`source`, for provenance); ConfigError for a method that cannot."""
        raise ConfigError(f"--map-sub-narratives is not an option of --method {self.name} "
                          "(it is one of --method nuggets)")

    def check_inputs(self, topics: Mapping[str, Topic], topics_path: Path, has_qrels: bool
                     ) -> None:
        """The method's own check of what building its keys reads; ConfigError/InputError."""
        return None

    def check_assessor(self, assessor: Assessor) -> None:
        """The method's own check of the assessor that builds its keys, before any call;
        ConfigError when the method cannot read what that model answers."""
        return None

    # --- records at the file edge ----------------------------------------------------------

    def key_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool) -> Any:
        """One key line as the method uses it (checked against `key_model`)."""
        validated(self.key_model, obj, path, line)
        return obj

    def read_keys(self, path: str | Path, lenient: bool = False) -> dict[str, Any]:
        """A key file: {qid: key} in file order; a topic twice is an error."""
        path = Path(path)
        keys: dict[str, Any] = {}
        lines: dict[str, int] = {}
        for number, obj in iter_jsonl(path):
            key = self.key_record(obj, path, number, lenient)
            qid = str(obj["qid"])
            if qid in keys:
                raise InputError(path, number, f"duplicate qid {qid!r} (also on line "
                                 f"{lines[qid]})")
            keys[qid], lines[qid] = key, number
        if not keys:
            raise InputError(path, None, f"no {self.name} keys in file")
        return keys

    def complete_keys(self, keys: dict[str, Any], path: Path,
                      topics: Mapping[str, Topic] | None) -> None:
        """Fill in, before any judging, what a key file may leave to the topics file (read
        from `--topics`, or None when none was given); InputError when it stays missing."""
        return None

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> Any:
        """One judgment line as the method scores it (checked against `judgment_model`)."""
        validated(self.judgment_model, obj, path, line)
        return obj

    def judgment_ids(self, judgment: Any) -> tuple[str, str]:
        """(run id, topic id) of a judgment."""
        return judgment["run_id"], judgment["qid"]

    def read_judged(self, path: Path, lenient: bool = False) -> Iterator[Judged]:
        """The judgment records of a file, in file order."""
        for number, obj in iter_jsonl(path):
            record = self.judgment_record(obj, path, number, lenient)
            run_id, qid = self.judgment_ids(record)
            yield Judged(run_id, qid, record, path, number)

    def read_scored(self, path: Path, lenient: bool = False) -> Iterator[Judged]:
        """The judgments of a file as the score engine reads them: by default
        `read_judged`'s; a method may give records cheaper to read that its `check`, `score`
        and `nothing_judged` take (`check` may replace one by its `read_judged` record)."""
        return self.read_judged(path, lenient)

    def check(self, key: Any, judged: Judged, lenient: bool) -> Checked:
        """The score engine's view of a judgment before `score`: its unjudged items by kind,
        and, for a method that checks its judgments against the key (None: no key given),
        the differences it resolved and a warning about the topic. By default: no check."""
        return Checked(self.unjudged(judged.record), [], None)

    def score_agreeing(self, key: Any, judged: Judged
                       ) -> tuple[dict[str, float], str | None] | None:
        """The measures of a judgment that agrees with its key and left nothing unjudged, and
        its topic's warning, in one step: what `check` (no difference resolved, no unjudged
        item), `nothing_judged` (None) and `score` give it, for a method scored per judgment
        (the score engine asks this first, 45,000 times at track scale). None: ask those.
        By default None (a method without this is asked them for every judgment)."""
        return None

    def nothing_to_judge(self, key: Any) -> str | None:
        """Why a topic's key gives nothing to judge (e.g. "no criteria"): such a topic is
        neither judged nor scored (never a 0), only counted; None for a key with something in
        it. By default every key has something."""
        return None

    def key_digest(self, key: Any) -> str | None:
        """A hash of what a topic's key decides of its judgment, recorded in the judgment's
        provenance (`key_sha256`) so that scoring can tell a key changed since; None: the
        method records none. By default none."""
        return None

    def unjudged(self, judgment: Any) -> Counter[str]:
        """Items of a judgment record that stayed unjudged, by kind."""
        return Counter({"items": int(judgment.get("unjudged", 0))})

    def judge_unjudged(self, judgment: Any) -> int:
        """The items of a judgment the judge left unjudged (the `unjudged` kinds but the
        key's, `key_kinds`): the count a step's summary gives, the same for a judgment made
        now and one a resumed step found journalled."""
        return sum(n for kind, n in self.unjudged(judgment).items()
                   if kind not in self.key_kinds)

    def nothing_judged(self, judgment: Any) -> str | None:
        """What a judgment record judged nothing of ("answer", "context"): it has items and
        every one stayed unjudged, so it has no score (the score engine leaves it out and
        counts it, never scores it 0); None when something of it was judged. By default: a
        record that counts its unjudged items under `unjudged` and has no judged `labels`."""
        if isinstance(judgment, Mapping) and int(judgment.get("unjudged") or 0) > 0 \
                and not judgment.get("labels"):
            return str(judgment.get("target") or self.targets[0])
        return None

    # --- sheets for manual assessment (e.g. methods/support/sheets.py) ---------------------

    sheet_hint: ClassVar[str] = ""  # what an assessor fills in, for the sheets' comment line

    def blank_judgment(self, key: Any, target: Target) -> Any:
        """A judgment record with every label left for a human (export-sheets --run)."""
        raise ConfigError(f"method {self.name!r} has no sheets for manual assessment")

    def sheets(self, judgments: Sequence[Any], comment: str) -> dict[str, str]:
        """Judgment records (as `read_judged` gives them) as one TSV sheet per topic: {qid:
        text}; labels prefilled, unjudged ones blank."""
        raise ConfigError(f"method {self.name!r} has no sheets for manual assessment")

    def read_sheets(self, paths: Sequence[Path], keys: Mapping[str, Any] | None,
                    allow_blank: bool) -> dict[str, list[dict[str, Any]]]:
        """Filled-in sheets (files, or folders of *.tsv) as judgment records to write, by run
        id; strict: every problem an InputError naming file and line."""
        raise ConfigError(f"method {self.name!r} has no sheets for manual assessment")

    # --- the report (interface/report_part.py) ----------------------------------------------

    @classmethod
    def holds(cls, path: Path) -> bool:
        """Whether `path` (a file or folder) is unmistakably this method's judgments, so that
        `report` and `agreement` score it so without --method (e.g. a battles folder)."""
        return False

    def report_part(self, runs: Collection[str] | None) -> ReportPart | None:
        """What the method adds to `nuggetizer report` beyond the generic page (leaderboard,
        glossary of the declared measures, topics, distributions, heat maps): a ReportPart
        that sees each judgment of `runs` (None: all) as it is scored and gives sections of
        its own, with figures it draws (e.g. a battles method's win matrix). None: nothing."""
        return None

    # --- the three steps --------------------------------------------------------------------

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        """The key record of one topic: `{"qid", "query", ...}` (every method with an answer
        key: `judging.needs_key`)."""
        raise ConfigError(f"method {self.name!r} judges without an answer key: nothing to build")

    async def judge_together(self, assessor: Assessor,
                             targets: Mapping[str, Mapping[str, Target]],
                             narratives: Mapping[str, str], out_dir: Path,
                             track: str | None = None) -> Any:
        """For a method whose judged unit is not one run's answer to one topic (battles: two
        runs' answers), judge the runs' `targets` ({run: {topic: target}}) its own way into
        `out_dir` (a track's evaluate), the topics' texts in `narratives`, and return the
        step's Summary. None (the default): the targets are judged one at a time (`judge`)."""
        return None

    @abstractmethod
    async def judge(self, assessor: Assessor, key: Any, target: Target) -> Outcome:
        """The judgment record of one (run, topic): `{"run_id", "qid", ...}`."""

    @abstractmethod
    def score(self, key: Any, judgment: Any, pool: Sequence[Any]) -> dict[str, float]:
        """Measures of one judgment; `pool` holds every judgment of the same topic."""

    def read_table(self, paths: Sequence[Path], lenient: bool = False) -> JudgedTable:
        """Every judgment of the files as one table, for a method scored per run
        (`judging.scoring` "runs"): what `score` reads (interface/table.py)."""
        raise ConfigError(f"method {self.name!r} scores each judgment (score), not all at once")

    def table_of(self, judged: Sequence[Judged]) -> JudgedTable:
        """Judgments read one by one (`read_judged`'s) as one table, for a method scored per
        run."""
        raise ConfigError(f"method {self.name!r} scores each judgment (score), not all at once")

    def score_runs(self, table: JudgedTable, topics: Sequence[str]) -> RunScores:
        """The tables of a method scored per run (`judging.scoring` "runs") from every judgment
        with something judged over the `topics` in scope; the score engine calls it instead of
        `score` (the judgments with nothing judged it leaves out and counts itself)."""
        raise ConfigError(f"method {self.name!r} scores each judgment (score), not all at once")


def reasks_setting() -> Any:
    """The `reasks` setting every method that asks an LLM declares."""
    return setting(DEFAULT_REASKS, "re-asks of an answer that does not parse before its items "
                   "stay unjudged", minimum=0)


KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a text"}


def _typed(name: str, value: Any, default: Any) -> Any:
    """`value` as the type of `default` (bool, int, float or str); ConfigError otherwise."""
    kind = type(default)
    wanted = KINDS.get(kind, f"a {kind.__name__}")
    if isinstance(value, str) and kind is not str:
        text = value.strip().lower()
        try:
            if kind is bool:
                if text not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                return text in ("true", "1", "yes")
            return kind(text)
        except ValueError:
            raise ConfigError(f"setting {name} must be {wanted}, got {value!r}") from None
    if kind in (int, float) and isinstance(value, bool):  # True is an int to Python only
        raise ConfigError(f"setting {name} must be {wanted}, got {value!r}")
    if kind is float and isinstance(value, int):
        return float(value)
    if default is not None and not isinstance(value, kind):
        raise ConfigError(f"setting {name} must be {wanted}, got {value!r}")
    return value
