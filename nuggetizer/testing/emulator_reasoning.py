"""The emulator's reasoning persona (`--persona reasoning`): an OpenAI-style reasoning model.

  * It refuses what OpenAI's reasoning models refuse, with their exact HTTP 400 bodies:
    `max_tokens` (code unsupported_parameter: use max_completion_tokens) and any
    `temperature` other than 1 (code unsupported_value).
  * It thinks before it answers: `--reasoning-tokens N` tokens (deterministic), counted in
    `usage.completion_tokens` and reported in `usage.completion_tokens_details.reasoning_tokens`.
  * When `max_completion_tokens` is smaller than the thinking plus the answer, it answers what
    a reasoning model does: empty content, finish_reason "length" (the budget spent thinking).
  * `--reasoning-format`: how the thinking is shown: `none` (hidden, as OpenAI's API does),
    `reasoning_content` (a field of the message, as vLLM's and SGLang's reasoning parsers
    give it) or `think` (a `<think>...</think>` block before the content, as a Qwen3-style
    model served without a parser writes it; cut off unclosed when the budget runs out).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

PERSONAS = ("plain", "reasoning")
FORMATS = ("none", "reasoning_content", "think")
CHARS_PER_TOKEN = 4  # as the emulator counts every token (characters / 4)
THOUGHT = "The passage and the nuggets are read one by one, each weighed against the answer. "


def rejection(body: dict[str, Any]) -> dict[str, Any] | None:
    """OpenAI's HTTP 400 body for a request a reasoning model refuses, else None."""
    if "max_tokens" in body:
        return {"error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                       "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error", "param": "max_tokens",
            "code": "unsupported_parameter"}}
    if "temperature" in body and body["temperature"] != 1:
        return {"error": {
            "message": f"Unsupported value: 'temperature' does not support "
                       f"{json.dumps(body['temperature'])} with this model. Only the default "
                       "(1) value is supported.",
            "type": "invalid_request_error", "param": "temperature",
            "code": "unsupported_value"}}
    return None


@dataclass
class Thought:
    """A reasoning answer: the message's fields, its finish reason and its usage."""

    message: dict[str, Any]
    finish_reason: str | None
    completion_tokens: int
    reasoning_tokens: int


def thinking_text(tokens: int) -> str:
    """`tokens` tokens of thinking (at most a few KiB shown: the usage counts them all)."""
    length = min(tokens * CHARS_PER_TOKEN, 4096)
    return (THOUGHT * (length // len(THOUGHT) + 1))[:length]


def think(message: dict[str, Any], answer_tokens: int, finish: str | None,
          body: dict[str, Any], tokens: int, fmt: str) -> Thought:
    """The reasoning persona's answer to a request it takes: `message` (what the plain persona
    would say, `answer_tokens` long, a text or its tool calls, with its `finish` reason) after
    `tokens` of thinking shown as `fmt`, within the request's max_completion_tokens."""
    budget = body.get("max_completion_tokens")
    thought = thinking_text(tokens)
    if budget is not None and int(budget) < tokens + answer_tokens:
        spent = int(budget)
        shown = thinking_text(min(tokens, spent))
        cut: dict[str, Any] = {"role": "assistant", "content": ""}
        if fmt == "think":
            cut["content"] = "<think>" + shown
        elif fmt == "reasoning_content":
            cut["reasoning_content"] = shown
        return Thought(cut, "length", spent, min(tokens, spent))
    message = dict(message)  # a tool call keeps its calls: the thinking comes before them
    if fmt == "think":
        message["content"] = f"<think>{thought}</think>\n\n{message.get('content') or ''}"
    elif fmt == "reasoning_content":
        message["reasoning_content"] = thought
    return Thought(message, finish, tokens + answer_tokens, tokens)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The persona's command-line flags (also settable through POST /_control)."""
    parser.add_argument("--persona", choices=PERSONAS, default="plain",
                        help="reasoning: an OpenAI-style reasoning model")
    parser.add_argument("--reasoning-tokens", type=int, default=256,
                        help="reasoning persona: tokens of thinking before each answer")
    parser.add_argument("--reasoning-format", choices=FORMATS, default="none",
                        help="reasoning persona: how the thinking is shown")
