"""The emulator's answer to RAGDoll's rubric-author prompt (methods/rubrics/authoring.py): one
criterion per nugget (vital ones explicit or implicit, a hash of seed and prompt; okay ones
implicit), the first vital nugget left without one (so the mapping's addition shows), and two
topic-level criteria (synthesis, communication)."""

from __future__ import annotations

import hashlib
import json
import re

AUTHOR = "Author a rubric: a list of criteria"
NUGGET_LINE = re.compile(r"^- (n\d+) -- (.*) -- (\w+)$", re.MULTILINE)


def _unit(*parts: object) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def authored(seed: int, prompt: str) -> str:
    """The JSON array of criteria (see the module's doc)."""
    criteria = []
    skipped = False
    for nugget_id, text, importance in NUGGET_LINE.findall(prompt):
        if importance == "vital" and not skipped:
            skipped = True
            continue
        kind = "implicit"
        if importance == "vital":
            kind = ("explicit", "implicit")[int(_unit(seed, nugget_id, prompt) * 2)]
        criteria.append({"text": f"The answer states that {text}", "type": kind,
                         "source_nugget": nugget_id})
    criteria += [{"text": "The answer connects the facts into one account", "type": "synthesis",
                  "source_nugget": None},
                 {"text": "The answer is clearly organized", "type": "communication",
                  "source_nugget": None}]
    return json.dumps(criteria)
