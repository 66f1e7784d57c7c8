"""Tolerant parsers for LLM output, and the JSON schemas that ask for that output.

The parsers accept what models actually write: a JSON array, a Python list literal, either one
inside ``` fences or surrounded by chatter (the last complete list wins), or an object whose
only list-valued key holds the list (`{"items": [...]}`, the wrapper used for OpenAI's
json_schema mode). Anything else raises ParseFailure with a short reason, which the Assessor
feeds back to the model when it re-asks. No parser ever invents a value.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

__all__ = [
    "ParseFailure",
    "labels_schema",
    "normalise_label",
    "parse_labels",
    "parse_list",
    "parse_strings",
    "strings_schema",
]


class ParseFailure(Exception):
    """Output that does not have the required shape; str(e) says what was wrong."""


_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_BARE_ITEM = re.compile(r"^[\w .\-/]+$")
_QUOTES = "\"'`\u2018\u2019\u201c\u201d"
_SEPARATORS = re.compile(r"[\s\-_]+")


def _as_list(value: Any) -> list[Any] | None:
    """`value` if a list; the only list-valued entry of a dict; else None."""
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list | tuple)]
        if len(lists) == 1:
            return list(lists[0])
    return None


def _literal(text: str) -> Any:
    """JSON first, then a Python literal; raises ValueError when neither parses."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _matching_close(text: str, start: int) -> int | None:
    """Index of the bracket closing text[start] ('[' or '{'), skipping quoted strings."""
    pairs = {"[": "]", "{": "}"}
    stack: list[str] = []
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i
        i += 1
    return None


def _spans(text: str) -> list[tuple[int, int, list[Any]]]:
    """Every bracketed span of `text` that parses to a list: (start, end, list).

    Lists inside an object that parsed but is ambiguous (several list-valued keys) are not
    offered: picking one of them would be a guess.
    """
    found: list[tuple[int, int, list[Any]]] = []
    ambiguous: list[tuple[int, int]] = []
    for match in re.finditer(r"[\[{]", text):
        start = match.start()
        value: Any = None
        end = -1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            close = _matching_close(text, start)
            if close is not None:
                try:
                    value, end = _literal(text[start : close + 1]), close + 1
                except ValueError:
                    value = None
        items = _as_list(value) if end > start else None
        if items is not None:
            found.append((start, end, items))
        elif isinstance(value, dict) and end > start:
            ambiguous.append((start, end))
    return [f for f in found if not any(a <= f[0] and f[1] <= b for a, b in ambiguous)]


def _last_outermost(spans: list[tuple[int, int, list[Any]]]) -> list[Any] | None:
    outer = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in spans)]
    return outer[-1][2] if outer else None


def parse_list(text: str) -> list[Any]:
    """The list the model wrote in `text` (see the module docstring); raises ParseFailure."""
    if text is None or not text.strip():
        raise ParseFailure("the answer was empty; expected a list")
    stripped = text.strip()
    try:
        whole = _as_list(_literal(stripped))
    except ValueError:
        whole = None
    if whole is not None:
        return whole
    for block in reversed(_FENCE.findall(text)):
        try:
            fenced = _as_list(_literal(block.strip()))
        except ValueError:
            fenced = _last_outermost(_spans(block))
        if fenced is not None:
            return fenced
    start = len(text) - len(text.lstrip())
    if stripped[0] in "[{" and _matching_close(text, start) is None:
        # The answer is a JSON document that never closes (cut off at max_tokens): any list
        # found further on would come from inside its unfinished strings.
        raise ParseFailure("the list was not closed (the answer may have been cut off)")
    found = _last_outermost(_spans(text))
    if found is not None:
        return found
    if "[" in text and "]" not in text[text.rfind("[") :]:
        raise ParseFailure("the list was not closed (the answer may have been cut off)")
    raise ParseFailure("no list found; expected a JSON array such as [\"a\", \"b\"]")


def _bare_list(text: str) -> list[str] | None:
    """Items of the last `[a, b, c]` written without quotes, or None."""
    for inner in reversed(re.findall(r"\[([^\[\]]*)\]", text)):
        items = [part.strip().strip(_QUOTES).strip() for part in inner.split(",")]
        if items and all(item and _BARE_ITEM.match(item) for item in items):
            return items
    return None


@lru_cache(maxsize=4096)
def normalise_label(label: str) -> str:
    """Case-, quote- and separator-insensitive form: ' Partial-Support ' -> 'partial_support'."""
    cleaned = label.strip().strip(_QUOTES).strip().lower()
    return _SEPARATORS.sub("_", cleaned)


def json_label(text: str, field: str, to_label: Callable[[str], str | None],
               word: re.Pattern[str], menu: str) -> str:
    """One label from an answer: `{field: value}`, else the first match of `word`, each mapped by
    `to_label`; ParseFailure naming the `menu` otherwise."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        value = value.get(field)
    if isinstance(value, str) and (label := to_label(value)):
        return label
    match = word.search(text or "")
    if match and (label := to_label(match.group(1))):
        return label
    raise ParseFailure(f"no label found: answer {menu}")


def parse_labels(text: str, allowed: Sequence[str], n: int) -> list[str]:
    """Exactly `n` labels, each mapped onto its spelling in `allowed`; raises ParseFailure."""
    menu = {normalise_label(str(a)): str(a) for a in allowed}
    menu_text = ", ".join(str(a) for a in allowed)
    try:
        items = parse_list(text)
    except ParseFailure:
        bare = _bare_list(text or "")
        if bare is None:
            raise
        items = list(bare)
    if len(items) != n:
        raise ParseFailure(f"expected {n} labels from [{menu_text}], got {len(items)}")
    labels: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise ParseFailure(f"label {item!r} is not one of {menu_text}")
        key = normalise_label(str(item))
        if key not in menu:
            raise ParseFailure(f"label {str(item)!r} is not one of {menu_text}")
        labels.append(menu[key])
    return labels


def parse_strings(text: str, max_items: int | None = None, *, min_items: int = 0) -> list[str]:
    """Non-empty stripped strings (e.g. nuggets); outside [min_items, max_items]: ParseFailure."""
    items = parse_list(text)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ParseFailure(f"item {item!r} is not a string; expected a list of strings")
        item = item.strip()
        if item:
            out.append(item)
    if max_items is not None and len(out) > max_items:
        raise ParseFailure(f"expected at most {max_items} items, got {len(out)}")
    if len(out) < min_items:
        raise ParseFailure(f"expected at least {min_items} non-empty items, got {len(out)}")
    return out


def labels_schema(allowed: Sequence[str], n: int) -> dict[str, Any]:
    """JSON schema of an array of exactly `n` labels taken from `allowed`."""
    return {
        "type": "array",
        "items": {"type": "string", "enum": [str(a) for a in allowed]},
        "minItems": n,
        "maxItems": n,
    }


def label_schema(field: str, allowed: Sequence[str]) -> dict[str, Any]:
    """JSON schema of an object with one label, `{field: one of allowed}`."""
    return {
        "type": "object",
        "properties": {field: {"type": "string", "enum": [str(a) for a in allowed]}},
        "required": [field],
        "additionalProperties": False,
    }


def strings_schema(
    max_items: int | None = None, *, min_items: int = 0, max_length: int | None = None
) -> dict[str, Any]:
    """JSON schema of an array of non-empty strings (each at most `max_length` characters)."""
    item: dict[str, Any] = {"type": "string", "minLength": 1}
    if max_length is not None:
        item["maxLength"] = max_length
    schema: dict[str, Any] = {"type": "array", "items": item}
    if min_items:
        schema["minItems"] = min_items
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema
