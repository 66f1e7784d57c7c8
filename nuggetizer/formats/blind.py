"""Blind review: sheets whose answers do not say which run wrote them.

Each run id is replaced by a pseudonym, `run-` and the first 12 hex digits of the HMAC-SHA256
of the run id under a secret; the answers of a topic are shuffled in an order that is also an
HMAC of the secret (so the same secret gives the same pseudonyms and order every time, and
without it neither says anything about the runs). The secret and the pseudonym -> run id table
go to a mapping file kept apart from the sheets (`import-sheets --mapping FILE` restores the
run ids); an existing mapping file given to `export-sheets --blind --mapping` is reused, so a
later export of the same runs keeps the pseudonyms."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.writing import write_text_atomic

PREFIX = "run-"


def _mac(secret: str, text: str) -> str:
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def pseudonym(secret: str, run_id: str) -> str:
    return PREFIX + _mac(secret, "run\x1f" + run_id)[:12]


def shuffle_key(secret: str, qid: str, name: str) -> str:
    """Where an item `name` (a run id, or a pair of them) goes in its topic's shuffled order:
    an HMAC under the secret."""
    return _mac(secret, f"order\x1f{qid}\x1f{name}")


def _get(item: Any, name: str) -> str:
    return str(item[name] if isinstance(item, dict) else getattr(item, name))


def _with_run(item: Any, run_id: str) -> Any:
    """A copy of a judgment (a record dict, a pydantic model such as Assessment, or a
    dataclass) with `run_id`."""
    if isinstance(item, dict):
        return {**item, "run_id": run_id}
    if hasattr(item, "model_copy"):
        return item.model_copy(update={"run_id": run_id})
    return dataclasses.replace(item, run_id=run_id)


def read_mapping(path: Path) -> dict[str, Any]:
    """A mapping file: {"secret": ..., "runs": {pseudonym: run_id}}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data.get("secret"), str) or not isinstance(data.get("runs"), dict):
            raise ValueError("expected an object with `secret` and `runs`")
    except (ValueError, AttributeError) as exc:
        raise InputError(path, None, f"not a blind-review mapping file: {exc}") from None
    return data


def blind(items: Sequence[Any], mapping: Path, secret: str | None = None) -> list[Any]:
    """The judgment records with pseudonyms for run ids, each topic's answers shuffled (topics
    in their first-seen order); writes (or extends) the mapping file."""
    known: dict[str, str] = {}
    if mapping.exists():
        data = read_mapping(mapping)
        secret, known = data["secret"], dict(data["runs"])
    secret = secret or secrets.token_hex(16)
    topics: dict[str, int] = {}
    blinded = []
    for item in items:
        run_id, qid = _get(item, "run_id"), _get(item, "qid")
        alias = pseudonym(secret, run_id)
        if known.get(alias, run_id) != run_id:
            raise InputError(mapping, None, f"pseudonym {alias} already names another run")
        known[alias] = run_id
        topics.setdefault(qid, len(topics))
        blinded.append(_with_run(item, alias))
    blinded.sort(key=lambda r: (topics[_get(r, "qid")], shuffle_key(
        secret, _get(r, "qid"), _get(r, "run_id"))))
    write_text_atomic(mapping, json.dumps(
        {"secret": secret, "runs": dict(sorted(known.items())),
         "note": "keep apart from the sheets: it names the runs behind the pseudonyms"},
        indent=2) + "\n")
    return blinded


def unblind(by_run: dict[str, list[Any]], mapping: Path) -> dict[str, list[Any]]:
    """Judgment records read from blind sheets, with their run ids restored."""
    runs = read_mapping(mapping)["runs"]
    restored: dict[str, list[dict[str, Any]]] = {}
    for alias, records in by_run.items():
        if alias not in runs:
            raise InputError(mapping, None, f"the sheets name {alias!r}, a pseudonym this "
                             "mapping does not know (another export's mapping?)")
        run_id = runs[alias]
        restored.setdefault(run_id, []).extend(_with_run(r, run_id) for r in records)
    return restored
