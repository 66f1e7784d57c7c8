"""Reasoning models: what they are sent, and what of their answer is thinking.

A reasoning model (OpenAI's GPT-5 family and o-series; Qwen3, DeepSeek-R1 and the like served
by vLLM or SGLang) thinks before it answers, and its thinking never reaches the label parser:

- `reasoning_content` (vLLM's and SGLang's reasoning parsers) or `reasoning` (as some servers
  name it) is a field of the message beside `content`;
- a `<think>...</think>` block opens the content when the server has no reasoning parser; a
  `<think>` that never closes (the answer cut off at its token budget while thinking) is all
  thinking, and the answer is empty.

Its thinking counts against the token budget (`max_completion_tokens`). A model known to
reason (a reasoning effort was given, or its server takes only `max_completion_tokens`) gets
an allowance for it on top of every call's budget: ALLOWANCE_FACTOR times the reasoning tokens
a call is expected to spend (`--reasoning-tokens`, else EXPECTED_REASONING_TOKENS of the
effort, `medium` when none was given). An empty answer cut off at its budget anyway
(finish_reason "length") means the budget was too small, not that the model cannot answer:
the Assessor raises the budget (BUDGET_FACTOR, up to its cap) and asks again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from nuggetizer.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_TOKENS_CAP",
    "BudgetExhausted",
    "EXPECTED_REASONING_TOKENS",
    "REASONING_EFFORTS",
    "TOKEN_FIELDS",
    "budget_exhausted",
    "env_choice",
    "expected_reasoning",
    "known_to_reason",
    "raised_budget",
    "shows_reasoning",
    "split_reasoning",
]

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
DEFAULT_MAX_TOKENS_CAP = 32768  # $NUGGETIZER_MAX_TOKENS_CAP, --max-tokens-cap
BUDGET_FACTOR = 2
# reasoning tokens a call is expected to spend, by reasoning effort (an assumption: the dry
# run's, and half the allowance added to each budget)
EXPECTED_REASONING_TOKENS = {"minimal": 64, "low": 512, "medium": 2048, "high": 8192}
ALLOWANCE_FACTOR = 2


def expected_reasoning(given: int | None, effort: str | None) -> int:
    """Reasoning tokens a call of a model known to reason is expected to spend: `given`, else
    $NUGGETIZER_REASONING_TOKENS, else by `effort` (`medium` when None)."""
    if given is None:
        given = env_int("NUGGETIZER_REASONING_TOKENS")
    if given is not None:
        if given < 0:
            raise ConfigError(f"reasoning tokens must not be negative, got {given}")
        return given
    return EXPECTED_REASONING_TOKENS[effort or "medium"]

class BudgetExhausted(Exception):
    """A reasoning model spent the largest token budget allowed (max_tokens_cap) thinking,
    and gave no answer: the item is left unjudged with this reason."""

    def __init__(self, tokens: int, reasoning: str | None) -> None:
        super().__init__(f"token budget exhausted by reasoning at {tokens} tokens")
        self.tokens = tokens
        self.reasoning = reasoning


_THINK = re.compile(r"^\s*<think>(.*?)(?:</think>|$)", re.DOTALL)


def split_reasoning(message: dict[str, Any]) -> tuple[str, str | None]:
    """(answer, thinking or None) of a chat completion's message (see the module's doc)."""
    text = message.get("content") or ""
    parts = [str(v) for name in ("reasoning_content", "reasoning")
             if isinstance(v := message.get(name), str) and v]
    if not isinstance(text, str):
        text = str(text)
    match = _THINK.match(text)
    if match:
        parts.append(match.group(1).strip())
        text = text[match.end():].lstrip()
    return text, "\n".join(parts) if parts else None


def known_to_reason(options: Mapping[str, Any]) -> str | None:
    """Why an assessor whose backend sends `options` (the Assessor's `options`) is known to be
    a reasoning model, in words; None when nothing says so (before any call, a reasoning model
    given no reasoning option is not known yet: `shows_reasoning` tells from its answers)."""
    if options.get("reasoning_effort"):
        return f"a reasoning effort ({options['reasoning_effort']}) is sent to it"
    if options.get("token_field") == "max_completion_tokens":
        return "its server takes only max_completion_tokens, as reasoning models' servers do"
    if options.get("reasoning_allowance"):
        return "reasoning tokens are expected of it (--reasoning-tokens)"
    return None


def shows_reasoning(reasoning: str | None, reasoning_tokens: int,
                    first_tokens: Mapping[str, float] | None = None) -> bool:
    """Whether an answer shows that the model thought first: thinking split off (even an empty
    `<think>` opener), reasoning tokens counted, or `<think>` among its first tokens."""
    return (reasoning is not None or reasoning_tokens > 0
            or any(t.strip().startswith("<think") for t in first_tokens or {}))


def budget_exhausted(text: str, finish_reason: str | None) -> bool:
    """Whether an answer is empty because its token budget ran out (while thinking)."""
    return finish_reason == "length" and not text.strip()


def raised_budget(tokens: int, cap: int) -> int | None:
    """The next budget after `tokens` ran out, at most `cap`; None when `tokens` is the cap."""
    if tokens >= cap:
        return None
    return min(cap, max(tokens + 1, tokens * BUDGET_FACTOR))


def env_choice(value: str | None, variable: str, choices: tuple[str, ...]) -> str | None:
    """`value`, else $`variable`, checked against `choices`; None when neither is given."""
    chosen = value or os.environ.get(variable, "").strip() or None
    if chosen is not None and chosen not in choices:
        where = f"${variable}" if not value else "the option"
        raise ConfigError(f"{where}: unknown value {chosen!r}; use one of {', '.join(choices)}")
    return chosen


def env_cap(value: int | None) -> int:
    """The largest token budget a raise may reach: `value`, else $NUGGETIZER_MAX_TOKENS_CAP,
    else DEFAULT_MAX_TOKENS_CAP."""
    if value is None:
        value = env_int("NUGGETIZER_MAX_TOKENS_CAP")
        value = DEFAULT_MAX_TOKENS_CAP if value is None else value
    if value < 1:
        raise ConfigError(f"the token budget cap must be at least 1, got {value}")
    return value


def env_int(variable: str) -> int | None:
    """A whole number from the environment, None when unset; ConfigError naming it otherwise."""
    text = os.environ.get(variable, "").strip()
    try:
        return int(text) if text else None
    except ValueError:
        raise ConfigError(f"${variable} must be a whole number, got {text!r}") from None
