"""UDCG: the reference sample reproduced, the measure, p_NR matching, and (slow) p_NR from the
embedded model's first-token log-probabilities on the sample questions."""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path

import pytest
from scripted import ScriptedBackend
from shared_data import UDCG_SAMPLE

from nuggetizer.assessors import Assessor, Completion
from nuggetizer.assessors.base import Request
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats import read_udcg_dataset
from nuggetizer.interface import KeyInput, Target
from nuggetizer.measures import udcg as mu
from nuggetizer.methods import UdcgConfig, UdcgMethod, parse_relevance, utilities
from nuggetizer.types import Segment


def test_reproduces_reference_udcg() -> None:
    """dataset_with_scores.json -> dataset_with_udcg.json with the reference weight -0.333."""
    keys = read_udcg_dataset(UDCG_SAMPLE / "dataset_with_scores.json")
    expected = {e["example_id"]: e["udcg"]
                for e in json.loads((UDCG_SAMPLE / "dataset_with_udcg.json").read_text())}
    method = UdcgMethod(UdcgConfig(gamma=mu.REFERENCE_GAMMA))
    checked = 0
    for key in keys:
        docids = [p["doc_id"] for p in key["passages"]]
        for model, value in expected[key["qid"]].items():
            judgment = {"run_id": "r", "qid": key["qid"], "model": model, "docids": docids,
                        "utilities": utilities(key, model, docids)}
            ours = method.score(key, judgment, [judgment])["UDCG"]
            assert abs(ours - value) <= 1e-12, (key["qid"], ours, value)
            # the default gamma (1/3) gives a close but different value
            default = UdcgMethod().score(key, judgment, [judgment])["UDCG"]
            assert default != ours and abs(default - ours) < 1e-3
            checked += 1
    assert checked == 3


def test_udcg_hand_computed() -> None:
    # u = [0.9, -0.6]: sigmoid(0.9 / 2 - (1/3) * 0.6 / 2) = sigmoid(0.35)
    us = [mu.utility(True, 0.1), mu.utility(False, 0.4)]
    assert us == pytest.approx([0.9, -0.6])
    assert mu.udcg(us) == pytest.approx(1 / (1 + math.exp(-0.35)))
    assert mu.udcg([]) == 0.0
    # a passage without a score counts in k and adds nothing
    assert mu.udcg([0.9, None]) == pytest.approx(1 / (1 + math.exp(-0.45)))
    assert mu.udcg([0.9], gamma=0.0) == mu.udcg([0.9], gamma=5.0)


def test_no_response_probability_matches_prefix_tokens() -> None:
    table = {"NO": math.log(0.5), " NO": math.log(0.1), "N": math.log(0.05),
             "No": math.log(0.2), "Paris": math.log(0.1), " ": math.log(0.05)}
    assert mu.no_response_probability(table) == pytest.approx(0.65)
    assert mu.no_response_probability({"NO-RESP": 0.0}) == 1.0
    assert mu.no_response_probability({}) == 0.0


def test_relevance_parser_and_config() -> None:
    assert parse_relevance('{"label": "relevant"}') is True
    assert parse_relevance("irrelevant") is False
    with pytest.raises(ConfigError):
        UdcgConfig(relevance="human")


def test_reader_rejects_bad_sample(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"example_id": "e", "question": "q",
                                "passages": [{"doc_id": "d", "is_relevant": "yes"}]}]))
    with pytest.raises(InputError, match="boolean 'is_relevant'"):
        read_udcg_dataset(bad)


def logprob_answers(request: Request) -> Completion:
    """First-token log-probs for the generator prompt, a label for the judge."""
    prompt = "\n".join(text for _, text in request.messages)  # the system message too
    if "NO-RESPONSE" in prompt:
        assert request.top_logprobs > 0 and request.max_tokens == 1
        p = 0.3 if "Berlin" in prompt else 0.01
        return Completion(text="NO", model="gen-model", first_token_logprobs={
            "NO": math.log(p), "Paris": math.log(0.5)})
    label = "irrelevant" if "Berlin" in prompt else "relevant"
    return Completion(text=f'{{"label": "{label}"}}', model="gen-model")


def test_llm_relevance_and_p_nr_through_the_assessor() -> None:
    backend = ScriptedBackend(logprob_answers, model="gen-model", max_concurrency=2)
    assessor = Assessor(backend, None)
    method = UdcgMethod(UdcgConfig(relevance="llm"))
    docs = [Segment(id="a", text="Paris is the capital."), Segment(id="b", text="Berlin.")]
    item = KeyInput(qid="q", query="Capital of France?", reference="Paris", documents=docs)

    async def work() -> tuple[dict, dict]:
        key = (await method.build_key(assessor, item)).record
        judged = (await method.judge(assessor, key, Target(run_id="r", qid="q",
                                                           passages=docs + [docs[0]]))).record
        return key, judged

    key, judged = asyncio.run(work())
    assert [p["is_relevant"] for p in key["passages"]] == [True, False]
    assert [p["models_info"]["gen-model"]["no_res_prob"] for p in key["passages"]] == \
        pytest.approx([0.01, 0.3])
    assert judged["utilities"] == pytest.approx([0.99, -0.7, 0.99])
    expected = 1 / (1 + math.exp(-((0.99 * 2) / 3 - (1 / 3) * 0.7 / 3)))
    assert method.score(key, judged, [judged])["UDCG"] == pytest.approx(expected)
    assert len(backend.requests) == 4  # 2 p_NR + 2 relevance calls, none for the judging
    # another generator has no p_NR in this key: its utilities are unjudged
    assert utilities(key, "other-model", ["a"]) == [None]


@pytest.mark.slow
def test_p_nr_from_embedded_model(gguf_path: Path, tmp_path: Path) -> None:
    """p_NR of the embedded model for the 15 sample (question, passage) pairs: 15 calls."""
    from nuggetizer.assessors import make_assessor
    from nuggetizer.cache import Cache

    sample = json.loads((UDCG_SAMPLE / "sample_dataset.json").read_text())
    method = UdcgMethod()
    assessor = make_assessor("local", cache=Cache(tmp_path / "cache.sqlite"))

    async def work() -> list[tuple[dict, float]]:
        out = []
        for example in sample:
            docs = [Segment(id=p["doc_id"], text=p["text"]) for p in example["passages"]]
            grades = {p["doc_id"]: int(p["is_relevant"]) for p in example["passages"]}
            item = KeyInput(qid=example["example_id"], query=example["question"],
                            documents=docs, grades=grades)
            key = (await method.build_key(assessor, item)).record
            target = Target(run_id="sample", qid=item.qid, passages=docs)
            judged = (await method.judge(assessor, key, target)).record
            out.append((key, method.score(key, judged, [judged])["UDCG"]))
        await assessor.aclose()
        return out

    started = time.monotonic()
    results = asyncio.run(work())
    elapsed = time.monotonic() - started
    assert assessor.stats.calls == 15
    for key, score in results:
        for passage in key["passages"]:
            p_nr = passage["models_info"][assessor.model]["no_res_prob"]
            assert p_nr is not None and 0.0 <= p_nr <= 1.0
        assert 0.0 < score < 1.0
    print(f"\nUDCG embedded: {assessor.stats.calls} calls, {elapsed:.1f} s, "
          + ", ".join(f"{k['qid']}={s:.4f}" for k, s in results))


@pytest.mark.slow
def test_udcg_cli_flow_on_a_trec_run(gguf_path: Path, tmp_path: Path) -> None:
    """The sample as user files (topics, qrels, corpus, a TREC run of 5 passages a question):
    p_NR keyed by the generator model, then UDCG per question of the run (15 calls)."""
    import subprocess
    import sys

    sample = json.loads((UDCG_SAMPLE / "sample_dataset.json").read_text())
    files = {
        "topics.jsonl": [json.dumps({"qid": e["example_id"], "query": e["question"]})
                         for e in sample],
        "qrels.txt": [f"{e['example_id']} 0 {p['doc_id']} {int(p['is_relevant'])}"
                      for e in sample for p in e["passages"]],
        "corpus.jsonl": [json.dumps({"id": p["doc_id"], "contents": p["text"]})
                         for e in sample for p in e["passages"]],
        "sample.run": [f"{e['example_id']} Q0 {p['doc_id']} {r} {10 - r} sample"
                       for e in sample for r, p in enumerate(e["passages"], 1)],
    }
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")

    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nuggetizer", *map(str, args)],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)

    cache = ["--cache", tmp_path / "cache.sqlite"]
    made = cli("nuggetize", "--method", "udcg", "--topics", "topics.jsonl", "--qrels",
               "qrels.txt", "--corpus", "corpus.jsonl", "--docs-run", "sample.run",
               "-o", "key.jsonl", *cache)
    assert made.returncode == 0, made.stderr
    assert "15 calls" in made.stderr
    judged = cli("assign", "--method", "udcg", "--key", "key.jsonl", "--retrieval-run",
                 "sample.run", "--corpus", "corpus.jsonl", "-o", "judged", *cache)
    assert judged.returncode == 0, judged.stderr
    assert " 0 calls" in judged.stderr and "0 unjudged" in judged.stderr
    scored = cli("score", "--method", "udcg", "--key", "key.jsonl", "judged",
                 "--per-topic", "per_topic.tsv")
    assert scored.returncode == 0, scored.stderr
    key = [json.loads(x) for x in (tmp_path / "key.jsonl").read_text().splitlines()]
    model = next(iter(key[0]["passages"][0]["models_info"]))
    assert model.endswith(".gguf")  # p_NR is stored under the generator model
    relevant = {p["doc_id"]: p["is_relevant"] for k in key for p in k["passages"]}
    assert relevant == {p["doc_id"]: p["is_relevant"] for e in sample for p in e["passages"]}
    rows = [x.split("\t") for x in (tmp_path / "per_topic.tsv").read_text().splitlines()[1:]]
    per_question = {r[1]: float(r[3]) for r in rows}
    assert set(per_question) == {"example_1", "example_2", "example_3", "all"}
    for k in key:
        us = [mu.utility(p["is_relevant"], p["models_info"][model]["no_res_prob"])
              for p in k["passages"]]
        assert per_question[k["qid"]] == pytest.approx(mu.udcg(us), abs=5e-5)
    print("\nUDCG CLI embedded: " + made.stderr.strip().splitlines()[-1] + "\n"
          + scored.stdout)
