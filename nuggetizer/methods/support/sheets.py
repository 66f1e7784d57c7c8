"""Support sheets for manual assessment (methods/support/method.py), one file per topic: an `answer`
row (`kind qid run_id text`: the topic's text), then per answer sentence a `sentence` row (`n
citation text`: its number, its citations as written, its text) followed by its `pair` rows
(`n citation docid text label note`: the sentence's number, the citation judged, the cited
passage and its text); assessors fill `label` with full_support, partial_support or
no_support (FS, PS, NS), or unjudged where the pair cannot be judged (the note says why, e.g.
a passage missing from the corpus). Imports are strict: every problem an InputError naming the
file and the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.sheets import _answer_rows, _tsv, by_topic, records_by_run
from nuggetizer.labels import SUPPORT_LABELS, support_label

SUPPORT_COLUMNS = ("kind", "qid", "run_id", "n", "citation", "docid", "text", "label", "note")


def _cited(value: object) -> str:
    return str(value)


def support_sheets(judgments: Iterable[dict[str, Any]], comment: str) -> dict[str, str]:
    """Support judgment records as one TSV per topic: {qid: text}. A judged pair shows its
    label; a pair that cannot be judged shows `unjudged` and why; any other unjudged pair (a
    blank sheet, or an LLM output that never parsed) is left blank for the assessor."""
    sheets: dict[str, str] = {}
    for qid, group in by_topic(judgments).items():
        rows: list[tuple[object, ...]] = []
        for j in group:
            run_id = j["run_id"]
            rows.append(("answer", qid, run_id, "", "", "", j.get("query", ""), "", ""))
            for k, sentence in enumerate(j["sentences"], 1):
                cites = ",".join(_cited(c) for c in sentence.get("citations", []))
                rows.append(("sentence", qid, run_id, k, cites, "", sentence.get("text", ""),
                             "", ""))
                for pair in sentence["pairs"]:
                    label, note = pair["label"], pair.get("reason", "")
                    shown = label if label != "unjudged" or note else ""
                    rows.append(("pair", qid, run_id, k, _cited(pair.get("citation", "")),
                                 pair.get("docid") or "", pair.get("passage", ""), shown, note))
        query = str(group[0].get("query", "")).replace("\n", " ")
        sheets[qid] = _tsv(SUPPORT_COLUMNS, rows, f"{comment}; topic {qid}: {query}")
    return sheets


def _citation(cell: str) -> int | str:
    """A citation as written: an index into the references, else a segment id."""
    return int(cell) if cell.lstrip("-").isdigit() else cell


def read_support_sheet(path: str | Path, *, allow_blank: bool = False) -> list[dict[str, Any]]:
    """Read one filled-in support sheet into judgment records (strict: file and line)."""

    path = Path(path)
    result: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line, row, kind in _answer_rows(path, SUPPORT_COLUMNS, ("answer", "sentence", "pair")):
        if kind == "answer":
            current = {"run_id": row["run_id"], "qid": row["qid"], "query": row["text"],
                       "sentences": [], "unjudged": 0}
            result.append(current)
            continue
        sentences = current["sentences"]
        number = row["n"]
        if kind == "sentence":
            if number != str(len(sentences) + 1):
                raise InputError(path, line, f"column n is {number!r}: sentence rows number "
                                 f"the answer's sentences 1, 2, ... (expected "
                                 f"{len(sentences) + 1}; do not delete or add sentences)")
            cites = [_citation(c.strip()) for c in row["citation"].split(",") if c.strip()]
            sentences.append({"text": row["text"], "citations": cites, "pairs": []})
        elif kind == "pair":
            if not sentences or number != str(len(sentences)):
                raise InputError(path, line, f"column n is {number!r}: a pair row follows its "
                                 "sentence's row and repeats its number")
            if not row["citation"]:
                raise InputError(path, line, "column citation is empty")
            raw = row["label"].strip()
            if raw.lower() == "unjudged":
                label = "unjudged"
            elif not raw and allow_blank:
                label = "unjudged"
            else:
                found = support_label(raw) if raw else None
                if found is None:
                    hint = " (or pass --allow-blank to record it unjudged)" if not raw else ""
                    raise InputError(path, line, f"column label is "
                                     f"{repr(raw) if raw else 'empty'}: write one of "
                                     f"{', '.join(SUPPORT_LABELS)} (FS, PS, NS) or unjudged{hint}")
                label = found
            pair: dict[str, Any] = {"citation": _citation(row["citation"]),
                                    "docid": row["docid"] or None, "passage": row["text"],
                                    "label": label}
            if label == "unjudged":
                current["unjudged"] += 1
                if row["note"]:
                    pair["reason"] = row["note"]
            sentences[-1]["pairs"].append(pair)
    if not result:
        raise InputError(path, None, "the sheet holds no answers")
    return result


def read_support_sheets(paths: Sequence[Path], *, allow_blank: bool = False
                        ) -> dict[str, list[dict[str, Any]]]:
    """Read support sheets (files, or folders of `*.tsv`) into judgment records by run id."""
    return records_by_run(paths, lambda path: read_support_sheet(path, allow_blank=allow_blank))
