"""The files of castorini's RAGDoll (github castorini/RAGDoll at 1f06719, the scorer of TREC
RAG 2026), read as the project's judgment records and written from them, field by field as its
code defines them (read from its source, not copied):

- support assignments (`support assemble`, the input of `support metrics`; the shape of NIST's
  2024 files, formats/nist_support.py): `{"topic_id", "narrative_id", "run_id", "sentences":
  [{"sentenceID", "text", "citations": [{"citationID", "reference", "support"}]}]}`, support
  "2" full, "1" partial, "0" none, "-1" missing, failed or unparseable;
- graded rubrics (`rubric grade`): `{"task_id", "status", "qid", "run_id", "query",
  "answer_text", "response_length", "criteria": [{"text", "type", "tier", "weight",
  "source_nugget", "verdict"}]}`, verdict satisfied / partially_satisfied / not_satisfied, or
  "failed" (its window's call failed: RAGDoll scores it 0); and a rubric (`rubric author`,
  the key): the same without run and verdicts;
- arena judgments (`arena compare-all`, judgments.jsonl): `{"task_id", "qid", "query", "pair":
  [run, run], "assistant_a_run_id", "assistant_b_run_id", "judge_verdict": "A" | "B" | "Tie" |
  "Tie (Both Bad)" | null, "preferred_run_id", "status", "error", ...}`, one presentation
  order per battle; a failed row stays in the file and a resumed run appends its retry;
- nugget assignments (`nuggetizer assign`): `{"task_id", "status", "qid", "run_id", "query",
  "answer_text", "response_length", "context", "nuggets": [{"text", "importance",
  "assignment"}]}`, assignment "failed" (or the legacy "fail") where the call failed; read by
  formats/assessments.py;
- answers with the topic at the top level (`materialize trec-answers`' shape: RAGDoll joins
  answers to nuggets and rubrics by a top-level `qid`/`topic_id`, which a TREC RAG 2026 run
  keeps under `metadata`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.nist_support import NistSupportLine
from nuggetizer.formats.records import validated
from nuggetizer.labels import UNJUDGED
from nuggetizer.types import Answer, Assessment, NuggetList

# The measures of RAGDoll's `support metrics` (one row per topic and run) and the names its
# `support metric-rows` writes, `run_id topic_id metric value` a line.
SUPPORT_METRICS = (
    "weighted_precision_first_citation", "weighted_recall_first_citation",
    "weighted_precision_all_judged_citations", "weighted_recall_all_judged_citations",
    "hard_precision", "hard_recall",
)
SUPPORT_CODES = {"full_support": "2", "partial_support": "1", "no_support": "0"}
NOT_JUDGED = "-1"  # RAGDoll's support code of a citation missing, failed or unparseable
FAILED = "failed"  # RAGDoll's label of a nugget or criterion whose call failed
VERDICTS = ("satisfied", "partially_satisfied", "not_satisfied")  # rubric/metrics.py's
CRITERION_TYPES = ("explicit", "implicit", "synthesis", "references", "communication",
                   "instruction")  # rubric/prompts.py's, "explicit" when none is given
TIERS = ("mandatory", "optional")
TIES = ("Tie", "Tie (Both Bad)")  # arena/prompts.py's tie verdicts
_VERDICT_OF = {"A": "A", "B": "B", **dict.fromkeys(TIES, "tie")}


def citation_labels(sentence: Mapping[str, Any], first_only: bool = False) -> list[str]:
    """The label of each citation of a support judgment's sentence (`{"citations": [as
    written], "pairs": [{"citation", "docid", "label"}]}`) as RAGDoll reads one, a label per
    citation: a passage cited twice (judged once here, one pair) counts twice, and a citation
    the record holds no label of (beyond the first, judged alone) is `unjudged`, as RAGDoll's
    "-1"; `first_only`: the first citation's alone."""
    cites, pairs = sentence["citations"], sentence["pairs"]
    if len(pairs) == len(cites):  # a pair per citation, in order
        labels = [str(p["label"]) for p in pairs]
    else:  # a repeat judged once: each citation takes the label of its passage's pair
        labels = [_pair_of(cite, pairs).get("label", UNJUDGED) for cite in cites]
    return labels[:1] if first_only else labels


def _pair_of(cite: Any, pairs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The pair a citation names (as written, else by its doc id); {} when none does."""
    for field in ("citation", "docid"):
        for pair in pairs:
            if type(pair.get(field)) is type(cite) and pair.get(field) == cite:
                return pair
    return {}


# --- read: RAGDoll's files as the project's judgment records ------------------------------

def is_support_assignment(obj: Mapping[str, Any]) -> bool:
    """Whether a line is RAGDoll's (and NIST's) support assignment shape rather than the
    support method's own (which has a `query`, and whose sentences hold `pairs`)."""
    sentences = obj.get("sentences")
    return isinstance(sentences, list) and "query" not in obj and not any(
        isinstance(s, dict) and "pairs" in s for s in sentences)


def support_judgment(obj: Mapping[str, Any], path: Path, line: int, first_only: bool = False
                     ) -> dict[str, Any]:
    """A line of RAGDoll's support assignments as the support method's judgment record: a
    pair per citation (`first_only`: each sentence's first citation alone, as judged for
    the first-citation measures), its label from the code ("-1": unjudged, with the reason),
    a second citation of one passage in a sentence marked `repeat` (left out under the
    guideline's reading, where a passage a sentence cites twice is one pair; counted again
    under the ragdoll profile, as RAGDoll counts it)."""
    given = dict(obj)  # the topic and the sentences' ids and texts as RAGDoll's metrics take
    for name in ("narrative_id", "qid", "query_id"):  # them: optional, or by another name
        if given.get("topic_id") in (None, "") and given.get(name) not in (None, ""):
            given["topic_id"] = given[name]
    if isinstance(given["sentences"], list):
        given["sentences"] = [{"sentenceID": k, "text": "", **s} if isinstance(s, dict) else s
                              for k, s in enumerate(given["sentences"])]
    row = validated(NistSupportLine, given, path, line)
    sentences = []
    unjudged = 0
    for sentence in row.sentences:
        pairs: list[dict[str, Any]] = []
        seen: set[str] = set()
        for cite in sentence.citations[:1] if first_only else sentence.citations:
            pair: dict[str, Any] = {"citation": cite.reference, "docid": cite.reference,
                                    "passage": "", "label": cite.support or UNJUDGED}
            if cite.support is None:
                pair["error"] = "RAGDoll's support -1: missing, failed or unparseable"
                unjudged += 1
            if cite.reference in seen:
                pair["repeat"] = True
            seen.add(cite.reference)
            pairs.append(pair)
        sentences.append({"text": sentence.text or "",
                          "citations": [c.reference for c in sentence.citations],
                          "pairs": pairs})
    return {"run_id": str(row.run_id), "qid": str(row.topic_id), "query": "",
            "sentences": sentences, "unjudged": unjudged}


def is_graded_rubric(obj: Mapping[str, Any]) -> bool:
    """Whether a line is RAGDoll's graded rubric (criteria with `text` and `verdict`)."""
    criteria = obj.get("criteria")
    return isinstance(criteria, list) and bool(criteria) and all(
        isinstance(c, dict) and "text" in c and "verdict" in c for c in criteria)


def is_rubric(obj: Mapping[str, Any]) -> bool:
    """Whether a line is a RAGDoll rubric (`criteria` of `text`s, no `rubrics`)."""
    criteria = obj.get("criteria")
    return "rubrics" not in obj and isinstance(criteria, list) and all(
        isinstance(c, dict) and "text" in c for c in criteria)


def _qid(obj: Mapping[str, Any], path: Path, line: int) -> str:
    """The topic of a rubric line as RAGDoll reads it (qid, topic_id, query_id, task_id)."""
    for name in ("qid", "topic_id", "query_id", "task_id"):
        value = obj.get(name)
        if isinstance(value, int) and not isinstance(value, bool) or \
                isinstance(value, str) and value.strip():
            return str(value).strip()
    raise InputError(path, line, "a RAGDoll rubric line names its topic in `qid` (or "
                     "topic_id, query_id, task_id): none is given")


def _criterion_type(value: Any) -> str:
    """A criterion's type as RAGDoll reads it: one of its types, else explicit."""
    given = str(value if value is not None else "explicit").strip().lower()
    return given if given in CRITERION_TYPES else "explicit"


def rubric_key(obj: Mapping[str, Any], path: Path, line: int) -> dict[str, Any]:
    """A RAGDoll rubric line as a rubrics key line (`{"qid", "query", "rubrics":
    [{"criterion", "weight", "axis"}]}`, the axis its type), its criteria as RAGDoll grades
    them (rubric/prompts.py `normalize_criteria`): the weight rounded to an integer within
    0-5, a criterion without text or positive weight dropped."""
    criteria = []
    for item in obj.get("criteria") or []:
        text = str(item.get("text", "")).strip() if isinstance(item, dict) else ""
        if not text:
            continue
        try:
            weight = max(0, min(5, int(round(float(item.get("weight", 0))))))
        except (TypeError, ValueError):
            continue
        if weight > 0:
            criteria.append({"criterion": text, "weight": weight,
                             "axis": _criterion_type(item.get("type"))})
    query = obj.get("query")
    asked = query.get("text") if isinstance(query, dict) else query
    return {"qid": _qid(obj, path, line), "query": str(asked or ""), "rubrics": criteria}


def rubric_judgment(obj: Mapping[str, Any], path: Path, line: int) -> dict[str, Any]:
    """A RAGDoll graded rubric line as the rubrics method's judgment record: each criterion
    (its `axis` if it has one, else its type) with its verdict as a label, any verdict off
    RAGDoll's menu (its "failed") unjudged with the verdict kept, as RAGDoll scores 0."""
    criteria = []
    unjudged = 0
    for k, item in enumerate(obj["criteria"]):
        try:
            weight = float(item.get("weight", 0))
        except (TypeError, ValueError):
            raise InputError(path, line, f"criteria[{k}].weight must be a number, got "
                             f"{item.get('weight')!r}") from None
        verdict = str(item.get("verdict") or "").strip().lower().replace(" ", "_")
        entry: dict[str, Any] = {"criterion": str(item["text"]).strip(),
                                 "weight": int(weight) if weight.is_integer() else weight,
                                 "axis": str(item.get("axis") or _criterion_type(
                                     item.get("type"))),
                                 "label": verdict if verdict in VERDICTS else UNJUDGED}
        if verdict not in VERDICTS:
            entry["error"] = f"RAGDoll's verdict {item.get('verdict')!r}"
            unjudged += 1
        for name in ("tier", "source_nugget"):
            if item.get(name) is not None:
                entry[name] = item[name]
        criteria.append(entry)
    run_id = obj.get("run_id")
    if run_id in (None, ""):
        raise InputError(path, line, "a graded rubric names its run in `run_id`: none given")
    return {"run_id": str(run_id), "qid": _qid(obj, path, line),
            "answer_text": str(obj.get("answer_text") or ""), "criteria": criteria,
            "unjudged": unjudged}


def is_arena_judgment(obj: Mapping[str, Any]) -> bool:
    """Whether a line is a RAGDoll arena judgment (`pair`, `assistant_a_run_id`)."""
    return isinstance(obj.get("pair"), list) and "assistant_a_run_id" in obj


def arena_battle(obj: Mapping[str, Any], path: Path, line: int) -> dict[str, Any]:
    """A RAGDoll arena judgment as a battle record of one order, the run shown as A first:
    its verdict A, B or tie as RAGDoll counts it (a tie verdict, else the run it prefers),
    unjudged for a row that did not complete or names neither run."""
    pair = obj["pair"]
    if len(pair) != 2 or str(pair[0]) == str(pair[1]):
        raise InputError(path, line, f"`pair` must name two runs, got {pair!r}")
    run_a, run_b = sorted(str(r) for r in pair)
    first = str(obj.get("assistant_a_run_id"))
    second = str(obj.get("assistant_b_run_id"))
    if {first, second} != {run_a, run_b}:
        raise InputError(path, line, "`assistant_a_run_id` and `assistant_b_run_id` must be "
                         f"the runs of `pair` ({run_a}, {run_b})")
    verdict = UNJUDGED
    if obj.get("status") == "completed":
        preferred = obj.get("preferred_run_id")
        verdict = _VERDICT_OF.get(str(obj.get("judge_verdict")), UNJUDGED)
        if verdict in ("A", "B"):
            verdict = "A" if preferred == first else "B" if preferred == second else UNJUDGED
    order: dict[str, Any] = {"first": first, "verdict": verdict}
    if verdict == UNJUDGED:
        order["error"] = str(obj.get("error") or f"RAGDoll's status {obj.get('status')!r}")
    qid = obj.get("qid")
    if qid in (None, ""):
        raise InputError(path, line, "an arena judgment names its topic in `qid`: none given")
    battle = {"qid": str(qid), "run_a": run_a, "run_b": run_b,
              "narrative": str(obj.get("query") or ""), "orders": [order],
              "task_id": str(obj.get("task_id") or f"arena:{pair[0]}:{pair[1]}:{qid}")}
    for name in ("orders", "style"):  # what `arena_row` keeps of this project's battles
        if obj.get(name) is not None:
            battle[name] = obj[name]
    return battle


def arena_battles(rows: Sequence[tuple[Mapping[str, Any], int]], path: Path
                  ) -> list[tuple[dict[str, Any], int]]:
    """A RAGDoll arena judgments file's rows (with their lines) as battle records, one per
    task: its completed row (RAGDoll counts completed rows only), else its last failed one
    (unjudged): a resumed arena appends the retry of a failed task beside it."""
    kept: dict[str, tuple[dict[str, Any], int]] = {}
    for obj, line in rows:
        battle = arena_battle(obj, path, line)
        task = battle.pop("task_id")
        done = kept.get(task)
        if done is not None and done[0]["orders"][0]["verdict"] != UNJUDGED:
            if battle["orders"][0]["verdict"] != UNJUDGED:
                raise InputError(path, line, f"task {task!r} completed twice (also on line "
                                 f"{done[1]}): keep one of its judgments")
            continue
        kept[task] = (battle, line)
    return list(kept.values())


# --- write: the project's judgment records in RAGDoll's shapes ----------------------------

def support_row(record: Mapping[str, Any], first_only: bool = False) -> dict[str, Any]:
    """A support judgment as RAGDoll's support assignment line: every citation with its
    passage's label (a passage cited twice, judged once here, gets its label twice), "-1"
    for one not judged (beyond the first, under `first_only`, as RAGDoll assembles
    first-citation judgments); its `reference` the passage's doc id, or the citation as
    written where the record holds no pair of it (RAGDoll's metrics read only `support`)."""
    sentences = []
    for k, sentence in enumerate(record["sentences"]):
        labels = citation_labels(sentence, False)
        if first_only:
            labels = labels[:1] + [UNJUDGED] * (len(labels) - 1)
        citations = []
        for j, (cite, label) in enumerate(zip(sentence["citations"], labels, strict=True)):
            pair = _pair_of(cite, sentence["pairs"])
            reference = pair.get("docid") if pair.get("docid") is not None else cite
            citations.append({"citationID": j, "reference": str(reference),
                              "support": SUPPORT_CODES.get(label, NOT_JUDGED)})
        sentences.append({"sentenceID": k, "text": sentence.get("text", ""),
                          "citations": citations})
    return {"topic_id": record["qid"], "narrative_id": record["qid"],
            "run_id": record["run_id"], "sentences": sentences}


def _axis_type(axis: str) -> str:
    """RAGDoll's type of a criterion from its axis (ResearchRubrics' "Explicit Criteria",
    "Use of References", ...): the first of RAGDoll's types the axis names, else explicit."""
    words = axis.lower()
    return next((t for t in CRITERION_TYPES if t in words), "explicit")


def rubric_row(record: Mapping[str, Any], query: str = "") -> dict[str, Any]:
    """A rubrics judgment as RAGDoll's graded rubric line: each criterion with its weight as
    given, its axis (and the type RAGDoll's diagnostics read from it) and its label as the
    verdict ("failed" where unjudged)."""
    criteria = []
    for c in record["criteria"]:
        label = c["label"]
        item: dict[str, Any] = {"text": c["criterion"], "type": _axis_type(str(c.get("axis"))),
                                "weight": c["weight"], "axis": c.get("axis", ""),
                                "verdict": label if label in VERDICTS else FAILED}
        for name in ("tier", "source_nugget"):
            if c.get(name) is not None:
                item[name] = c[name]
        criteria.append(item)
    answer = str(record.get("answer_text", ""))
    return {"task_id": f"{record['run_id']}:{record['qid']}", "status": "completed",
            "qid": record["qid"], "run_id": record["run_id"], "query": query,
            "answer_text": answer, "response_length": len(answer.split()),
            "criteria": criteria}


def rubric_key_row(key: Mapping[str, Any]) -> dict[str, Any]:
    """A rubrics key line as a RAGDoll rubric (the criteria RAGDoll grades: `rubric_key`
    drops what it would drop)."""
    return {"qid": key["qid"], "status": "completed", "query": str(key.get("query") or ""),
            "criteria": [{"text": c["criterion"], "type": _axis_type(str(c.get("axis", ""))),
                          "tier": "mandatory" if float(c["weight"]) >= 5 else "optional",
                          "weight": c["weight"], "axis": c.get("axis", "")}
                         for c in key["rubrics"]]}


def nugget_row(a: Assessment) -> dict[str, Any]:
    """A nugget assessment as RAGDoll's assignment line ("failed" where unjudged, an
    unjudged importance left out); `length` beside RAGDoll's `response_length` keeps L."""
    nuggets = []
    for n in a.nuggets:
        item: dict[str, Any] = {"text": n.text}
        if n.importance != UNJUDGED:
            item["importance"] = n.importance
        item["assignment"] = n.assignment if n.assignment != UNJUDGED else FAILED
        nuggets.append(item)
    return {"task_id": f"{a.run_id}:{a.qid}", "status": "completed", "qid": a.qid,
            "run_id": a.run_id, "query": a.query, "answer_text": a.answer_text,
            "response_length": a.length, "length": a.length, "context": a.answer_text,
            "nuggets": nuggets}


def nugget_key_row(nl: NuggetList) -> dict[str, Any]:
    """A nuggets key line as RAGDoll reads a nuggets file: the topic at the top level as
    `qid` and `topic_id`, the query as text, each nugget's text and importance."""
    return {"qid": nl.qid, "topic_id": nl.qid, "query": nl.query,
            "nuggets": [{"text": n.text, **({"importance": n.importance}
                                            if n.importance != UNJUDGED else {})}
                        for n in nl.nuggets]}


def arena_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A battle as RAGDoll's arena judgment: its first order's presentation, the battle's
    result (both orders reconciled, where judged twice) as the verdict of that order; a
    battle without a result is a failed row (RAGDoll counts only completed ones). Its
    `orders` and answers' `style`, which RAGDoll does not read, are kept beside, so that the
    row reads back as the same battle (flips, style control)."""
    run_a, run_b, result = record["run_a"], record["run_b"], record["result"]
    first = str(record["orders"][0]["first"])
    second = run_b if first == run_a else run_a
    winner = {"a": run_a, "b": run_b}.get(result)
    verdict = "Tie" if result == "tie" else "A" if winner == first else \
        "B" if winner == second else None
    return {"task_id": f"arena:{run_a}:{run_b}:{record['qid']}", "qid": record["qid"],
            "query": str(record.get("narrative") or ""), "pair": [run_a, run_b],
            "assistant_a_run_id": first, "assistant_b_run_id": second,
            "judge_verdict": verdict, "preferred_run_id": winner,
            "status": "completed" if verdict is not None else FAILED,
            "error": None if verdict is not None else "no verdict parsed",
            "orders": [{"first": o["first"], "verdict": o["verdict"]} for o in record["orders"]],
            **({"style": record["style"]} if record.get("style") is not None else {})}


def answer_row(answer: Answer) -> dict[str, Any]:
    """A run's answer with its topic at the top level, as RAGDoll's answers files are
    (`materialize trec-answers`), so that RAGDoll joins it to nuggets and rubrics by
    `qid`/`topic_id` (a TREC RAG 2026 line keeps it under `metadata`, which RAGDoll's join
    does not read); citations as positions into `references`."""
    sentences = [{"text": s.text, "citations": list(s.citations)} for s in answer.sentences]
    text = " ".join(s.text.strip() for s in answer.sentences if s.text.strip())
    return {"run_id": answer.run_id, "qid": answer.topic_id, "topic_id": answer.topic_id,
            "query": answer.topic, "topic": answer.topic,
            "metadata": {"run_id": answer.run_id, "narrative_id": answer.topic_id,
                         "narrative": answer.topic},
            "references": list(answer.references),
            "response_length": sum(len(s.text.split()) for s in answer.sentences),
            "answer_text": text, "answer": sentences}

