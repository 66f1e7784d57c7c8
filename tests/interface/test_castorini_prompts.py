"""The nuggets prompts carry castorini's bytes by default (its nuggetizer is the TREC 2024 RAG
Track's reference implementation): the same LLM sees what the track's saw. The expected
messages were made with castorini's own code (fixtures/make_castorini_prompts.py; the commit is
named in the fixture) on real inputs; `render = "json"` keeps the earlier JSON lists."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedBackend

from nuggetizer.assessors import Assessor
from nuggetizer.assessors.base import Request
from nuggetizer.methods.nuggets import NuggetConfig, assign_nuggets, label_importance
from nuggetizer.templates import load_prompt
from nuggetizer.types import Answer, Nugget, NuggetList, Sentence

FIXTURE = json.loads((Path(__file__).parent.parent / "fixtures" / "castorini_prompts.json")
                     .read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = FIXTURE["cases"]


def theirs(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in case["messages"]]


def sent(config: NuggetConfig, step: str, cases: list[dict[str, Any]]) -> list[Request]:
    """The requests our code sends for the fixture's inputs of `step`, through the method's
    own functions (labels answered by a scripted model)."""
    def labels(request: Request) -> str:
        n = request.schema["maxItems"] if request.schema else 0
        return json.dumps(["okay" if step == "importance" else "support"] * n)

    backend = ScriptedBackend(labels, max_concurrency=1)
    assessor = Assessor(backend, None)
    first = cases[0]
    nuggets = [n for case in cases for n in case["nuggets"]]
    if step == "importance":
        asyncio.run(label_importance(assessor, first["query"],
                                     [Nugget(text=t) for t in nuggets], config))
    else:
        key = NuggetList(qid="q", query=first["query"],
                         nuggets=[Nugget(text=t, importance="vital") for t in nuggets])
        answer = Answer(run_id="r", topic_id="q",
                        sentences=[Sentence(text=t) for t in first["sentences"]])
        asyncio.run(assign_nuggets(assessor, key, answer, 0, config))
    return backend.requests


def test_the_fixture_names_castorini_and_holds_every_step() -> None:
    assert FIXTURE["castorini"]["repository"] == "github.com/castorini/nuggetizer"
    assert len(FIXTURE["castorini"]["commit"]) == 40
    assert [c["step"] for c in CASES] == ["create", "create", "importance", "assign", "assign"]
    # what makes the renderings differ is in the inputs: a string Python quotes with ",
    # sentences with surrounding space
    assert any("'" in n for c in CASES for n in c["nuggets"])
    assert any(s != s.strip() for s in CASES[-1]["sentences"])


@pytest.mark.parametrize("index", [0, 1])
def test_creation_prompt_is_castorinis(index: int) -> None:
    case = CASES[index]
    config = NuggetConfig()
    ours = load_prompt("nuggets_create").render(
        query=case["query"], segments=[config.untrusted(s) for s in case["segments"]],
        nuggets=case["nuggets"], max_nuggets=case["max_nuggets"], render=config.render)
    assert list(ours) == theirs(case)


@pytest.mark.parametrize("step", ["importance", "assign"])
def test_labelling_prompts_are_castorinis(step: str) -> None:
    cases = [c for c in CASES if c["step"] == step]
    requests = sent(NuggetConfig(), step, cases)
    assert [list(r.messages) for r in requests] == [theirs(c) for c in cases]


def test_json_rendering_keeps_the_earlier_prompts() -> None:
    cases = [c for c in CASES if c["step"] == "assign"]
    (request, _) = sent(NuggetConfig(render="json"), "assign", cases)
    user = request.messages[-1][1]
    batch = cases[0]["nuggets"]
    assert f"Nugget List: {json.dumps(batch, ensure_ascii=False)}\n\nOnly return" in user
    joined = " ".join(s.strip() for s in cases[0]["sentences"])
    assert f"\nPassage: {joined}\n" in user
    assert request.messages != tuple(theirs(cases[0]))
    create = load_prompt("nuggets_create").render(
        query="q", segments=["s"], nuggets=["it's"], max_nuggets=3, render="json")[-1][1]
    assert '(this is an iterative process). Return only' in create
    assert 'Initial Nugget List: ["it\'s"]' in create
