"""Report runs in the 2026 shape, their cited documents carried in `documents` (as TIRA hands
them to a judge, with no corpus): the AutoJudge spot-check topic with answers citing real
Cranfield abstracts, the texts taken from the spot-check corpus."""

from __future__ import annotations

import json
from pathlib import Path

from shared_data import SPOT_CHECK

from nuggetizer.formats import read_corpus

TOPIC = "28"
# run id -> (sentence, cited doc ids) per response; 224 and 279 are the spot-check runs' own
REPORTS = {
    "tira_run_a": [("Linear theory designs quasi-cylindrical surfaces.", ["224"]),
                   ("It also gives the drag of such wings.", ["224", "279"])],
    "tira_run_b": [("Shell integration approximates the volume.", ["279"]),
                   ("The slipstream changes the wing's lift.", ["1"])],
    "tira_run_c": [("Curved wings are designed by linear theory.", ["224"]),
                   ("Nothing more is known.", [])],
}


def query() -> str:
    rows = [json.loads(x) for x in (SPOT_CHECK / "queries.jsonl").read_text().splitlines()]
    return next(r["query"] for r in rows if str(r["qid"]) == TOPIC)


def document(docid: str, texts: dict) -> dict[str, str]:
    seg = texts[docid]
    return {"id": docid, "text": seg.text, "title": seg.title or f"Cranfield {docid}",
            "url": f"https://example.org/cranfield/{docid}"}


def report(run_id: str, responses: list[tuple[str, list[str]]], texts: dict,
           drop: tuple[str, ...] = ()) -> dict:
    cited = list(dict.fromkeys(d for _, ids in responses for d in ids))
    return {"metadata": {"team_id": "tira-test", "run_id": run_id, "topic_id": TOPIC},
            "responses": [{"text": t, "citations": ids} for t, ids in responses],
            "references": cited,
            "documents": {d: document(d, texts) for d in cited if d not in drop}}


def write_reports(folder: Path, drop: dict[str, tuple[str, ...]] | None = None) -> Path:
    """One file per run in `folder`; `drop` leaves those run's documents out."""
    wanted = {d for responses in REPORTS.values() for _, ids in responses for d in ids}
    texts = read_corpus(SPOT_CHECK / "corpus.jsonl.gz", wanted)
    folder.mkdir(parents=True, exist_ok=True)
    for run_id, responses in REPORTS.items():
        record = report(run_id, responses, texts, (drop or {}).get(run_id, ()))
        (folder / f"{run_id}.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder


def write_topics(path: Path) -> Path:
    path.write_text(json.dumps({"request_id": TOPIC, "title": query()}) + "\n",
                    encoding="utf-8")
    return path
