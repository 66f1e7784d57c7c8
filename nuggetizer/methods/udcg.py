"""UDCG (as published): passage utilities from relevance and the generator's NO-RESPONSE odds.

Key record (the reference sample's field names): `{"qid", "query", "passages": [{"doc_id",
"is_relevant", "models_info": {generator model: {"no_res_prob": p_NR}}}]}`; p_NR is stored
under the generator model that produced it, so one key can hold several generators. p_NR comes
from one call per (question, passage) asking for the first token's top log-probabilities
(`Request(top_logprobs=k, max_tokens=1)`, the same on `local` llama.cpp and `openai:` servers,
vLLM's included); see `nuggetizer.measures.udcg.no_response_probability` for how tokens are matched.
Relevance comes from the qrels (grade >= min_grade) or, with `relevance = "llm"`, from an LLM
judge given the question and the reference answers. Both prompts are the reference code's
(github.com/GiovanniTRA/UDCG: the generator's system message and `Document:` user message of
src/compute_abstention_probability.py, the judge's RELEVANCE_TEMPLATE of src/prompts.py).
Judgment record of a retrieval context: `{"run_id", "qid", "model", "docids", "utilities"}`;
a passage the key has no p_NR for gets a null utility (counted in k, adds 0, as the reference
code does) and is counted as unjudged. A reasoning model cannot be the generator: its first
token is thinking, so its log-probabilities are no p_NR. One known to reason (a reasoning
effort, reasoning tokens, a server that takes only max_completion_tokens) is refused before
any call, one that shows it only in its answer on that answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor, RefusedError, Request
from nuggetizer.assessors.reasoning import known_to_reason, shows_reasoning
from nuggetizer.assessors.untrusted import line_safe
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.keys import read_udcg_dataset
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target, reasks_setting
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.interface.judging import AnswerKey, Judging
from nuggetizer.interface.registry import register
from nuggetizer.measures import udcg as mu
from nuggetizer.methods.records import UdcgJudgment, UdcgKey
from nuggetizer.parsing import ParseFailure
from nuggetizer.templates import load_prompt
from nuggetizer.types import Topic

# The reference code's relevance judge answers {"motivation", "grade": "A" (RELEVANT) or "B"}.
RELEVANCE_SCHEMA = {
    "type": "object",
    "properties": {"motivation": {"type": "string", "maxLength": 400},
                   "grade": {"type": "string", "enum": ["A", "B"]}},
    "required": ["motivation", "grade"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class UdcgConfig:
    """UDCG knobs: gamma, context depth, relevance source, qrels threshold, top-k log-probs."""

    gamma: float = setting(mu.GAMMA, "weight of the irrelevant passages' negative utility")
    k: int = setting(5, "passages of a retrieval context judged", minimum=1)
    relevance: str = setting("qrels", "where a passage's relevance comes from: the qrels, or "
                             "an LLM judge", choices=("qrels", "llm"))
    min_grade: int = setting(1, "lowest qrels grade of a relevant passage (relevance=qrels)")
    top_logprobs: int = setting(20, "first-token log-probabilities read for p(NO-RESPONSE)",
                                minimum=1)
    reasks: int = reasks_setting()

    def __post_init__(self) -> None:
        check_choices(self)


def parse_relevance(text: str) -> bool:
    """True for the reference judge's `{"grade": "A"}` (RELEVANT), False for "B"; else True for
    "relevant", False for "irrelevant" (whichever word comes first)."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    grade = value.get("grade") if isinstance(value, dict) else None
    if isinstance(grade, str) and grade.strip().upper() in ("A", "B"):
        return grade.strip().upper() == "A"
    lowered = (text or "").lower()
    positions = {w: lowered.find(w) for w in ("irrelevant", "relevant")}
    if positions["irrelevant"] >= 0 and positions["irrelevant"] <= positions["relevant"]:
        return False
    if positions["relevant"] >= 0:
        return True
    raise ParseFailure('answer "relevant" or "irrelevant"')


def reasoning_refused(spec: str, why: str) -> ConfigError:
    """The one-line refusal of a reasoning model as UDCG's generator, saying why."""
    return ConfigError(f"--method udcg cannot use {spec}: it is a reasoning model ({why}), and "
                       "UDCG reads p(NO-RESPONSE) from the log-probabilities of the first token "
                       "it writes, which would be thinking, not its answer; give a model that "
                       "answers without thinking")


async def no_response_probability(
    assessor: Assessor, question: str, passage: str, top_logprobs: int
) -> float | None:
    """p_NR of the assessor's model for one (question, passage); None without log-probs or
    when the server refused the request. A reasoning model is refused (ConfigError) on the
    first answer that shows thinking: its first token's log-probabilities are no p_NR."""
    request = Request(
        messages=load_prompt("udcg_no_response").render(question=question,
                                                        passage=line_safe(passage)),
        max_tokens=1, temperature=0.0, top_logprobs=top_logprobs,
    )
    try:
        completion = await assessor.complete(request)
    except RefusedError:  # refused for this passage (counted, reason kept): no p_NR, unjudged
        return None
    if shows_reasoning(completion.reasoning, completion.reasoning_tokens,
                       completion.first_token_logprobs):
        raise reasoning_refused(assessor.spec, "its answer began with thinking")
    if completion.first_token_logprobs is None:
        return None
    return mu.no_response_probability(completion.first_token_logprobs)


def _json_array(path: Path) -> bool:
    """Whether a file holds one JSON array (its first non-space character is `[`)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError:
        return False  # read_keys names the problem
    return head.startswith(b"[")


def utilities(key: Mapping[str, Any], model: str, docids: Sequence[str]) -> list[float | None]:
    """u per passage of a context for generator `model` (None: no p_NR stored for it)."""
    by_id = {p["doc_id"]: p for p in key["passages"]}
    out: list[float | None] = []
    for docid in docids:
        info = by_id.get(docid, {}).get("models_info", {}).get(model)
        if info is None or info.get("no_res_prob") is None:
            out.append(None)
        else:
            out.append(mu.utility(bool(by_id[docid]["is_relevant"]), info["no_res_prob"]))
    return out


@register
class UdcgMethod(AnswerKeyMethod):
    """UDCG: utility- and distraction-aware gain of the passages a generator reads."""

    name = "udcg"
    prompts = ("udcg_no_response", "udcg_relevance")
    declared = mu.DECLARED
    primary = "UDCG"
    targets = ("context",)
    config_type = UdcgConfig

    judging = Judging.keyed(AnswerKey(reads={"docs_runs", "qrels", "corpus"},
                                      file="udcg_key.jsonl"))
    key_model = UdcgKey
    judgment_model = UdcgJudgment

    def check_inputs(self, topics: Mapping[str, Topic], topics_path: Path, has_qrels: bool
                     ) -> None:
        if not has_qrels and self.config.relevance == "qrels":
            raise ConfigError("UDCG relevance from qrels needs --qrels (or --set relevance=llm)")

    def check_assessor(self, assessor: Assessor) -> None:
        """A model known to reason is refused before any call (see `reasoning_refused`)."""
        assessor.recall()  # what an earlier run learned of its server (max_completion_tokens)
        why = known_to_reason(assessor.options)
        if why is not None:
            raise reasoning_refused(assessor.spec, why)

    def read_keys(self, path: str | Path, lenient: bool = False) -> dict[str, Any]:
        """A key file (JSONL), or the reference code's JSON array of examples (its sample's
        dataset_with_scores.json: `example_id` becomes the topic id)."""
        path = Path(path)
        if _json_array(path):
            keys: dict[str, Any] = {}
            for record in read_udcg_dataset(path):
                if not any(p["models_info"] for p in record["passages"]):
                    raise InputError(path, 1, f"example {record['qid']!r} has no models_info "
                                     "(no p_NR of any generator): this is the reference's input "
                                     "dataset, not a key; give its dataset_with_scores.json, or "
                                     "build a key with nuggetize --method udcg")
                if record["qid"] in keys:
                    raise InputError(path, None, f"example_id {record['qid']!r} twice")
                keys[record["qid"]] = record
            if not keys:
                raise InputError(path, None, "no udcg examples in file")
            return keys
        return super().read_keys(path, lenient)

    async def _relevant(self, assessor: Assessor, item: KeyInput, docid: str, text: str
                        ) -> bool | None:
        cfg: UdcgConfig = self.config
        if cfg.relevance == "qrels":
            return item.grades.get(docid, 0) >= cfg.min_grade
        parsed = await assessor.ask(
            load_prompt("udcg_relevance").render(
                question=item.query, passage=line_safe(text),
                answers=[item.reference] if item.reference else []),
            parse_relevance, schema=RELEVANCE_SCHEMA, max_tokens=160, reasks=cfg.reasks,
        )
        return parsed.value

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        cfg: UdcgConfig = self.config
        docs = item.documents
        p_nr = await asyncio.gather(*(
            no_response_probability(assessor, item.query, d.text, cfg.top_logprobs)
            for d in docs))
        relevant = await asyncio.gather(*(self._relevant(assessor, item, d.id, d.text)
                                          for d in docs))
        passages = []
        for doc, p, rel in zip(docs, p_nr, relevant, strict=True):
            passages.append({"doc_id": doc.id, "is_relevant": rel,
                             "models_info": {assessor.model: {"no_res_prob": p}}})
        missing = sum(1 for p in p_nr if p is None) + sum(1 for r in relevant if r is None)
        record = {"qid": item.qid, "query": item.query, "passages": passages}
        return Outcome(record, missing)

    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target) -> Outcome:
        cfg: UdcgConfig = self.config
        docids = [p.id for p in (target.passages or [])][: cfg.k]
        values = utilities(key, assessor.model, docids)
        unjudged = sum(1 for u in values if u is None)
        record = {"run_id": target.run_id, "qid": target.qid, "model": assessor.model,
                  "docids": docids, "utilities": values, "unjudged": unjudged}
        return Outcome(record, unjudged)

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """A context none of whose passages has a utility (no p_NR for the generator): no
        score."""
        values = judgment["utilities"]
        return "context" if values and all(u is None for u in values) else None

    def score(
        self, key: Mapping[str, Any], judgment: Mapping[str, Any],
        pool: Sequence[Mapping[str, Any]],
    ) -> dict[str, float]:
        cfg: UdcgConfig = self.config
        return {"UDCG": mu.udcg(judgment["utilities"], cfg.gamma)}
