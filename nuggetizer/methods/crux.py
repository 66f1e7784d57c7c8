"""CRUX (as published): sub-questions from a reference summary, rated 0-5 against texts.

Key record: `{"qid", "query", "questions": [{"text", "answerable"}], "ratings": {docid:
[rating per question]}, "tokens": {docid: n}}`; `answerable` is false for a question no
relevant passage answers (rating >= eta), null when no relevant passage was given.
Judgment record of a retrieval context: `{"run_id", "qid", "target": "context", "docids",
"ratings", "tokens"}`; of an answer: `{"run_id", "qid", "target": "answer", "answer_text",
"ratings": [...]}`. A rating that never parsed is null, kept with its raw text under
`unparsed`, counted as unjudged and scored 0 (the published rule).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.untrusted import inline
from nuggetizer.errors import InputError
from nuggetizer.formats.records import validated
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target, reasks_setting
from nuggetizer.interface.declare import setting
from nuggetizer.interface.judging import AnswerKey, Judging
from nuggetizer.interface.registry import register
from nuggetizer.measures import crux as mc
from nuggetizer.methods.records import CruxAnswerJudgment, CruxContextJudgment, CruxKey
from nuggetizer.parsing import ParseFailure, parse_strings
from nuggetizer.templates import load_prompt
from nuggetizer.types import Topic

RATING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"rating": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]}},
    "required": ["rating"],
    "additionalProperties": False,
}
_QUESTION = re.compile(r"(?:<q>)?\s*(.+?)\s*</q>", re.DOTALL)
_DIGIT = re.compile(r"(?<![0-9.])([0-5])(?![0-9.])")


@dataclass(frozen=True)
class CruxConfig:
    """CRUX knobs: questions per topic, coverage threshold, context depth, alpha, filter."""

    n_questions: int = setting(15, "sub-questions written per topic from its reference summary",
                               minimum=1)
    eta: int = setting(mc.ETA, "lowest rating (0-5) at which a text answers a sub-question")
    k: int = setting(5, "passages of a retrieval context judged (alpha-nDCG@k)", minimum=1)
    alpha: float = setting(mc.ALPHA, "alpha-nDCG's redundancy penalty")
    filter: bool = setting(True, "drop the sub-questions no judged passage answers")
    reasks: int = reasks_setting()


def parse_questions(text: str, n: int) -> list[str]:
    """Questions written as `...</q>` blocks (the prompt opens the first `<q>`) or a JSON list;
    at most `n` are kept; none is a ParseFailure."""
    questions = [q.strip() for q in _QUESTION.findall(text or "") if q.strip()]
    if not questions:
        try:
            questions = parse_strings(text, None, min_items=1)
        except ParseFailure:
            raise ParseFailure("no question found; write each question as <q>...</q>") from None
    questions = [q.removeprefix("<q>").strip() for q in questions]
    return [q for q in questions if q][:n]


def questions_schema(n: int) -> dict[str, Any]:
    """A JSON array of exactly `n` non-empty questions (at most 200 characters each)."""
    item = {"type": "string", "minLength": 1, "maxLength": 200}
    return {"type": "array", "items": item, "minItems": n, "maxItems": n}


def parse_rating(text: str) -> int:
    """The first standalone digit 0-5 of the answer (plain "4" or {"rating": 4})."""
    match = _DIGIT.search(text or "")
    if match is None:
        raise ParseFailure("no rating from 0 to 5 found; answer with the rating only")
    return int(match.group(1))


async def rate(
    assessor: Assessor, question: str, context: str, reasks: int
) -> tuple[int | None, str]:
    """One (question, text) rating, or (None, raw output) when it never parsed."""
    parsed = await assessor.ask(
        load_prompt("crux_rating").render(question=question, context=inline(context)),
        parse_rating, schema=RATING_SCHEMA, max_tokens=12, reasks=reasks,
    )
    return parsed.value, parsed.raw


async def rate_all(
    assessor: Assessor, questions: Sequence[str], texts: Mapping[str, str], reasks: int
) -> tuple[dict[str, list[int | None]], list[dict[str, Any]]]:
    """Ratings of every (text, question) pair, one call each: ({id: [ratings]}, unparsed)."""
    ids = list(texts)
    jobs = [rate(assessor, q, texts[d], reasks) for d in ids for q in questions]
    results = await asyncio.gather(*jobs)
    table: dict[str, list[int | None]] = {d: [] for d in ids}
    unparsed: list[dict[str, Any]] = []
    n = len(questions)
    for index, (value, raw) in enumerate(results):
        docid, q = ids[index // n], index % n
        table.setdefault(docid, []).append(value)
        if value is None:
            unparsed.append({"id": docid, "question": q, "raw": raw})
    return table, unparsed


@register
class CruxMethod(AnswerKeyMethod):
    """CRUX: sub-questions as the answer key, for retrieval contexts and answers."""

    name = "crux"
    prompts = ("crux_questions", "crux_rating")
    declared = mc.DECLARED
    primary = "alpha_nDCG"
    targets = ("context", "answer")
    config_type = CruxConfig
    judging = Judging.keyed(AnswerKey(needs={"reference"}, reads={"qrels", "corpus"},
                                      file="crux_key.jsonl"), scoring="pool")
    key_model = CruxKey

    def check_inputs(self, topics: Mapping[str, Topic], topics_path: Path, has_qrels: bool
                     ) -> None:
        for topic in topics.values():
            if not topic.reference:
                raise InputError(topics_path, topic.line, f"topic {topic.id!r} has no "
                                 "'summary': CRUX writes its questions from the reference summary")

    def key_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                   ) -> dict[str, Any]:
        super().key_record(obj, path, line, lenient)
        n = len(obj["questions"])
        for docid, row in obj["ratings"].items():
            if len(row) != n:
                raise InputError(path, line, f"ratings[{docid!r}] must list {n} ratings "
                                 f"(one per question), got {len(row)}")
        return obj

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> dict[str, Any]:
        """A judgment line, checked: an answer's ratings, or a context's passages and their
        ratings (every passage it lists rated)."""
        answer = obj.get("target") == "answer"
        validated(CruxAnswerJudgment if answer else CruxContextJudgment, obj, path, line)
        missing = [] if answer else [d for d in obj["docids"] if d not in obj["ratings"]]
        if missing:
            raise InputError(path, line, f"docids lists {missing[0]!r} but ratings does not "
                             "rate it: add its ratings, or drop it from docids")
        return obj

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        cfg: CruxConfig = self.config
        if not item.reference:
            raise InputError(None, None, f"topic {item.qid!r} has no reference summary "
                             "(CRUX writes its questions from the 'summary' field)")
        parsed = await assessor.ask(
            load_prompt("crux_questions").render(n=cfg.n_questions, summary=item.reference),
            lambda text: parse_questions(text, cfg.n_questions),
            schema=questions_schema(cfg.n_questions),
            max_tokens=60 * cfg.n_questions + 16, reasks=cfg.reasks,
        )
        record: dict[str, Any] = {"qid": item.qid, "query": item.query}
        if parsed.value is None:
            record.update(questions=[], ratings={}, tokens={},
                          unparsed=[{"step": "questions", **parsed.kept()}])
            return Outcome(record, 1)
        questions = parsed.value
        texts = {d.id: d.text for d in item.documents} if cfg.filter else {}
        ratings, unparsed = await rate_all(assessor, questions, texts, cfg.reasks)
        answerable: list[bool | None] = [None] * len(questions)
        if texts:
            answerable = [
                any((r := row[i]) is not None and r >= cfg.eta for row in ratings.values())
                for i in range(len(questions))
            ]
        record["questions"] = [
            {"text": q, "answerable": a} for q, a in zip(questions, answerable, strict=True)
        ]
        record["ratings"] = ratings
        record["tokens"] = {d: mc.tokens(t) for d, t in texts.items()}
        if unparsed:
            record["unparsed"] = unparsed
        return Outcome(record, len(unparsed))

    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target) -> Outcome:
        cfg: CruxConfig = self.config
        questions = [q["text"] for q in key["questions"]]
        record: dict[str, Any] = {"run_id": target.run_id, "qid": target.qid}
        if target.passages is not None:
            context = target.passages[: cfg.k]
            known = key.get("ratings", {})
            todo = {p.id: p.text for p in context if p.id not in known and p.text}
            fresh, unparsed = await rate_all(assessor, questions, todo, cfg.reasks)
            for p in context:  # a passage without text (not in the corpus) is unjudged
                if p.id not in known and not p.text:
                    fresh[p.id] = [None] * len(questions)
                    unparsed.append({"id": p.id, "question": None, "raw": "",
                                     "error": "passage not in the corpus"})
            record.update(
                target="context",
                docids=[p.id for p in context],
                ratings={p.id: fresh[p.id] if p.id in fresh else known[p.id] for p in context},
                tokens={p.id: mc.tokens(p.text) for p in context},
            )
        else:
            answer = target.answer or ""
            table, unparsed = await rate_all(assessor, questions, {"answer": answer}, cfg.reasks)
            record.update(target="answer", answer_text=answer,
                          ratings=table.get("answer", []), tokens=mc.tokens(answer))
        if unparsed:
            record["unparsed"] = unparsed
        record["unjudged"] = len(unparsed)
        return Outcome(record, len(unparsed))

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """An answer, or a context, with no rating that parsed: no score."""
        if judgment.get("target") == "answer":
            ratings = list(judgment["ratings"])
            target = "answer"
        else:
            ratings = [r for d in judgment["docids"] for r in judgment["ratings"][d]]
            target = "context"
        return target if ratings and all(r is None for r in ratings) else None

    def score(
        self, key: Mapping[str, Any], judgment: Mapping[str, Any],
        pool: Sequence[Mapping[str, Any]],
    ) -> dict[str, float]:
        cfg: CruxConfig = self.config
        answerable = [q["answerable"] is not False for q in key["questions"]]
        if judgment.get("target") == "answer":
            return {"Cov_answer": mc.coverage([judgment["ratings"]], answerable, cfg.eta)}
        ratings, lengths = topic_pool(key, pool)
        context = [judgment["ratings"][d] for d in judgment["docids"]]
        cov = mc.coverage(context, answerable, cfg.eta)
        oracle = mc.oracle_context(ratings, answerable, cfg.eta)
        oracle_cov = mc.coverage([ratings[d] for d in oracle], answerable, cfg.eta)
        used = sum(judgment["tokens"][d] for d in judgment["docids"])
        return {
            "alpha_nDCG": mc.alpha_ndcg(judgment["docids"], ratings, cfg.k, answerable,
                                        cfg.alpha, cfg.eta),
            "Cov": cov,
            "Den": mc.density(cov, used, oracle_cov, sum(lengths[d] for d in oracle)),
        }

    def diversity_qrels(self, keys: Mapping[str, Any], files: Sequence[Path], out: Path
                        ) -> None:
        """Write the judged pool of every topic (key and context ratings) as diversity qrels
        (`qid subtopic docid rel`), which ir_measures' alpha_nDCG reads."""
        judgments: dict[str, list[dict[str, Any]]] = {}
        for path in files:
            for judged in self.read_judged(path):
                judgments.setdefault(judged.qid, []).append(judged.record)
        lines = []
        for qid, key in keys.items():
            pool, _ = topic_pool(key, judgments.get(qid, []))
            answerable = [q["answerable"] is not False for q in key["questions"]]
            lines += mc.diversity_qrels(qid, pool, answerable, self.config.eta)
        write_text_atomic(out, "\n".join(lines) + "\n")


def topic_pool(
    key: Mapping[str, Any], judgments: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, list[int | None]], dict[str, int]]:
    """Every rated passage of a topic (the key's and all runs' contexts) and its token count."""
    ratings: dict[str, list[int | None]] = dict(key.get("ratings", {}))
    lengths: dict[str, int] = dict(key.get("tokens", {}))
    for judgment in judgments:
        if judgment.get("target") == "context":
            ratings.update(judgment["ratings"])
            lengths.update(judgment["tokens"])
    return ratings, lengths
