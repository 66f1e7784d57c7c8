"""Citation support under the TREC RAG 2026 rules (METHODS.md section 8) beside the 2024
first-citation variant (section 6): hand-made 2026 answers citing by position and by doc id,
with uncited objects and an object of 3 citations, judged by a scripted judge whose labels are
fixed here, scored through `assign` and `score`; precision and recall equal the arithmetic
written out below. An answer whose every pair is unjudged is left out and counted, not 0."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import scripted
from click.testing import CliRunner
from test_rag26 import doc, narratives

from nuggetizer.cli import cli

FS, PS, NS = "full_support", "partial_support", "no_support"

# (topic k, object i) -> (citations as written, {passage j: the judge's label})
ANSWERS: dict[int, list[tuple[list[Any], dict[int, str]]]] = {
    0: [([], {}),                                    # uncited (a heading)
        ([0], {0: FS}),                              # by position
        ([doc(0, 1)], {1: PS}),                      # by doc id
        ([doc(0, 2), 3, 0], {2: NS, 3: PS, 0: FS}),  # 3 citations, first NS, best FS
        ([], {})],                                   # uncited
    1: [([1, doc(1, 2)], {1: PS, 2: PS}),
        ([0], {0: NS})],
    2: [([0, doc(2, 1)], {}),                        # the judge cannot answer about topic 2
        ([2], {})],
}
CLAIM = re.compile(r"Claim (\d+)-(\d+)")
PASSAGE = re.compile(r"passage-(\d+)-(\d+)-text")


def _judge(request: Any) -> str:
    """The label fixed in ANSWERS for the claim and passage in the prompt; topic 2: no label."""
    text = request.messages[-1][1]
    claim, passage = CLAIM.search(text), PASSAGE.search(text)
    assert claim and passage, text
    k, i = map(int, claim.groups())
    pk, j = map(int, passage.groups())
    assert pk == k
    label = ANSWERS[k][i][1].get(j)
    return json.dumps({"label": label}) if label else "I cannot say."


scripted.SCRIPTS["support26"] = _judge


def _files(tmp: Path) -> tuple[Path, Path]:
    """The 2026 run (three narratives, four references each) and its ClimbMix passages."""
    lines = []
    for k, (nid, text) in enumerate(narratives()[:3]):
        lines.append({
            "metadata": {"team_id": "team-x", "narrative_id": nid, "narrative": text,
                         "run_id": "run-26", "run_desc": "hand-made by the test"},
            "references": [doc(k, j) for j in range(4)],
            "answer": [{"text": f"Claim {k}-{i}", "citations": cites}
                       for i, (cites, _) in enumerate(ANSWERS[k])]})
    run = tmp / "rag_output_trec_rag_2026.jsonl"
    run.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"docid": doc(k, j), "text": f"passage-{k}-{j}-text"})
                              + "\n" for k in range(3) for j in range(4)), encoding="utf-8")
    return run, corpus


def _assign_and_score(tmp: Path, citations: str) -> tuple[dict[str, Any], dict[tuple[str, str],
                                                                              float], str]:
    run, corpus = _files(tmp)
    judged, board, per_topic = tmp / "judged", tmp / "board.tsv", tmp / "pt.tsv"
    made = CliRunner().invoke(cli, [
        "assign", "--method", "support", "--set", f"citations={citations}", "--set",
        "reasks=0", "--run", str(run), "--corpus", str(corpus), "-o", str(judged),
        "--no-cache", "--assessor", "scripted:support26"])
    assert made.exit_code == 0, made.output
    records = {r["qid"]: r for r in map(json.loads, (judged / "run-26.jsonl").read_text()
                                        .splitlines())}
    scored = CliRunner().invoke(cli, ["score", "--method", "support", str(judged), "-o",
                                      str(board), "--per-topic", str(per_topic)])
    assert scored.exit_code == 0, scored.output
    rows = {(r[1], r[2]): float(r[3]) for r in
            (x.split("\t") for x in per_topic.read_text().splitlines()[1:])}
    return records, rows, scored.output


# Hand-computed, weights FS 1, PS 0.5, NS 0.
# 2026 (citations=all): every citation judged.
#   topic 0: pairs 1 | 0.5 | 0, 0.5, 1   precision = (1 + 0.5 + 0 + 0.5 + 1) / 5 = 0.6
#            objects 0 | 1 | 0.5 | max(0, 0.5, 1) = 1 | 0   recall = 2.5 / 5 = 0.5
#   topic 1: pairs 0.5, 0.5 | 0          precision = 1 / 3
#            objects max(0.5, 0.5) | 0   recall = 0.5 / 2 = 0.25
# 2024 (citations=first): each object's first citation only.
#   topic 0: pairs 1 | 0.5 | 0           precision = 1.5 / 3 = 0.5
#            objects 0 | 1 | 0.5 | 0 | 0 recall = 1.5 / 5 = 0.3
#   topic 1: pairs 0.5 | 0               precision = 0.5 / 2 = 0.25
#            objects 0.5 | 0             recall = 0.25
# Topic 2 is judged by nobody in either variant: left out, so the run's mean is over 0 and 1.
EXPECTED = {
    "all": {"pairs": 5 + 3, "precision": (0.6, 1 / 3), "recall": (0.5, 0.25)},
    "first": {"pairs": 3 + 2, "precision": (0.5, 0.25), "recall": (0.3, 0.25)},
}


@pytest.mark.parametrize("citations", ["all", "first"])
def test_hand_made_2026_answers_score_as_computed_by_hand(tmp_path: Path,
                                                          citations: str) -> None:
    records, rows, output = _assign_and_score(tmp_path, citations)
    nids = [n for n, _ in narratives()[:3]]
    judged = sum(1 for q in nids[:2] for s in records[q]["sentences"] for p in s["pairs"])
    want = EXPECTED[citations]
    assert judged == want["pairs"]
    # the object of 3 citations: doc id, position, position, resolved to the passages cited
    three = records[nids[0]]["sentences"][3]["pairs"]
    assert [p["docid"] for p in three] == ([doc(0, 2), doc(0, 3), doc(0, 0)]
                                           if citations == "all" else [doc(0, 2)])
    for k, nid in enumerate(nids[:2]):
        assert rows[(nid, "support_precision")] == pytest.approx(want["precision"][k],
                                                                 abs=5e-5)
        assert rows[(nid, "support_recall")] == pytest.approx(want["recall"][k], abs=5e-5)
    for measure in ("precision", "recall"):
        mean = sum(want[measure]) / 2
        assert rows[("all", f"support_{measure}")] == pytest.approx(mean, abs=5e-5)
    # topic 2: every pair unjudged -> no row (not a 0), counted in the summary
    assert all(p["label"] == "unjudged" for s in records[nids[2]]["sentences"]
               for p in s["pairs"])
    assert not any(q == nids[2] for q, _ in rows)
    assert ("1 answers with nothing judged, 1 topics with nothing judged (left out, no score)"
            in output)
    sidecar = json.loads((tmp_path / "pt.tsv.provenance.json").read_text())
    assert sidecar["left_out"] == {"answers with nothing judged": 1,
                                   "topics with nothing judged": 1}
