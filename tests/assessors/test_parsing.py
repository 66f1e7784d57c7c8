"""The tolerant parsers: every shape models write, and the failures that must raise."""

from __future__ import annotations

import pytest

from nuggetizer.assessors import ParseFailure as ReExported
from nuggetizer.parsing import (
    ParseFailure,
    labels_schema,
    normalise_label,
    parse_labels,
    parse_list,
    parse_strings,
    strings_schema,
)

ALLOWED = ["support", "partial_support", "not_support"]


@pytest.mark.parametrize(
    "text",
    [
        '["a", "b"]',
        "['a', 'b']",
        '  ["a", "b"]  \n',
        '```json\n["a", "b"]\n```',
        "```\n['a', 'b']\n```",
        '```python\n["a", "b"]```',
        'Sure! Here is the list: ["a", "b"] Hope this helps.',
        'First try [1] then the answer:\n["a", "b"]',
        '{"items": ["a", "b"]}',
        '{"labels": ["a", "b"], "note": "x"}',
        'The result is {"labels": ["a", "b"]}.',
        '```json\n{"items": ["a", "b"]}\n```',
        '["a",\n "b"]',
        "Here's my answer: ['a', 'b']",
    ],
)
def test_parse_list_shapes(text: str) -> None:
    assert parse_list(text) == ["a", "b"]


def test_parse_list_takes_last_list_in_chatter() -> None:
    text = 'Draft: ["x"]. Final answer: ["a", "b"]'
    assert parse_list(text) == ["a", "b"]


def test_parse_list_keeps_nested_lists_whole() -> None:
    assert parse_list('answer: [[1, 2], [3]] done') == [[1, 2], [3]]


def test_parse_list_brackets_inside_strings() -> None:
    assert parse_list('["a [1]", "b]"]') == ["a [1]", "b]"]


def test_parse_list_apostrophes_inside_json_strings() -> None:
    assert parse_list('Here\'s it: ["it\'s fine", "ok"]') == ["it's fine", "ok"]


def test_parse_list_last_fence_wins() -> None:
    text = '```json\n["old"]\n```\nfixed:\n```json\n["new"]\n```'
    assert parse_list(text) == ["new"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("support, not_support", "no list"),
        ('{"a": [1], "b": [2]}', "no list"),
        ('{"a": 1}', "no list"),
        ('["a", "b"', "not closed"),
        ("I cannot answer that.", "no list"),
    ],
)
def test_parse_list_failures(text: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason):
        parse_list(text)


def test_parse_failure_is_the_assessors_class() -> None:
    assert ReExported is ParseFailure


def test_parse_labels_normalises() -> None:
    text = '["Support", " partial support", "NOT-SUPPORT", "\'support\'"]'
    assert parse_labels(text, ALLOWED, 4) == [
        "support",
        "partial_support",
        "not_support",
        "support",
    ]


def test_parse_labels_bare_words() -> None:
    assert parse_labels("[support, not_support]", ALLOWED, 2) == ["support", "not_support"]


def test_parse_labels_from_wrapped_object() -> None:
    text = '{"items": ["support", "not_support"]}'
    assert parse_labels(text, ALLOWED, 2) == ["support", "not_support"]


def test_parse_labels_numeric_menu() -> None:
    allowed = [str(i) for i in range(6)]
    assert parse_labels("[0, 5, '3']", allowed, 3) == ["0", "5", "3"]


def test_parse_labels_keeps_menu_spelling() -> None:
    assert parse_labels('["YES", "neutral"]', ["Yes", "No", "Neutral"], 2) == ["Yes", "Neutral"]


@pytest.mark.parametrize("got", [1, 2, 4])
def test_parse_labels_wrong_count(got: int) -> None:
    text = str(["support"] * got)
    with pytest.raises(ParseFailure, match=f"expected 3 labels from .*, got {got}"):
        parse_labels(text, ALLOWED, 3)


def test_parse_labels_off_menu() -> None:
    with pytest.raises(ParseFailure, match="label 'maybe' is not one of support"):
        parse_labels('["support", "maybe"]', ALLOWED, 2)


def test_parse_labels_rejects_non_strings() -> None:
    with pytest.raises(ParseFailure, match="is not one of"):
        parse_labels('["support", {"x": 1}]', ALLOWED, 2)
    with pytest.raises(ParseFailure, match="is not one of"):
        parse_labels('["support", true]', ALLOWED, 2)


def test_parse_labels_no_list() -> None:
    with pytest.raises(ParseFailure):
        parse_labels("support and not_support", ALLOWED, 2)


def test_normalise_label() -> None:
    assert normalise_label("  Partial - Support ") == "partial_support"
    assert normalise_label("`not_support`") == "not_support"


def test_parse_strings() -> None:
    text = '```json\n["  Paris is the capital. ", "", "It has the Eiffel Tower"]\n```'
    assert parse_strings(text, 5) == ["Paris is the capital.", "It has the Eiffel Tower"]


def test_parse_strings_too_many() -> None:
    with pytest.raises(ParseFailure, match="at most 2 items, got 3"):
        parse_strings('["a", "b", "c"]', 2)
    assert parse_strings('["a", "b", "c"]', None) == ["a", "b", "c"]


def test_parse_strings_rejects_non_strings() -> None:
    with pytest.raises(ParseFailure, match="not a string"):
        parse_strings('["a", 3]', None)


def test_schemas() -> None:
    assert labels_schema(ALLOWED, 4) == {
        "type": "array",
        "items": {"type": "string", "enum": ALLOWED},
        "minItems": 4,
        "maxItems": 4,
    }
    assert strings_schema(3) == {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "maxItems": 3,
    }
    assert strings_schema(None, min_items=1)["minItems"] == 1
    assert "maxItems" not in strings_schema(None)


def test_schemas_become_llama_grammars() -> None:
    grammar_mod = pytest.importorskip("llama_cpp.llama_grammar")
    import json

    for schema in (labels_schema(ALLOWED, 10), strings_schema(20), strings_schema(None)):
        grammar = grammar_mod.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        assert "root ::=" in grammar._grammar


def test_parse_list_truncated_document_is_not_mined_for_lists() -> None:
    text = '[ "]\n[ ]\n[ ]\n[ ]\n[ "a"]\n'
    with pytest.raises(ParseFailure, match="not closed"):
        parse_list(text)


def test_parse_strings_min_items() -> None:
    with pytest.raises(ParseFailure, match="at least 1 non-empty items, got 0"):
        parse_strings('["", " "]', 3, min_items=1)
    assert parse_strings("[]", 3) == []
