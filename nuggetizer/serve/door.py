"""The one check of every route's body, before any route reads it: the bytes as JSON whatever
content type the client declared (`curl -d` sends form-encoded), an object at the top, and
every string and key in it, however deep, text a file and a prompt can hold: no NUL, no lone
surrogate; every id (run_id, qid, topic_id, docid, ...) short and without control
characters. Each refusal is a 422 naming the field (`answers[3].run_id`) and what it must be.

Ids never become file names as given (formats/writing.run_file_name escapes them), so the
limits here are about clear answers, not the disk's safety."""

from __future__ import annotations

import json
from collections import deque
from typing import Annotated, Any

from fastapi import Depends, Request

from nuggetizer.serve.errors import ApiError

MAX_ID = 200  # characters of an id
MAX_DEPTH = 64  # nesting of arrays and objects
ID_FIELDS = frozenset({"run_id", "qid", "topic_id", "docid", "doc_id", "segment_id", "id",
                       "narrative_id", "resume"})


def _refuse(message: str) -> ApiError:
    return ApiError(422, "invalid_request", message)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object; a 422 saying what is wrong with it otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(f"the body is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise _refuse("the body is empty: send a JSON object")
    try:
        value = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise _refuse(f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                      ) from None
    except ValueError as exc:
        raise _refuse(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise _refuse(f"the body nests deeper than {MAX_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise _refuse(f"the body must be a JSON object, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(
        type(value), "a number")


def _text(value: str, where: str) -> None:
    """422 when `value` cannot be text: a NUL, or a lone surrogate (no UTF-8 holds it)."""
    if "\x00" in value:
        raise _refuse(f"{where}: holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise _refuse(f"{where}: holds a lone surrogate (U+{code:04X}), which is not text: "
                      "send each character whole") from None


def _id(value: Any, where: str) -> None:
    """422 for an id that is too long or holds a control character."""
    if isinstance(value, str):
        _text(value, where)
        if len(value) > MAX_ID:
            raise _refuse(f"{where}: {len(value)} characters; an id has at most {MAX_ID}")
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise _refuse(f"{where}: holds a control character (a tab, a line break, ...)")


def check(payload: dict[str, Any]) -> None:
    """Every string and key of `payload` as text; every id field within limits (see the
    module's doc); a 422 naming the first field that is not."""
    stack: deque[tuple[Any, str, int]] = deque([(payload, "", 0)])
    while stack:
        value, where, depth = stack.popleft()
        if depth > MAX_DEPTH:
            raise _refuse(f"{where or 'the body'}: nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            _text(value, where or "the body")
        elif isinstance(value, dict):
            for key, item in value.items():
                field = f"{where}.{key}" if where else str(key)
                _text(key, f"{where or 'the body'}: a key")
                if key in ID_FIELDS:
                    _id(item, field)
                stack.append((item, field, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{n}]", depth + 1) for n, item in enumerate(value))


async def _payload(request: Request) -> dict[str, Any]:
    payload = parse(await request.body())
    check(payload)
    return payload


# A route's JSON object body, through the door above (anything else: a 422 naming the field).
Payload = Annotated[dict[str, Any], Depends(_payload)]
