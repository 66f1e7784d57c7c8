"""Fidelity to the reference implementations besides the nuggets prompts
(test_castorini_prompts.py): L counted from the answer text (never a run's self-reported
`response_length`), and UDCG's prompts and reference sample as the UDCG code has them
(github.com/GiovanniTRA/UDCG, commit a02faf35)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scripted import ScriptedBackend
from shared_data import RAG24, UDCG_SAMPLE

from nuggetizer.assessors import Assessor, Completion
from nuggetizer.assessors.base import Request
from nuggetizer.cli import cli
from nuggetizer.formats import read_assessments
from nuggetizer.interface import KeyInput, make_method
from nuggetizer.measures import udcg as mu
from nuggetizer.methods import UdcgConfig, UdcgMethod, parse_relevance, utilities
from nuggetizer.scoring import score_paths
from nuggetizer.templates import load_prompt
from nuggetizer.types import Segment

FIXTURES = Path(__file__).parent.parent / "fixtures"
GPT4O = RAG24 / "runs" / "baseline_rag24.test_gpt-4o_top20.jsonl"


def castorini_file(tmp_path: Path) -> tuple[Path, list[dict]]:
    """The gpt-4o baseline as castorini's assignment script writes it: `answer_text` the
    sentences joined by spaces, unstripped; `response_length` the run's own figure."""
    answers = [json.loads(x) for x in GPT4O.read_text().splitlines()]
    keys = {json.loads(x)["qid"]: json.loads(x) for x in
            (RAG24 / "nuggets.mistral.jsonl").read_text().splitlines()}
    lines = []
    for answer in answers:
        key = keys.get(answer["topic_id"], {"query": answer["topic"], "nuggets": [
            {"text": "the answer", "importance": "vital"}]})
        lines.append({
            "query": key["query"], "qid": answer["topic_id"],
            "answer_text": " ".join(s["text"] for s in answer["answer"]),
            "response_length": answer["response_length"],
            "nuggets": [{"text": n["text"], "importance": "vital", "assignment": "support"}
                        for n in key["nuggets"]]})
    path = tmp_path / "baseline_rag24.test_gpt-4o_top20.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path, answers


def test_l_comes_from_the_text_not_the_stated_length(tmp_path: Path) -> None:
    """The paper's L for the gpt-4o baseline is 300.93 (its 301 answers, each trimmed to 400
    words); the run states 305.60 (uncut)."""
    path, answers = castorini_file(tmp_path)
    stated = sum(a["response_length"] for a in answers) / len(answers)
    assert round(stated, 2) == 305.60
    table = score_paths(make_method("nuggets"), [path])
    run = path.stem
    assert len(table.per_topic[run]) == 301
    assert round(table.means[run]["L"], 2) == 300.93
    # the stated figure is kept as read (reported), marked as stated
    first = read_assessments(path)[0]
    assert first.length == answers[0]["response_length"] and first.stated_length
    # through the CLI: the leaderboard's L column
    board = tmp_path / "board.tsv"
    scored = CliRunner().invoke(cli, ["score", str(path), "-o", str(board)])
    assert scored.exit_code == 0, scored.output
    header, row = (x.split("\t") for x in board.read_text().splitlines())
    assert row[header.index("L")] == "300.9269"


def test_our_own_assessments_keep_their_computed_length(tmp_path: Path) -> None:
    record = {"run_id": "r", "qid": "q", "query": "q", "answer_text": "One. Two three.",
              "length": 7, "nuggets": [{"text": "n", "importance": "vital",
                                        "assignment": "support"}]}
    path = tmp_path / "ours.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert score_paths(make_method("nuggets"), [path]).means["r"]["L"] == 7.0
    record.pop("length")
    path.write_text(json.dumps(record) + "\n")
    assert score_paths(make_method("nuggets"), [path]).means["r"]["L"] == 3.0


# --- UDCG ----------------------------------------------------------------------------------

REFERENCE_SYSTEM = (
    "You are given a question and you must respond based on the provided documents. "
    "Respond directly without providing any premise or explanation. "
    "If none of the documents contain the answer, please respond with NO-RESPONSE. "
    "Do not try to respond based on your own knowledge."
)


def sample() -> list[dict]:
    return json.loads((UDCG_SAMPLE / "sample_dataset.json").read_text())


def test_udcg_no_response_prompt_is_the_reference_codes() -> None:
    """compute_abstention_probability.py: a system message, then `Document: ...` (the
    reference formats them as f"Document: {passage}\\n" + f"Question: {question}\\nAnswer:")."""
    example = sample()[0]
    seen: list[Request] = []

    def answer(request: Request) -> Completion:
        seen.append(request)
        return Completion(text="NO", model="m", first_token_logprobs={"NO": -0.1})

    docs = [Segment(id=p["doc_id"], text=p["text"]) for p in example["passages"]]
    item = KeyInput(qid=example["example_id"], query=example["question"], documents=docs,
                    grades={p["doc_id"]: int(p["is_relevant"]) for p in example["passages"]})
    asyncio.run(UdcgMethod().build_key(Assessor(ScriptedBackend(answer, model="m"), None),
                                       item))
    expected = {(("system", REFERENCE_SYSTEM),
                 ("user", f"Document: {p['text']}\nQuestion: {example['question']}\nAnswer:"))
                for p in example["passages"]}
    assert {r.messages for r in seen} == expected and len(seen) == len(docs)


def test_udcg_relevance_prompt_is_the_reference_codes() -> None:
    """src/prompts.py RELEVANCE_TEMPLATE (fixtures/udcg_relevance_template.txt, the source's
    text), formatted as the reference does: the answers list as Python writes it."""
    template = (FIXTURES / "udcg_relevance_template.txt").read_text(encoding="utf-8")
    template = template.removesuffix("\n")
    example = sample()[0]
    passage = example["passages"][0]["text"]
    answers = ["Paris", "the city's centre"]
    ours = load_prompt("udcg_relevance").render(question=example["question"],
                                                passage=passage, answers=answers)
    theirs = template.format(question=example["question"], answers=answers, document=passage)
    assert ours == (("user", theirs),)
    # its answer: a JSON object whose grade A is RELEVANT, B IRRELEVANT
    assert parse_relevance('{"motivation": "It names Paris.", "grade": "A"}') is True
    assert parse_relevance('{"motivation": "No capital named.", "grade": "B"}') is False


def test_udcg_reference_sample_is_read_as_key(tmp_path: Path) -> None:
    """`score --key dataset_with_scores.json` (the reference sample's JSON array) reproduces
    the reference's UDCG per question (dataset_with_udcg.json, weight -0.333)."""
    keyfile = UDCG_SAMPLE / "dataset_with_scores.json"
    method = UdcgMethod(UdcgConfig(gamma=mu.REFERENCE_GAMMA))
    keys = method.read_keys(keyfile)
    assert list(keys) == [e["example_id"] for e in sample()]
    expected = {e["example_id"]: e["udcg"] for e in
                json.loads((UDCG_SAMPLE / "dataset_with_udcg.json").read_text())}
    model = next(iter(expected[next(iter(expected))]))
    judged = tmp_path / "judged"
    judged.mkdir()
    lines = []
    for qid, key in keys.items():
        docids = [p["doc_id"] for p in key["passages"]]
        lines.append({"run_id": "reference", "qid": qid, "model": model, "docids": docids,
                      "utilities": utilities(key, model, docids), "unjudged": 0})
    (judged / "reference.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    per_topic = tmp_path / "pt.tsv"
    scored = CliRunner().invoke(cli, ["score", "--method", "udcg", "--set",
                                      f"gamma={mu.REFERENCE_GAMMA}", "--key", str(keyfile),
                                      str(judged), "--per-topic", str(per_topic)])
    assert scored.exit_code == 0, scored.output
    rows = {r[1]: float(r[3]) for r in
            (x.split("\t") for x in per_topic.read_text().splitlines()[1:])}
    for qid, by_model in expected.items():
        assert rows[qid] == pytest.approx(by_model[model], abs=5e-5)
