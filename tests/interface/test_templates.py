"""Every prompt template shipped in the installed package renders with StrictUndefined, keeps
the published wording, and refuses to render when a variable is missing."""

from __future__ import annotations

from importlib import resources

import pytest

from nuggetizer.errors import ConfigError
from nuggetizer.interface import method_class, method_names
from nuggetizer.relevance import PROMPT as RELEVANCE_PROMPT
from nuggetizer.relevance import SCALES
from nuggetizer.templates import _ENV, available_prompts, load_prompt

# Variables each template is rendered with by its method.
VARIABLES: dict[str, dict[str, object]] = {
    "nuggets_create": {"query": "q", "segments": ["s1", "s2"], "nuggets": ["n"],
                       "max_nuggets": 30},
    "nuggets_importance": {"query": "q", "nuggets": ["a", "b"]},
    "nuggets_assign": {"query": "q", "answer": "a", "nuggets": ["a", "b"]},
    "nuggets_assign_binary": {"query": "THE QUERY", "answer": "THE ANSWER", "nuggets": ["a"]},
    "nuggets_agentic_create": {"query": "THE QUERY", "nuggets": ["a"], "max_nuggets": 30},
    "nuggets_subnarrative": {"query": "THE QUERY", "sub_narratives": ["S1", "S2"],
                             "nuggets": ["a", "b"]},
    "crux_questions": {"n": 15, "summary": "THE SUMMARY"},
    "crux_rating": {"question": "THE QUESTION", "context": "THE CONTEXT"},
    "kpr_extract": {"query": "THE QUERY", "text": "THE TEXT", "demonstration": True},
    "kpr_dedup": {"query": "THE QUERY", "points": ["first", "second"]},
    "kpr_entail": {"answer": "THE ANSWER", "key_point": "THE POINT"},
    "udcg_no_response": {"passage": "THE PASSAGE", "question": "THE QUESTION"},
    "udcg_relevance": {"question": "THE QUESTION", "passage": "P", "answers": ["A"]},
    "umbrela_grade": {"query": "THE QUERY", "passage": "THE PASSAGE"},
    "umbrela_subnarrative": {"narrative": "THE NARRATIVE", "sub_narratives": '["A", "B"]',
                             "passage": "THE PASSAGE"},
    "support_judge": {"sentence": "THE SENTENCE", "passage": "THE PASSAGE"},
    "rubrics_author": {"query": "THE QUERY", "nuggets": [{"text": "THE NUGGET",
                                                          "importance": "vital"}]},
    "rubrics_grade": {"document": "THE DOCUMENT", "criterion": "THE CRITERION",
                      "axis": "THE AXIS", "weight": -3.0, "ternary": False},
    "battle_judge": {"narrative": "THE NARRATIVE", "rubric": "THE RUBRIC",
                     "answer_a": "ANSWER A [0]", "answer_b": "ANSWER B [1]",
                     "documents": [{"label": "doc1", "text": "THE DOCUMENT"}]},
}
# A sentence of each published prompt that the default template must keep.
PUBLISHED = {
    "crux_questions": "Write 15 diverse questions that can reveal the information contained "
                      "in the given document.",
    "crux_rating": "- 3: The context is partially relevant and complete, with noticeable gaps "
                   "or inaccuracies.",
    "kpr_extract": "IMPORTANT: Each span must be a single consecutive verbatim span from the "
                   "corresponding passages. Copy verbatim the spans, don't modify any word!",
    "kpr_dedup": "Based on the points extracted from a piece of text, identify and remove any "
                 "duplicate points to streamline the list.",
    "kpr_entail": "Provide your answer as [yes], [no], or [neutral].",
    "umbrela_grade": "Provide each score in the format of: ##final score: score without "
                     "providing any reasoning.",
    "udcg_no_response": "If none of the documents contain the answer, please respond with "
                        "NO-RESPONSE. Do not try to respond based on your own knowledge.",
    "support_judge": "• Partial Support: Some parts of the information are supported in the "
                     "citation, but other parts are missing.",
}


def test_every_shipped_template_is_covered() -> None:
    shipped = {p.name for p in resources.files("nuggetizer.prompts").iterdir()
               if p.name.endswith(".jinja")}
    assert {n.split(".")[0] for n in shipped} == set(VARIABLES) == set(available_prompts())
    used = {p for name in method_names() for p in method_class(name).prompts}
    assert used | {RELEVANCE_PROMPT, SCALES["0-4"].prompt} == set(VARIABLES)  # both scales


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_renders_with_strict_undefined(name: str) -> None:
    prompt = load_prompt(name)
    assert prompt.user.environment is _ENV and _ENV.undefined.__name__ == "StrictUndefined"
    messages = prompt.render(**VARIABLES[name])
    text = "\n".join(content for _, content in messages)
    assert messages[-1][0] == "user" and "{{" not in text and "{%" not in text
    for value in VARIABLES[name].values():
        if isinstance(value, str) and value.isupper():
            assert value in text
    if name in PUBLISHED:
        assert PUBLISHED[name] in text
    missing = dict(VARIABLES[name])
    missing.popitem()
    with pytest.raises(ConfigError, match=name):
        prompt.render(**missing)


def test_prompt_shapes() -> None:
    questions = load_prompt("crux_questions").render(n=3, summary="S")[-1][1]
    assert questions.endswith("Questions:\n<q>")
    plain = load_prompt("kpr_extract").render(query="q", text="t", demonstration=False)[-1][1]
    shot = load_prompt("kpr_extract").render(query="q", text="t", demonstration=True)[-1][1]
    assert "Springfield" in shot and "Springfield" not in plain
    assert shot.endswith("[Text]: t\n\n[Key Point]")
    dedup = load_prompt("kpr_dedup").render(query="q", points=["a", "b"])[-1][1]
    assert "Point 1: a\nPoint 2: b\n" in dedup
