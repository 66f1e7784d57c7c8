"""Two-grade nugget assignment (`assign --set grades=2`): castorini's support / not_support
prompt as RAGDoll publishes it, asked of the emulator on the TREC RAG 2026 development nuggets
and narratives; only those two labels come back, and the scores follow (no partial credit)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from emulated import emulator
from search_api import dev_corpus, run_2026
from shared_data import RAG26_DEV

from nuggetizer.cli import cli
from nuggetizer.templates import load_prompt

# castorini/RAGDoll tests/fixtures/upstream/nuggetizer/assigner_2grade_template.yaml (1f06719)
RAGDOLL_2GRADE = (
    "Based on the query and passage, label each of the {num_nuggets} nuggets either as support "
    "or not_support using the following criteria. A nugget that is fully captured in the "
    "passage should be labeled as support; otherwise, label them as not_support. Return the "
    "list of labels in a Pythonic list format (type: List[str]). The list should be in the "
    "same order as the input nuggets. Make sure to provide a label for each nugget.\n\n"
    "Search Query: {query}\nPassage: {context}\nNugget List: {nuggets}\n"
    "Only return the list of labels (List[str]). Do not explain.\nLabels:")


def test_the_prompt_is_ragdolls_two_grade_prompt() -> None:
    nuggets = ["a nugget", "Ben's nugget"]
    messages = load_prompt("nuggets_assign_binary").render(
        query="q?", answer="An answer.", nuggets=nuggets)
    assert messages[1][1] == RAGDOLL_2GRADE.format(num_nuggets=2, query="q?",
                                                   context="An answer.", nuggets=nuggets)
    assert messages[0][1] == load_prompt("nuggets_assign").render(
        query="q", answer="a", nuggets=[])[0][1]


def test_two_grades_on_the_2026_development_data(tmp_path: Path) -> None:
    topics, _ = dev_corpus(tmp_path, topics=3)
    whole = tmp_path / "all-topics.tsv"
    whole.write_text((RAG26_DEV / "rag25-topics-dev.tsv").read_text())
    key = {}
    for line in (RAG26_DEV / "rag25-dev-nuggets.jsonl").read_text().splitlines():
        record = json.loads(line)
        key[record["qid"]] = [n["text"] for n in record["nuggets"]]
    run = run_2026(tmp_path / "run.jsonl", "r1", {q: [] for q in ("14", "31", "37")})
    rows = [json.loads(x) for x in run.read_text().splitlines()]
    for row in rows:  # answers made of the topic's first nuggets
        row["answer"] = [{"text": t, "citations": []} for t in key[row["metadata"]
                                                                   ["narrative_id"]][:4]]
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with emulator(tmp_path) as server:
        done = CliRunner().invoke(cli, [
            "assign", "--run", str(run), "--nuggets", str(RAG26_DEV / "rag25-dev-nuggets.jsonl"),
            "--topics", str(whole), "--set", "grades=2", "--assessor", "openai:emulated",
            "--base-url", server.url, "--no-cache", "-o", str(tmp_path / "judged")])
        assert done.exit_code == 0, done.output
        kinds = {r["kind"] for r in server.requests()}
    assert kinds == {"assign2"}
    judged = [json.loads(x) for x in (tmp_path / "judged" / "r1.jsonl").read_text().splitlines()]
    assert len(judged) == 3
    labels = [n["assignment"] for j in judged for n in j["nuggets"]]
    assert set(labels) == {"support", "not_support"}
    templates = judged[0]["provenance"]["templates"]
    assert "nuggets_assign_binary" in templates and "nuggets_assign" not in templates
    assert judged[0]["provenance"]["config"]["grades"] == "2"
    board = tmp_path / "board.tsv"
    done = CliRunner().invoke(cli, ["score", str(tmp_path / "judged"), "--nuggets",
                                    str(RAG26_DEV / "rag25-dev-nuggets.jsonl"), "-o",
                                    str(board)])
    assert done.exit_code == 0, done.output
    header, row = board.read_text().splitlines()[:2]
    values = dict(zip(header.split("\t"), row.split("\t"), strict=True))
    assert values["V"] == values["V_strict"] and values["A"] == values["A_strict"]
