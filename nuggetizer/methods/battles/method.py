"""Pairwise battles, TREC RAG 2026's first evaluation (../shared/METHODS.md section 8): per
narrative, two runs' answers side by side, blind, and the judge picks the better one or a tie.

The judged unit is a battle, (topic, run A, run B) with run A < run B, not a (run, topic): the flow
judges battles with `judge_battle` (methods/battles/step.py journals and resumes them by that
triple) and scores them all at once (`judging.scoring` "runs": a Bradley-Terry fit is not a mean
over topics). The prompt (prompts/battle_judge.*.jinja) follows MT-Bench's pairwise judge and shows
no run id. Both presentation orders by default (`both_orders`): order 1 shows run A first, order 2
run B first; a verdict that flips with the order is a tie (MT-Bench's rule, counted as a flip);
with one order, which run goes first is a seeded hash of the battle. A verdict that never parses is
unjudged: the battle has no result (counted, never a tie).

Judgment record: `{"qid", "run_a", "run_b", "narrative", "orders": [{"first": run shown as
A, "verdict": "A"|"B"|"tie"|"unjudged", "error"?, "raw"?}], "result": "a"|"b"|"tie"|
"unjudged", "flipped", "unjudged", "style": {"a": {...}, "b": {...}}}` (`unjudged`: orders
whose verdict never parsed; `style`: both answers' style covariates, measures/style.py, for the
style-controlled leaderboard; records without it are scored without style control).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import DEFAULT_REASKS, Assessor
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats import ragdoll
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import validated
from nuggetizer.interface.base import AnswerKeyMethod, Outcome, RunScores, Target
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.interface.judging import Judging
from nuggetizer.interface.registry import register
from nuggetizer.interface.table import Judged
from nuggetizer.labels import UNJUDGED
from nuggetizer.measures.style import FEATURES, answer_style
from nuggetizer.measures.verdicts import SWAPPED
from nuggetizer.methods.battles import measures as mb
from nuggetizer.methods.battles.measures import POSITION, two_orders
from nuggetizer.methods.battles.records import BATTLES_FILE, BattleJudgment, battle_key
from nuggetizer.methods.battles.report import BattlesPart
from nuggetizer.methods.battles.rubric import file_digest, load_rubrics
from nuggetizer.methods.battles.step import judge_battles, plan_battles
from nuggetizer.methods.battles.table import BattleTable, read_table, table_of
from nuggetizer.parsing import ParseFailure, label_schema

VERDICTS = ("A", "B", "tie")
RESULTS = ("a", "b", "tie")
SCHEMA = label_schema("verdict", VERDICTS)
# MT-Bench's own verdict format, [[A]], [[B]] or [[C]] (a tie), read as well
_WORD = re.compile(r"\[\[\s*(A|B|C|tie)\s*\]\]|\"verdict\"\s*:\s*\"(A|B|tie)\"", re.I)
_JSON_SPELLINGS = {"a": "A", "b": "B", "tie": "tie"}
_MARKERS = {**_JSON_SPELLINGS, "c": "tie"}
NONE_UNJUDGED: Counter[str] = Counter()  # what a battle with every verdict parsed leaves out


@dataclass(frozen=True)
class BattlesConfig:
    """How battles are judged and ranked."""

    both_orders: bool = setting(True, "judge each battle in both presentation orders; a "
                                "verdict that flips is a tie (MT-Bench)")
    documents: bool = setting(False, "show the texts of the passages the answers cite "
                              "(needs --corpus or report runs carrying `documents`)")
    seed: int = setting(0, "seed of the presentation order (one order) and of the bootstrap")
    ties: str = setting("half", "tie rule of the Bradley-Terry fit: half a win to each side, "
                        "or Davidson's model", choices=("half", "davidson"))
    rounds: int = setting(200, "bootstrap rounds (resampling topics) of the score intervals",
                          minimum=0)
    level: float = setting(0.95, "confidence level of the score intervals")
    reasks: int = setting(DEFAULT_REASKS, "re-asks of a verdict that does not parse", minimum=0)
    rubrics: str = setting("", "rubrics file (ResearchRubrics' shape, or author-rubrics'): the "
                           "topic's criteria shown in the prompt, as RAGDoll's rubric-guided "
                           "battles show them")

    def __post_init__(self) -> None:
        check_choices(self)
        if not 0 < self.level < 1:
            raise ValueError(f"setting level must be between 0 and 1, got {self.level}")


@dataclass
class Battle:
    """One battle to judge: a topic's narrative and two runs' answers (run A's id sorts
    first)."""

    qid: str
    narrative: str
    a: Target
    b: Target
    documents: list[dict[str, str]] = field(default_factory=list)  # cited passages, labelled

    @property
    def key(self) -> str:
        return battle_key(self.qid, self.a.run_id, self.b.run_id)


def is_battles(path: Path) -> bool:
    """Whether `path` is battle judgments: a battles.jsonl, or a folder holding one, or a
    file of castorini RAGDoll's arena judgments."""
    return path.name == BATTLES_FILE or (path / BATTLES_FILE).is_file() or is_ragdoll_arena(path)


def is_ragdoll_arena(path: Path) -> bool:
    """Whether `path` is a file whose first line is a RAGDoll arena judgment."""
    if not path.is_file() or path.suffix.lower() != ".jsonl":
        return False
    with path.open("rb") as f:
        first = next((raw for raw in f if raw.strip()), b"")
    try:
        obj = json.loads(first)
    except ValueError:
        return False
    return isinstance(obj, dict) and ragdoll.is_arena_judgment(obj)


def parse_verdict(text: str) -> str:
    """A, B or tie from an answer: `{"verdict": ...}`, else MT-Bench's [[A]]/[[B]]/[[C]];
    ParseFailure otherwise (never read as a tie)."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        value = value.get("verdict")
    if isinstance(value, str) and value.strip().lower() in _JSON_SPELLINGS:
        return _JSON_SPELLINGS[value.strip().lower()]
    match = _WORD.search(text or "")
    if match:
        return _MARKERS[(match.group(1) or match.group(2)).lower()]
    raise ParseFailure('no verdict found: answer {"verdict": "A"}, {"verdict": "B"} or '
                       '{"verdict": "tie"}')


def cited_documents(a: Target, b: Target) -> list[dict[str, str]]:
    """The passages the two answers cite (when read: `--set documents=true`), labelled by
    their ids, never by run."""
    seen: dict[str, str] = {}
    for target in (a, b):
        for docid, segment in target.cited.items():
            seen.setdefault(docid, f"{segment.title}. {segment.text}" if segment.title
                            else segment.text)
    return [{"label": docid, "text": text} for docid, text in seen.items()]


def render_answer(target: Target) -> str:
    """An answer as the judge reads it: its sentences with their citations as in the run
    ("[0]", "[1]" ...), on one line each; the answer text when it has no sentences."""
    if not target.sentences:
        return target.answer or ""
    return "\n".join(s.text.strip() + "".join(f" [{c}]" for c in s.citations)
                     for s in target.sentences)


def style_of(target: Target) -> dict[str, int]:
    """The style covariates of an answer (measures/style.py): its text one sentence a line
    (citations left out of the words), and its citations counted."""
    text = "\n".join(s.text.strip() for s in target.sentences) if target.sentences \
        else target.answer or ""
    return answer_style(text, sum(len(s.citations) for s in target.sentences))


def style_problem(style: Any) -> str | None:
    """What is wrong with a battle record's `style` (None: nothing, or no style): both
    answers' covariates, each a count, a whole number from 0 (missing ones are 0)."""
    if style is None:
        return None
    if not isinstance(style, dict) or not all(isinstance(style.get(s), dict) for s in "ab"):
        return "'style' must give both answers' counts: {\"a\": {...}, \"b\": {...}}"
    for side in "ab":
        for name in FEATURES:
            value = style[side].get(name, 0)
            if type(value) is not int or not 0 <= value < 2 ** 32:
                return f"style.{side}.{name} is {value!r}, not a count (a whole number from 0)"
    return None


def first_shown(seed: int, key: str) -> str:
    """Which side ("a" or "b") is shown first when a battle is judged in one order: a seeded
    hash of the battle, so a rerun shows the same order."""
    digest = hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()
    return "a" if digest[0] % 2 == 0 else "b"


def ragdoll_first(seed: int, qid: str, run_a: str, run_b: str) -> str:
    """The side ("a", run_a the id that sorts first) castorini RAGDoll shows first
    (arena/stages.py `assistant_order`): the first byte of the sha256 of the seed, both run
    ids sorted and the topic, NUL-separated, even: the pair's first run, as RAGDoll's answer
    files list them (sorted by file name; here by run id)."""
    first, second = sorted((run_a, run_b))
    digest = hashlib.sha256(f"{seed}\x00{first}\x00{second}\x00{qid}".encode()).digest()
    return "a" if digest[0] % 2 == 0 else "b"


@register
class BattlesMethod(AnswerKeyMethod):
    """Blind pairwise battles between runs' answers, ranked by Bradley-Terry."""

    name = "battles"
    prompts = ("battle_judge",)
    declared = mb.DECLARED
    primary = "bt_score"
    targets = ("answer",)  # answers, judged in pairs (a Target and its `opponent`)
    config_type = BattlesConfig
    judging = Judging.keyless(judgments_dir="battles", scoring="runs")

    @classmethod
    def holds(cls, path: Path) -> bool:
        return is_battles(path)

    def report_part(self, runs: Collection[str] | None) -> BattlesPart:
        return BattlesPart(runs)

    def orders(self, battle: Battle) -> list[str]:
        """The side shown first in each order judged (one order: drawn by this project's
        seeded hash, or under the ragdoll profile as castorini RAGDoll draws it)."""
        if self.config.both_orders:
            return ["a", "b"]
        if self.profile.ragdoll_order:
            return [ragdoll_first(self.config.seed, battle.qid, battle.a.run_id, battle.b.run_id)]
        return [first_shown(self.config.seed, battle.key)]

    def settings(self) -> dict[str, Any]:
        """The settings, with the digest of a rubrics file shown in the prompt, and the
        profile when it decides the order a battle is shown in (so a journal of one is never
        resumed by the other)."""
        settings = super().settings()
        if self.config.rubrics:
            settings["rubrics_sha256"] = file_digest(self.config.rubrics)
        if self.profile.ragdoll_order and not self.config.both_orders:
            settings["profile"] = self.profile.name
        return settings

    def messages(self, battle: Battle, first: str) -> tuple[tuple[str, str], ...]:
        """The prompt of one order: no run id anywhere in it."""
        shown = (battle.a, battle.b) if first == "a" else (battle.b, battle.a)
        return self.prompt("battle_judge").render(
            narrative=battle.narrative, answer_a=render_answer(shown[0]),
            answer_b=render_answer(shown[1]),
            documents=battle.documents if self.config.documents else [],
            rubric=self.rubric_of(battle.qid))

    def rubric_of(self, qid: str) -> str:
        """The topic's criteria as the prompt shows them ("" without a rubrics setting)."""
        if not self.config.rubrics:
            return ""
        if "_rubrics" not in self.__dict__:
            self.__dict__["_rubrics"] = load_rubrics(self.config.rubrics)
        rubrics: dict[str, str] = self.__dict__["_rubrics"]
        if qid not in rubrics:
            raise ConfigError(f"--set rubrics={self.config.rubrics}: topic {qid!r} has no "
                              "rubric there; give a rubrics file with every topic judged")
        return rubrics[qid]

    async def judge_together(self, assessor: Assessor,
                             targets: Mapping[str, Mapping[str, Target]],
                             narratives: Mapping[str, str], out_dir: Path,
                             track: str | None = None) -> Any:
        """A track's battles (evaluate): every pair of runs on every topic both answered
        (methods/battles/step.py's schedule, seeded), judged into out_dir/battles.jsonl."""
        plan = plan_battles(targets, narratives, None, None, self.config.seed)
        return await judge_battles(self, plan, assessor, out_dir, track)

    async def judge(self, assessor: Assessor, key: Any, target: Target) -> Outcome:
        """The battle of `target` against its `opponent` (the pair target; run A is the one
        whose id sorts first), on the narrative `key` (else the run's own topic text)."""
        if target.opponent is None:
            raise ConfigError(f"{target.where}: --method battles judges pairs of answers: run "
                              "`nuggetizer battles`")
        a, b = sorted((target, target.opponent), key=lambda t: t.run_id)
        return await self.judge_battle(assessor, Battle(
            target.qid, str(key or a.query or b.query), a, b, cited_documents(a, b)))

    async def judge_battle(self, assessor: Assessor, battle: Battle) -> Outcome:
        """The judgment record of one battle, every order asked concurrently."""
        async def one(first: str) -> dict[str, Any]:
            parsed = await assessor.ask(self.messages(battle, first), parse_verdict,
                                        schema=SCHEMA, max_tokens=16,
                                        reasks=self.config.reasks)
            order: dict[str, Any] = {"first": battle.a.run_id if first == "a"
                                     else battle.b.run_id, "verdict": parsed.value or UNJUDGED}
            if parsed.value is None:
                order["error"] = parsed.error
                order.update(parsed.kept())
            return order

        orders = list(await asyncio.gather(*(one(f) for f in self.orders(battle))))
        record: dict[str, Any] = {"qid": battle.qid, "run_a": battle.a.run_id,
                                  "run_b": battle.b.run_id, "narrative": battle.narrative,
                                  "orders": orders, "style": {"a": style_of(battle.a),
                                                              "b": style_of(battle.b)}}
        record.update(outcome(record))
        return Outcome(record, record["unjudged"])

    # --- records at the file edge ----------------------------------------------------------

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> dict[str, Any]:
        """A battle line, checked: its ids, orders and verdicts; `result` recomputed from
        them (so a hand-edited verdict decides). A castorini RAGDoll arena judgment reads as
        a battle of one order (formats/ragdoll.py)."""
        if ragdoll.is_arena_judgment(obj):
            obj = ragdoll.arena_battle(obj, path, line)
            obj.pop("task_id")
        validated(BattleJudgment, obj, path, line)
        obj["qid"], obj["run_a"], obj["run_b"] = map(str, (obj["qid"], obj["run_a"],
                                                           obj["run_b"]))
        if obj["run_a"] == obj["run_b"]:
            raise InputError(path, line, f"run {obj['run_a']!r} battles itself")
        orders = obj["orders"]
        firsts = [str(o["first"]) for o in orders]
        if len(orders) == 2 and set(firsts) != {obj["run_a"], obj["run_b"]}:
            raise InputError(path, line, "'orders' holds one order, or two: one with each run "
                             "shown first")
        for k, order in enumerate(orders):
            verdict, order["first"] = order.get("verdict"), firsts[k]  # ids as text, as above
            if firsts[k] not in (obj["run_a"], obj["run_b"]):
                raise InputError(path, line, f"orders[{k}].first must be run_a or run_b")
            if verdict in VERDICTS or verdict == UNJUDGED:
                continue
            if not lenient:
                raise InputError(path, line, f"orders[{k}] has verdict {verdict!r}, not one of "
                                 f"{', '.join(VERDICTS)} or {UNJUDGED} (--lenient records it "
                                 "unjudged)")
            order["verdict"], order["reason"] = UNJUDGED, f"off-menu verdict {verdict!r}"
        problem = style_problem(obj.get("style"))
        if problem is not None:
            if not lenient:
                raise InputError(path, line, f"{problem} (--lenient scores the battle without "
                                 "style control)")
            obj["style"] = None
        obj.update(outcome(obj))
        return obj

    def read_table(self, paths: Sequence[Path], lenient: bool = False) -> BattleTable:
        """The battles as `score` reads them: one table of arrays (methods/battles/table.py),
        each line checked by hand, the full check (and its message) for any line that does
        not pass. Files of RAGDoll's arena judgments are read whole, a task's completed row
        kept over the failed ones a resumed arena leaves beside it."""
        if not any(map(is_ragdoll_arena, paths)):
            return read_table(paths, lambda obj, where, line: self.judgment_record(
                obj, where, line, lenient))
        records: list[tuple[dict[str, Any], Path, int]] = []
        for path in paths:
            if is_ragdoll_arena(path):
                rows = [(obj, line) for line, obj in iter_jsonl(path)]
                records += [(self.judgment_record(battle, path, line, lenient), path, line)
                            for battle, line in ragdoll.arena_battles(rows, path)]
            else:
                records += [(j.record, j.path, j.line) for j in self.read_judged(path, lenient)]
        return table_of(records)

    def table_of(self, judged: Sequence[Judged]) -> BattleTable:
        return table_of([(j.record, j.path, j.line) for j in judged])

    def judgment_ids(self, judgment: Any) -> tuple[str, str]:
        """(the pair `run_a vs run_b`, topic): one judgment per battle."""
        return f"{judgment['run_a']} vs {judgment['run_b']}", judgment["qid"]

    def unjudged(self, judgment: Mapping[str, Any]) -> Counter[str]:
        """Orders whose verdict never parsed (none: a shared empty count, read only)."""
        n = int(judgment.get("unjudged") or 0)
        return Counter({"verdicts": n}) if n else NONE_UNJUDGED

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """A battle without a result (no order's verdict parsed): its pair of answers is
        left out and counted as one ("answers with nothing judged"), never a tie."""
        return "answer" if judgment.get("result") == UNJUDGED else None

    def score(self, key: Any, judgment: Any, pool: Sequence[Any]) -> dict[str, float]:
        raise ConfigError("battles are scored all at once (score_runs)")

    def score_runs(self, table: Any, topics: Sequence[str]) -> RunScores:
        cfg: BattlesConfig = self.config
        return mb.run_scores(table, ties=cfg.ties, rounds=cfg.rounds, seed=cfg.seed,
                             level=cfg.level)


def outcome(record: Mapping[str, Any]) -> dict[str, Any]:
    """`result`, `flipped` and `unjudged` of a battle from its orders' verdicts: one order's
    verdict mapped to the run it names; two orders reconciled by MT-Bench's rule
    (measures/verdicts.py: a verdict that changes with the order is a tie and a flip; a
    missing one leaves the battle unjudged, never a tie)."""
    orders = record["orders"]
    unjudged = sum(1 for o in orders if o["verdict"] not in VERDICTS)
    if len(orders) == 1:
        verdict = POSITION.get(orders[0]["verdict"])
        first_is_a = orders[0]["first"] == record["run_a"]
        result = verdict if verdict in (None, "tie") or first_is_a else SWAPPED[verdict]
        return {"result": result or UNJUDGED, "flipped": False, "unjudged": unjudged}
    both = two_orders(record)
    reconciled = both.verdict()
    return {"result": reconciled.result if reconciled else UNJUDGED,
            "flipped": bool(both.flipped()), "unjudged": unjudged}
