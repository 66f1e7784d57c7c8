"""Agentic nugget creation (RAGDoll's `nuggetizer agentic-create`, castorini/RAGDoll): instead
of windows of judged passages, the model gets the topic and tools to search the corpus and read
its documents (search/tools.py, over a local BM25 index or castorini's search API), calls them
as it likes, and answers the nugget list; the list is then labelled vital / okay with the
AutoNuggetizer's importance prompt (as RAGDoll labels it), sorted and trimmed as the method's
settings say (`--keep 0` keeps RAGDoll's untrimmed list).

Every model call is an ordinary assessor call (cache -> retries -> concurrency limit ->
backend) whose request carries the tools and the rounds of calls and results so far, so a rerun
replays a topic's whole conversation from the cache, and a topic cut short by a kill is resumed
from its last stored round (the tool results are the same: the index, or the search API's
cached answers). A conversation is bounded: at most `turns` model calls, and once `tokens`
(prompt and completion, summed over its calls) are spent the next call is its last; the last
call offers the tools with `tool_choice` "none", asking for the answer. An answer that gives no
list, a model that still calls tools on its last call, or a call the server refuses leave the
topic without nuggets, the reason and the raw answer kept (counted as unjudged).

Each key line keeps the conversation's trace under `agentic`: the tools called (name and
arguments), the model calls, their tokens, and why it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.protocol import Completion, RefusedError, Request, ToolTurn
from nuggetizer.assessors.reasoning import BudgetExhausted
from nuggetizer.errors import ConfigError
from nuggetizer.formats.nuggets import nuggets_record
from nuggetizer.interface.base import KeyInput, Outcome
from nuggetizer.labels import UNJUDGED
from nuggetizer.methods.nuggets.labelling import Unparsed
from nuggetizer.methods.nuggets.method import NuggetsMethod
from nuggetizer.methods.nuggets.steps import (
    AGENTIC_PROMPT,
    NUGGET_CHARS,
    NUGGET_TOKENS,
    KeyResult,
    NuggetConfig,
    label_importance,
    sort_and_trim,
)
from nuggetizer.names import AGENTIC_TOKENS, AGENTIC_TURNS
from nuggetizer.parsing import ParseFailure, parse_strings, strings_schema
from nuggetizer.search.base import Searcher
from nuggetizer.search.tools import Limits, Toolbox
from nuggetizer.templates import load_prompt
from nuggetizer.types import Nugget, NuggetList

PROMPT = AGENTIC_PROMPT


@dataclass(frozen=True)
class Bounds:
    """How far one topic's conversation may go (see the module's doc)."""

    turns: int = AGENTIC_TURNS
    tokens: int = AGENTIC_TOKENS

    def __post_init__(self) -> None:
        if self.turns < 1 or self.tokens < 1:
            raise ConfigError("--max-turns and --max-agent-tokens must be at least 1")


@dataclass
class Trace:
    """What one topic's conversation did."""

    calls: list[dict[str, Any]] = field(default_factory=list)  # the tools called
    tokens: list[int] = field(default_factory=list)  # prompt + completion of each model call
    prompt_tokens: int = 0
    completion_tokens: int = 0
    stopped: str = ""  # answered | turns | tokens | refused | unparsed

    @property
    def model_calls(self) -> int:
        return len(self.tokens)

    def add(self, completion: Completion) -> None:
        self.tokens.append(completion.prompt_tokens + completion.completion_tokens)
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens

    def record(self) -> dict[str, Any]:
        return {"model_calls": self.model_calls, "tool_calls": self.calls,
                "tokens_per_call": self.tokens, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "stopped": self.stopped}


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


async def converse(assessor: Assessor, messages: Sequence[tuple[str, str]], toolbox: Toolbox,
                   bounds: Bounds, *, schema: dict[str, Any], max_tokens: int, trace: Trace
                   ) -> Completion:
    """The model's answer after as many rounds of tool calls as it makes within `bounds`;
    `trace` records them. RefusedError and BudgetExhausted are the caller's."""
    turns: list[ToolTurn] = []
    why_last = "turns"
    while True:
        last = trace.model_calls + 1 >= bounds.turns or \
            trace.prompt_tokens + trace.completion_tokens >= bounds.tokens
        if last and trace.prompt_tokens + trace.completion_tokens >= bounds.tokens:
            why_last = "tokens"
        request = Request(messages=tuple(messages), schema=schema, max_tokens=max_tokens,
                          temperature=assessor.temperature, tools=toolbox.tools,
                          turns=tuple(turns), tool_choice="none" if last else None)
        completion = await assessor.within_budget(request)
        trace.add(completion)
        calls = completion.calls
        if not calls:
            trace.stopped = why_last if last else "answered"
            return completion
        if last:
            trace.stopped = why_last
            return Completion(text="", model=completion.model, finish_reason="tool_calls")
        results = []
        for call in calls:
            trace.calls.append({"name": call.name, "arguments": _arguments(call.arguments)})
            results.append(await toolbox.run(call))
        turns.append(ToolTurn(completion.text, calls, tuple(results)))


async def agentic_nuggets(assessor: Assessor, qid: str, query: str, searcher: Searcher,
                          config: NuggetConfig, bounds: Bounds, limits: Limits,
                          initial: Sequence[str] = ()) -> tuple[KeyResult, Trace]:
    """One topic's nuggets made by the model with the search tools, labelled vital / okay (and
    sorted and trimmed) as the method's settings say."""
    messages = load_prompt(PROMPT).render(query=query, nuggets=list(initial),
                                          max_nuggets=config.max_nuggets, render=config.render)
    toolbox = Toolbox(searcher, limits)
    trace = Trace()
    unparsed: list[Unparsed] = []
    texts: list[str] = []
    try:
        answer = await converse(
            assessor, messages, toolbox, bounds, trace=trace,
            schema=strings_schema(config.max_nuggets, min_items=1, max_length=NUGGET_CHARS),
            max_tokens=NUGGET_TOKENS * config.max_nuggets + 16)
    except (RefusedError, BudgetExhausted) as exc:
        trace.stopped = "refused"
        unparsed.append(Unparsed("agentic", 0, str(exc), f"no answer: {exc}"))
    else:
        try:
            texts = parse_strings(answer.text, config.max_nuggets)
        except ParseFailure as exc:
            why = "the model still called tools on its last call" \
                if answer.finish_reason == "tool_calls" else str(exc) or "no list in the answer"
            unparsed.append(Unparsed("agentic", 0, answer.text, why, answer.reasoning))
            trace.stopped = "unparsed"
    nuggets = [Nugget(text=t) for t in texts[:config.max_nuggets]]
    if config.label and nuggets:
        unparsed += await label_importance(assessor, query, nuggets, config)
        nuggets = sort_and_trim(nuggets, config.keep)
    return KeyResult(NuggetList(qid=qid, query=query, nuggets=nuggets), unparsed), trace


class AgenticNuggets(NuggetsMethod):
    """The nuggets method whose keys are made agentically (`nuggetize --agentic`): the same
    records, judging and scores; building reads no qrels, only the topics and the searcher."""

    def __init__(self, config: NuggetConfig | None = None, *, searcher: Searcher,
                 bounds: Bounds | None = None, limits: Limits | None = None) -> None:
        super().__init__(config)
        self.searcher = searcher
        self.bounds = bounds or Bounds()
        self.limits = limits or Limits()

    def used_prompts(self) -> tuple[str, ...]:
        return (PROMPT, "nuggets_importance") if self.config.label else (PROMPT,)

    def settings(self) -> dict[str, Any]:
        found = super().settings()
        found["creation"] = {"mode": "agentic", "search": self.searcher.provenance(),
                             "max_turns": self.bounds.turns,
                             "max_tokens": self.bounds.tokens,
                             "limits": vars(self.limits)}
        return found

    def unrendered_key_calls(self, inputs: Sequence[KeyInput]) -> int:
        """The rounds after each conversation's first (at most the turns), and the
        importance batches."""
        batches = -(-self.config.max_nuggets // max(1, self.config.label_batch))
        return len(inputs) * ((self.bounds.turns - 1) + (batches if self.config.label else 0))

    def check_assessor(self, assessor: Assessor) -> None:
        backend = getattr(assessor, "backend", None)
        if not getattr(backend, "calls_tools", False):
            spec = getattr(assessor, "spec", None) or "an ensemble"
            raise ConfigError(f"--agentic: {spec} does not call tools; give one assessor "
                              "whose server takes OpenAI's tools (openai:MODEL) or mock")

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        result, trace = await agentic_nuggets(assessor, item.qid, item.query, self.searcher,
                                              self.config, self.bounds, self.limits)
        record = nuggets_record(result.nuggets)
        record["agentic"] = trace.record()
        if result.unparsed:
            record["unparsed"] = [u.record() for u in result.unparsed]
        problems = len(result.unparsed) + sum(
            1 for n in result.nuggets.nuggets if n.importance == UNJUDGED)
        return Outcome(record, problems)
