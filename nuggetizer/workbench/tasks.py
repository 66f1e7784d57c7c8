"""The five tasks of the workbench: what each page shows and asks, and how an assessor's
answers fill the method's judgment record for the export.

An item is (`shown`, `record`): `shown` is all the page may show (text only; a blind battle's
names no run), a list of questions each with its key, its labels and the texts it is about;
`record` is the method's blank judgment (or key) record, kept on the server. An assessor's
value is {question key: label} (and `span:<key>`: the supporting span of an assignment); a
post-edit's is {"nuggets": [...]}, the whole edited list.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

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


def question(key: str, labels: tuple[str, ...], text: str, *, context: str = "",
             span: bool = False, panes: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """One question of a page."""
    return {"key": key, "labels": list(labels), "text": text, "context": context,
            "span": span, "panes": [list(p) for p in panes or []]}


def postedit_item(key: Mapping[str, Any], subs: list[str]) -> tuple[dict[str, Any], dict]:
    """A topic's nuggets to post-edit: (shown, record)."""
    nuggets = [{"text": n["text"], "importance": n.get("importance", UNJUDGED),
                "mapped_sub_narrative": n.get("mapped_sub_narrative") or "",
                "source": n.get("source") or "original"} for n in key["nuggets"]]
    shown = {"query": key["query"], "sub_narratives": subs, "nuggets": nuggets,
             "importance": list(IMPORTANCE_LABELS), "questions": []}
    return shown, {"qid": key["qid"], "query": key["query"], "nuggets": nuggets}


def assign_item(record: Mapping[str, Any]) -> dict[str, Any]:
    """An answer and its topic's nuggets, each to assign with its supporting span."""
    return {"query": record["query"], "answer": record["answer_text"], "questions": [
        question(f"n{k}", ASSIGNMENT_LABELS, n["text"], context=n.get("importance", ""),
                 span=True) for k, n in enumerate(record["nuggets"])]}


def support_item(record: Mapping[str, Any]) -> dict[str, Any]:
    """An answer's (sentence, cited passage) pairs; a pair that cannot be judged is shown
    with why and not asked."""
    questions, notes = [], []
    for s, sentence in enumerate(record["sentences"]):
        for p, pair in enumerate(sentence["pairs"]):
            if pair.get("reason"):
                notes.append(f"{sentence['text']} [{pair.get('citation')}]: {pair['reason']}")
                continue
            questions.append(question(f"p{s}.{p}", SUPPORT_LABELS, sentence["text"],
                                      context=str(pair.get("passage", "")),
                                      panes=[("cited passage " + str(pair.get("docid") or ""),
                                              str(pair.get("passage", "")))]))
    return {"query": record.get("query", ""), "notes": notes, "questions": questions}


def rubric_item(record: Mapping[str, Any], query: str, grading: str) -> dict[str, Any]:
    """An answer and each criterion of its topic's rubric."""
    return {"query": query, "answer": record["answer_text"], "questions": [
        question(f"c{k}", SCALES[grading], c["criterion"],
                 context=f"{c.get('axis') or 'criterion'} · weight {c['weight']}")
        for k, c in enumerate(record["criteria"])]}


def battle_item(qid: str, narrative: str, a: tuple[str, str], b: tuple[str, str]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A battle of two (run id, rendered answer): both presentation orders, as the LLM method
    sends them; the shown part names no run."""
    (run_a, text_a), (run_b, text_b) = a, b
    shown = {"query": narrative, "questions": [
        question("o0", BATTLE_LABELS, "Order 1 of 2: which answer serves the narrative "
                 "better?",
                 panes=[("Answer 1", text_a), ("Answer 2", text_b)]),
        question("o1", BATTLE_LABELS, "Order 2 of 2 (the same answers, swapped): which "
                 "answer serves the narrative better?",
                 panes=[("Answer 1", text_b), ("Answer 2", text_a)])]}
    record = {"qid": qid, "run_a": run_a, "run_b": run_b, "narrative": narrative,
              "orders": [{"first": run_a}, {"first": run_b}]}
    return shown, record


def labels_of(task: str, record: Mapping[str, Any]) -> dict[str, str]:
    """{question key: label} a judged record holds (an LLM's, or an imported one's)."""
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
        firsts = {str(o["first"]): o.get("verdict") for o in record["orders"]}
        found = {"o0": firsts.get(str(record["run_a"])), "o1": firsts.get(str(record["run_b"]))}
        return {k: v for k, v in found.items() if v in BATTLE_LABELS}
    return {}


def filled(task: str, record: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    """The method's record with an assessor's value in it (unanswered questions unjudged)."""
    out = copy.deepcopy(dict(record))
    if task == "postedit":
        out["nuggets"] = [{k: v for k, v in n.items() if v not in ("", None)}
                          for n in value.get("nuggets", out["nuggets"])]
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
    elif task == "battle":
        for k, order in enumerate(out["orders"]):
            order["verdict"] = value.get(f"o{k}", UNJUDGED)
    return out


def answered(task: str, shown: Mapping[str, Any], value: Mapping[str, Any] | None) -> bool:
    """Whether every question of the item has a label (a post-edit: once saved)."""
    if value is None:
        return False
    if task == "postedit":
        return "nuggets" in value and all(n.get("importance") in IMPORTANCE_LABELS
                                          for n in value["nuggets"])
    return all(q["key"] in value for q in shown["questions"])


def check_value(task: str, shown: Mapping[str, Any], key: str, label: Any) -> str | None:
    """Why a saved (key, label) is refused, or None."""
    if task == "postedit":
        if key != "nuggets" or not isinstance(label, list):
            return "a post-edit saves the whole list under `nuggets`"
        for n in label:
            if not isinstance(n, dict) or not str(n.get("text", "")).strip():
                return "every nugget needs its text"
            if n.get("importance") not in (*IMPORTANCE_LABELS, UNJUDGED):
                return f"importance must be {' or '.join(IMPORTANCE_LABELS)}"
            if n.get("source", "original") not in SOURCES:
                return "source must be original or post-edit"
        return None
    keys = {q["key"]: q for q in shown["questions"]}
    if key.startswith("span:"):
        q = keys.get(key.removeprefix("span:"))
        if q is None or not q["span"] or not isinstance(label, str):
            return f"no span question {key}"
        return None
    if key not in keys:
        return f"no question {key}"
    if label not in keys[key]["labels"]:
        return f"label must be one of {', '.join(keys[key]['labels'])}"
    return None
