"""The package's `mock` backend: no model, and answers every method's parser accepts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from nuggetizer.assessors import make_assessor, make_backend
from nuggetizer.assessors.base import Request
from nuggetizer.errors import ConfigError
from nuggetizer.methods import (
    ENTAIL_SCHEMA,
    EXTRACT_SCHEMA_ITEM,
    RATING_SCHEMA,
    RELEVANCE_SCHEMA,
    parse_entailment,
    parse_points,
    parse_questions,
    parse_rating,
    parse_relevance,
    questions_schema,
)
from nuggetizer.methods.rubrics import SCHEMA as RUBRICS_SCHEMA
from nuggetizer.methods.rubrics import parse_verdict
from nuggetizer.methods.support import SCHEMA as SUPPORT_SCHEMA
from nuggetizer.methods.support import parse_support
from nuggetizer.parsing import labels_schema, parse_labels, parse_strings, strings_schema
from nuggetizer.relevance import GRADE_SCHEMA, parse_grade

PROMPT = "Query: who built the Eiffel Tower?\nPassage: Gustave Eiffel's company built it in 1889."
CASES: dict[str, tuple[dict[str, Any], Callable[[str], Any]]] = {
    "importance": (labels_schema(["vital", "okay"], 7),
                   lambda t: parse_labels(t, ["vital", "okay"], 7)),
    "create": (strings_schema(5, min_items=1, max_length=80),
               lambda t: parse_strings(t, 5, min_items=1)),
    "grade": (GRADE_SCHEMA, parse_grade),
    "rating": (RATING_SCHEMA, parse_rating),
    "questions": (questions_schema(4), lambda t: parse_questions(t, 4)),
    "points": ({"type": "array", "items": EXTRACT_SCHEMA_ITEM, "minItems": 1, "maxItems": 3},
               lambda t: parse_points(t, 3)),
    "entailment": (ENTAIL_SCHEMA, parse_entailment),
    "support": (SUPPORT_SCHEMA, parse_support),
    "udcg": (RELEVANCE_SCHEMA, parse_relevance),
    "rubrics": (RUBRICS_SCHEMA, parse_verdict),
}


def answer(schema: dict[str, Any] | None, prompt: str = PROMPT, top_logprobs: int = 0) -> Any:
    backend = make_backend("mock")
    request = Request(messages=(("user", prompt),), schema=schema, top_logprobs=top_logprobs)
    return asyncio.run(backend.complete(request))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_method_parses_the_mock_answer(case: str) -> None:
    schema, parse = CASES[case]
    completion = answer(schema)
    assert parse(completion.text) is not None
    assert completion.text == answer(schema).text  # deterministic
    assert completion.model == "mock" and completion.finish_reason == "stop"


def test_labels_vary_with_the_prompt_and_keep_the_length() -> None:
    schema = labels_schema(["support", "partial_support", "not_support"], 12)
    texts = {answer(schema, f"{PROMPT} {i}").text for i in range(6)}
    assert len(texts) > 1
    assert all(len(json.loads(t)) == 12 for t in texts)


def test_logprobs_are_a_distribution_over_yes_and_no() -> None:
    logprobs = answer(None, top_logprobs=5).first_token_logprobs
    assert logprobs is not None and set(logprobs) == {"Yes", "No"}
    assert sum(2.718281828459045 ** v for v in logprobs.values()) == pytest.approx(1.0)


def test_the_spec_takes_an_optional_name() -> None:
    assert make_backend("mock").spec == "mock"
    assert make_backend("mock:judge-a").spec == "mock:judge-a"
    assessor = make_assessor("mock:judge-a", cache=None)
    assert assessor.model == "judge-a"
    with pytest.raises(ConfigError, match=r"mock\[:<name>\]"):
        make_backend("nosuch:thing")
