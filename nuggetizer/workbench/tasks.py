"""The five tasks of the workbench: what each page shows and asks, and how an assessor's
answers fill the method's judgment record for the export.

An item is (`shown`, `record`): `shown` is all the page may show (text only; a blind battle's
names no run): the topic (its narrative and sub-narratives, as NIST's assessors see them), the
answer (Markdown, rendered safely by the page) and a list of questions each with its key, its
labels and the texts it is about; `record` is the method's blank judgment (or key) record,
kept on the server. An assessor's value is {question key: label} (and `span:<key>`: the
supporting span of an assignment); a post-edit's is {"nuggets": [...]}, the whole edited list,
each nugget with the `id` it had in the key (new ones a new id) and `set` where a person chose
its importance.

A battle is two items, one per presentation order, each asking one question (`o`: which answer
is better, the one shown first being "A"); which run goes first in the first order is drawn per
battle (seeded), and the export joins the two orders into the battle's record.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from nuggetizer.formats.narratives import clean
from nuggetizer.labels import ASSIGNMENT_LABELS, IMPORTANCE_LABELS, SUPPORT_LABELS, UNJUDGED
from nuggetizer.measures.rubrics import SCALES

TASKS = ("postedit", "assign", "support", "battle", "rubric")
TITLES = {"postedit": "Nugget post-editing", "assign": "Nugget assignment",
          "support": "Citation support", "battle": "Blind battle", "rubric": "Rubric grading"}
BATTLE_LABELS = ("A", "B", "tie")  # A: the answer shown first wins
# ordinal values of each task's labels (agreement: kappa and alpha on them)
ORDINAL: dict[str, dict[str, int]] = {
    "assign": {"not_support": 0, "partial_support": 1, "support": 2},
    "support": {"no_support": 0, "partial_support": 1, "full_support": 2},
    "rubric": {"not_satisfied": 0, "partially_satisfied": 1, "satisfied": 2},
    "battle": {"B": 0, "tie": 1, "A": 2},
    "postedit": {"okay": 0, "vital": 1},
}
SOURCES = ("original", "post-edit")
MAX_TEXT = 4000  # characters of one nugget's text
MAX_NUGGETS = 500


def topic_of(qid: str, narrative: str, subs: Sequence[str]) -> dict[str, Any]:
    """The topic as every page shows it."""
    return {"qid": qid, "narrative": narrative, "sub_narratives": list(subs)}


def question(key: str, labels: tuple[str, ...], text: str, *, context: str = "",
             span: bool = False, panes: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """One question of a page."""
    return {"key": key, "labels": list(labels), "text": text, "context": context,
            "span": span, "panes": [list(p) for p in panes or []]}


def postedit_item(key: Mapping[str, Any], topic: dict[str, Any]) -> tuple[dict, dict]:
    """A topic's nuggets to post-edit: (shown, record). Each nugget keeps an id (its place in
    the key) through edits, so that two assessors' lists compare nugget by nugget; a nugget's
    sub-narrative is one of the topic's (the quotes the 2026 files wrap them in dropped), and
    one the topic does not list is added to its choices."""
    subs = list(topic["sub_narratives"])
    nuggets = []
    for k, n in enumerate(key["nuggets"]):
        mapped = clean(n.get("mapped_sub_narrative") or "")
        if mapped and mapped not in subs:
            subs.append(mapped)
        nuggets.append({"id": f"n{k}", "text": n["text"],
                        "importance": n.get("importance", UNJUDGED),
                        "mapped_sub_narrative": mapped, "source": n.get("source") or "original"})
    shown = {"topic": {**topic, "sub_narratives": subs}, "nuggets": nuggets,
             "importance": list(IMPORTANCE_LABELS), "questions": []}
    return shown, {"qid": key["qid"], "query": key.get("query") or topic["narrative"],
                   "nuggets": nuggets}


def _nugget_context(n: Mapping[str, Any]) -> str:
    mapped = clean(n.get("mapped_sub_narrative") or "")
    return " · ".join(p for p in (n.get("importance", ""), mapped) if p)


def assign_item(record: Mapping[str, Any], topic: dict[str, Any], answer: str
                ) -> dict[str, Any]:
    """An answer and its topic's nuggets, each to assign with its supporting span."""
    return {"topic": topic, "answer": answer, "questions": [
        question(f"n{k}", ASSIGNMENT_LABELS, n["text"], context=_nugget_context(n), span=True)
        for k, n in enumerate(record["nuggets"])]}


def support_item(record: Mapping[str, Any], topic: dict[str, Any]) -> dict[str, Any]:
    """An answer's (sentence, cited passage) pairs; a pair that cannot be judged is shown
    with why and not asked."""
    questions, notes = [], []
    for s, sentence in enumerate(record["sentences"]):
        for p, pair in enumerate(sentence["pairs"]):
            if pair.get("reason"):
                notes.append(f"{sentence['text']} [{pair.get('citation')}]: {pair['reason']}")
                continue
            questions.append(question(f"p{s}.{p}", SUPPORT_LABELS, sentence["text"],
                                      panes=[("cited passage " + str(pair.get("docid") or ""),
                                              str(pair.get("passage", "")))]))
    return {"topic": topic, "notes": notes, "questions": questions}


def rubric_item(record: Mapping[str, Any], topic: dict[str, Any], grading: str, answer: str
                ) -> dict[str, Any]:
    """An answer and each criterion of its topic's rubric."""
    return {"topic": topic, "answer": answer, "questions": [
        question(f"c{k}", SCALES[grading], c["criterion"],
                 context=f"{c.get('axis') or 'criterion'} · weight {c['weight']}")
        for k, c in enumerate(record["criteria"])]}


def battle_item(qid: str, topic: dict[str, Any], runs: tuple[str, str],
                shown_first: tuple[str, str], second: tuple[str, str]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """One presentation order of a battle of `runs` (run A < run B): (run id, rendered
    answer) shown first, then the other; the shown part names no run."""
    shown = {"topic": topic, "questions": [
        question("o", BATTLE_LABELS, "Which answer serves the narrative better?",
                 panes=[("Answer 1", shown_first[1]), ("Answer 2", second[1])])]}
    record = {"qid": qid, "run_a": runs[0], "run_b": runs[1], "narrative": topic["narrative"],
              "first": shown_first[0]}
    return shown, record


def battle_record(orders: Sequence[tuple[Mapping[str, Any], str]]) -> dict[str, Any]:
    """The battles journal's record of a battle from its order items' (record, verdict)."""
    first = orders[0][0]
    return {"qid": first["qid"], "run_a": first["run_a"], "run_b": first["run_b"],
            "narrative": first["narrative"],
            "orders": [{"first": r["first"], "verdict": v} for r, v in orders]}


def labels_of(task: str, record: Mapping[str, Any], first: str | None = None
              ) -> dict[str, str]:
    """{question key: label} a judged record holds (an LLM's, or an imported one's); a
    battle's, for the order item that shows `first` first."""
    if task == "assign":
        return {f"n{k}": n["assignment"] for k, n in enumerate(record["nuggets"])
                if n.get("assignment") not in (None, UNJUDGED)}
    if task == "support":
        return {f"p{s}.{p}": pair["label"] for s, sent in enumerate(record["sentences"])
                for p, pair in enumerate(sent["pairs"]) if pair.get("label") not in
                (None, UNJUDGED)}
    if task == "rubric":
        return {f"c{k}": c["label"] for k, c in enumerate(record["criteria"])
                if c.get("label") not in (None, UNJUDGED)}
    if task == "battle":
        verdict = {str(o["first"]): o.get("verdict") for o in record["orders"]}.get(str(first))
        return {"o": verdict} if verdict in BATTLE_LABELS else {}
    return {}


def edited_nuggets(nuggets: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A post-edited list as the key file holds it (no empty fields, no workbench ids)."""
    return [{k: v for k, v in n.items() if v not in ("", None) and k not in ("id", "set")}
            for n in nuggets]


def filled(task: str, record: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    """The method's record with an assessor's value in it (unanswered questions unjudged)."""
    out = copy.deepcopy(dict(record))
    if task == "postedit":
        out["nuggets"] = edited_nuggets(value.get("nuggets", out["nuggets"]))
        return out
    if task == "assign":
        for k, n in enumerate(out["nuggets"]):
            n["assignment"] = value.get(f"n{k}", UNJUDGED)
            if value.get(f"span:n{k}"):
                n["span"] = value[f"span:n{k}"]
    elif task == "support":
        unjudged = 0
        for s, sentence in enumerate(out["sentences"]):
            for p, pair in enumerate(sentence["pairs"]):
                if not pair.get("reason"):
                    pair["label"] = value.get(f"p{s}.{p}", UNJUDGED)
                unjudged += pair["label"] == UNJUDGED
        out["unjudged"] = unjudged
    elif task == "rubric":
        for k, c in enumerate(out["criteria"]):
            c["label"] = value.get(f"c{k}", UNJUDGED)
        out["unjudged"] = sum(c["label"] == UNJUDGED for c in out["criteria"])
    return out


def answered(task: str, shown: Mapping[str, Any], value: Mapping[str, Any] | None) -> bool:
    """Whether every question of the item has a label (a post-edit: every nugget's
    importance chosen, once saved)."""
    if value is None:
        return False
    if task == "postedit":
        return "nuggets" in value and all(n.get("importance") in IMPORTANCE_LABELS
                                          for n in value["nuggets"])
    return all(q["key"] in value for q in shown["questions"])


def _nugget_problem(n: Any) -> str | None:
    if not isinstance(n, dict) or not isinstance(n.get("text"), str) or not n["text"].strip():
        return "every nugget needs its text"
    if len(n["text"]) > MAX_TEXT:
        return f"a nugget's text is at most {MAX_TEXT} characters"
    if n.get("importance") not in (*IMPORTANCE_LABELS, UNJUDGED):
        return f"importance must be {' or '.join(IMPORTANCE_LABELS)}"
    if n.get("source", "original") not in SOURCES:
        return "source must be original or post-edit"
    if not isinstance(n.get("mapped_sub_narrative", ""), str) or \
            not isinstance(n.get("id", ""), str) or len(n.get("id", "")) > 64:
        return "a nugget's id and sub-narrative are texts"
    if not isinstance(n.get("set", False), bool):
        return "a nugget's `set` is true or false"
    return None


def check_value(task: str, shown: Mapping[str, Any], key: str, label: Any) -> str | None:
    """Why a saved (key, label) is refused, or None."""
    if task == "postedit":
        if key != "nuggets" or not isinstance(label, list):
            return "a post-edit saves the whole list under `nuggets`"
        if len(label) > MAX_NUGGETS:
            return f"a topic has at most {MAX_NUGGETS} nuggets"
        return next((why for n in label if (why := _nugget_problem(n))), None)
    keys = {q["key"]: q for q in shown["questions"]}
    if key.startswith("span:"):
        q = keys.get(key.removeprefix("span:"))
        if q is None or not q["span"] or not isinstance(label, str) or len(label) > MAX_TEXT:
            return f"no span question {key}"
        return None
    if key not in keys:
        return f"no question {key}"
    if label not in keys[key]["labels"]:
        return f"label must be one of {', '.join(keys[key]['labels'])}"
    return None
