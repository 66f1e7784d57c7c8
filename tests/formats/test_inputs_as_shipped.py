"""Issue 28, "nothing lost, nothing silent": inputs read as the README names them and as the
tracks ship them, or refused in one line naming file, line, field (or argument) and the fix,
with a non-zero exit, no traceback and nothing half-written.

- a reference cited twice in one answer object (TREC RAG 2026 or older) is a warning, judged
  once, and never stops a method that reads no citations (issue 40);
- a narratives file (`narrative_id`, JSONL or a JSON array) serves as --topics and
  --narratives;
- the official data as shipped: the 2026 nuggets (no `query`) take it from --topics, and the
  off-menu labels of the 2024 Mistral nuggets are one warning per file, with the count;
- UDCG refuses a reasoning model in one line saying why.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from scripted import ScriptedBackend
from shared_data import RAG24, RAG26_DEV

from nuggetizer.assessors import Assessor, Completion
from nuggetizer.assessors.base import Request
from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.formats import read_run, read_topics
from nuggetizer.interface import KeyInput
from nuggetizer.methods import UdcgConfig, UdcgMethod
from nuggetizer.methods.support import SupportConfig, SupportMethod
from nuggetizer.plan import answer_targets
from nuggetizer.types import Segment

ROOT = Path(__file__).resolve().parents[2]
RAG26 = ROOT / "tracks" / "rag26"
NARRATIVES = RAG26 / "narratives.jsonl"  # the sample track's narratives file (narrative_id)
DEV_NUGGETS = RAG26_DEV / "rag25-dev-nuggets.jsonl"
DEV_TOPICS = RAG26_DEV / "rag25-topics-dev.tsv"
QUERIES_2026 = RAG26_DEV / "trec_rag_2026_queries.tsv"
MISTRAL = RAG24 / "nuggets.mistral.jsonl"
GPT4O = RAG24 / "runs" / "baseline_rag24.test_gpt-4o_top20.jsonl"


def invoke(*args: object) -> Result:
    """The CLI in this process (stdout and stderr together in `output`)."""
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_error_line(result: Result) -> str:
    """The one line an input error is said in (exit 2, no traceback); it is returned."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [x for x in result.output.splitlines() if "error:" in x.lower()]
    assert len(errors) == 1, result.output
    return errors[0]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- 1. a citation repeated in one answer object --------------------------------------------

def sample_run() -> list[dict[str, Any]]:
    """The sample track's thorough 2026 run, as written (it cites each reference once)."""
    lines = (RAG26 / "run-thorough.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines]


def repeating(kind: str) -> list[dict[str, Any]]:
    """The sample run with one answer object (line 1, answer[2]) citing a reference twice:
    `position` as [2, 2], `doc-id` as a position and the doc id at it, `ids` as the doc id
    twice."""
    run = copy.deepcopy(sample_run())
    ref = run[0]["references"][2]
    run[0]["answer"][2]["citations"] = {"position": [2, 2], "doc-id": [2, ref],
                                        "ids": [ref, ref]}[kind]
    return run


def test_the_sample_run_is_clean_before(tmp_path: Path) -> None:
    run = write_jsonl(tmp_path / "run.jsonl", sample_run())
    result = invoke("validate", "--narratives", RAG26 / "topics.tsv", run)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("kind", ["position", "doc-id", "ids"])
def test_validate_warns_of_a_reference_cited_twice_in_one_object(tmp_path: Path,
                                                                kind: str) -> None:
    """Issue 40: the 2026 guidelines (rag-task.md at f281e88) have no rule against a repeat;
    the wording "Cite no more than three references per sentence" that made it an error is
    superseded. A warning, exit 0."""
    run = write_jsonl(tmp_path / "run.jsonl", repeating(kind))
    result = invoke("validate", "--narratives", RAG26 / "topics.tsv", "--all-problems", run)
    assert result.exit_code == 0, result.output
    assert ": error:" not in result.output
    ref = sample_run()[0]["references"][2]
    line = next(x for x in result.output.splitlines() if "citation-repeated" in x)
    assert line.startswith(f"{run}:1: warning: answer[2].citations[1]: ")
    assert f"references[2] ({ref!r}) again, already cited as citations[0]: its passage is " \
        "judged once (--fix drops the repeat) [rag26 citation-repeated]" in line


def test_validate_fix_drops_the_repeat(tmp_path: Path) -> None:
    run = write_jsonl(tmp_path / "run.jsonl", repeating("doc-id"))
    fixed_dir = tmp_path / "fixed"
    result = invoke("validate", "--narratives", RAG26 / "topics.tsv", "--fix", fixed_dir, run)
    # the repeat dropped, and the sample's two citations by doc id written as positions
    assert result.exit_code == 0, result.output
    assert f"fixed: wrote {fixed_dir / 'run.jsonl'} (3 safe fixes)" in result.output
    fixed = [json.loads(x) for x in (fixed_dir / "run.jsonl").read_text().splitlines()]
    assert fixed[0]["answer"][2]["citations"] == [2]
    assert fixed[0]["answer"][1]["citations"] == [0, 1]
    assert invoke("validate", "--narratives", RAG26 / "topics.tsv",
                  fixed_dir / "run.jsonl").exit_code == 0


@pytest.mark.parametrize("kind", ["position", "doc-id", "ids"])
def test_support_judges_a_2026_repeat_once_and_warns(tmp_path: Path, kind: str) -> None:
    """The run is read; the repeated passage is one pair, judged once; one warning line."""
    run = write_jsonl(tmp_path / "run.jsonl", repeating(kind))
    out = tmp_path / "judged"
    result = invoke("assign", "--method", "support", "--set", "citations=all", "--run", run,
                    "--corpus", RAG26 / "corpus.jsonl", "-o", out, "--assessor", "mock",
                    "--no-cache")
    assert result.exit_code == 0, result.output
    ref = sample_run()[0]["references"][2]
    warned = [x for x in result.output.splitlines() if x.startswith("warning: ")]
    assert warned == [f"warning: 1 citations name a reference their answer object already "
                      f"cites (its passage is judged once), e.g. {run}:1: answer[2]."
                      f"citations[1] cites {ref!r} as citations[0] did"]
    records = [json.loads(x) for x in next(out.glob("*.jsonl")).read_text().splitlines()]
    first = next(r for r in records if r["qid"] == sample_run()[0]["metadata"]["narrative_id"])
    pairs = first["sentences"][2]["pairs"]
    assert [p["docid"] for p in pairs] == [ref]
    assert pairs[0]["label"] in ("full_support", "partial_support", "no_support")


def test_nuggets_never_stop_at_a_repeat(tmp_path: Path) -> None:
    """A method that reads no citations judges the run as if the repeat were not there."""
    run = write_jsonl(tmp_path / "run.jsonl", repeating("position"))
    clean = write_jsonl(tmp_path / "clean.jsonl", sample_run())
    keys = tmp_path / "nuggets.jsonl"
    write_jsonl(keys, [{"qid": line["metadata"]["narrative_id"], "query": "q",
                        "nuggets": [{"text": "indoor composting", "importance": "vital"}]}
                       for line in sample_run()])
    outs = []
    for name, path in (("repeat", run), ("clean", clean)):
        outs.append(tmp_path / name)
        result = invoke("assign", "--method", "nuggets", "--run", path, "--nuggets", keys,
                        "-o", outs[-1], "--assessor", "mock", "--no-cache")
        assert result.exit_code == 0, result.output
        warned = [x for x in result.output.splitlines() if x.startswith("warning: 1 citations")]
        assert len(warned) == (name == "repeat")
        assert "--method nuggets reads no citations" in "".join(warned) or name == "clean"
    records = [[{k: v for k, v in json.loads(x).items() if k != "provenance"}
                for x in next(out.glob("*.jsonl")).read_text().splitlines()] for out in outs]
    assert records[0] == records[1]


def test_an_older_runs_repeat_is_judged_once_and_warned() -> None:
    """The official 2024 gpt-4o baseline repeats a citation in 5 sentences: each passage is
    one pair, and validate says so in a note (the run stays usable, its warnings as before)."""
    run_id, answers = read_run(GPT4O)
    targets = answer_targets({run_id: answers})[run_id]
    method = SupportMethod(SupportConfig(citations="all"))
    repeats = 0
    for target in targets.values():
        pairs = list(method._pairs(target))
        for k, sentence in enumerate(target.sentences):
            docids = [p["docid"] for i, p in pairs if i == k]
            assert len(docids) == len(set(docids))
            assert set(docids) == {target.references[c] for c in sentence.citations}
            repeats += len(sentence.citations) != len(set(sentence.citations))
    assert repeats == 5
    result = invoke("validate", GPT4O)
    assert result.exit_code == 0  # warnings only (answers over 400 words): no failure
    assert re.search(rf"^{re.escape(str(GPT4O))}: note: 5 citations name a reference their "
                     r"sentence already cites \(line \d+ answer\[\d+\]\.citations\[\d+\] cites "
                     r"references\[\d+\] as citations\[\d+\] did\): support judges each such "
                     r"passage once$", result.output, re.M), result.output


# --- 2. a narratives file as topics and as narratives ---------------------------------------

def narratives_array(tmp_path: Path, indent: int | None = 2) -> Path:
    """The sample narratives as one JSON array (the other shape a narratives file takes),
    pretty-printed or (`indent` None) on one line."""
    items = [json.loads(x) for x in NARRATIVES.read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "narratives.json"
    path.write_text(json.dumps(items, indent=indent), encoding="utf-8")
    return path


@pytest.mark.parametrize("shape", ["jsonl", "json array"])
def test_a_narratives_file_is_topics(tmp_path: Path, shape: str) -> None:
    path = NARRATIVES if shape == "jsonl" else narratives_array(tmp_path)
    topics = read_topics(path)
    tsv = read_topics(RAG26 / "topics.tsv")
    assert {q: t.text for q, t in topics.items()} == {q: t.text for q, t in tsv.items()}


@pytest.mark.parametrize("shape", ["jsonl", "json array"])
def test_validate_reads_a_narratives_file(tmp_path: Path, shape: str) -> None:
    path = NARRATIVES if shape == "jsonl" else narratives_array(tmp_path)
    run = RAG26 / "run-thorough.jsonl"
    result = invoke("validate", "--narratives", path, run)
    assert result.exit_code == 0, result.output
    # checked against it: a narrative changed by one character is named
    edited = sample_run()
    meta = edited[1]["metadata"]
    meta["narrative"] = meta["narrative"].replace("heat", "Heat", 1)
    bad = write_jsonl(tmp_path / "run.jsonl", edited)
    line = one_error_line(invoke("validate", "--narratives", path, "--all-problems", bad))
    assert line.startswith(f"{bad}:2: error: metadata.narrative: differs from the narratives")


@pytest.mark.parametrize("shape", ["jsonl", "json array"])
def test_relevance_reads_a_narratives_file_as_topics_and_narratives(tmp_path: Path,
                                                                    shape: str) -> None:
    """The JSON array on one line: its first line is no object (the inputs' sidecar read it
    as one and stopped with a traceback after the qrels were written)."""
    path = NARRATIVES if shape == "jsonl" else narratives_array(tmp_path, None)
    out = tmp_path / "pool.qrels"
    result = invoke("relevance", "--topics", path, "--narratives", path,
                    "--scale", "0-4", "--run", RAG26 / "run-thorough.jsonl", "--corpus",
                    RAG26 / "corpus.jsonl", "-o", out, "--assessor", "mock", "--cache",
                    tmp_path / "c.sqlite")
    assert result.exit_code == 0, result.output
    grades = [x.split() for x in out.read_text().splitlines() if not x.startswith("#")]
    assert {g[0] for g in grades} == {"rag26-s1", "rag26-s2"}


def test_the_2026_queries_tsv_is_topics_not_sub_narratives(tmp_path: Path) -> None:
    """The official TSV is the topics (119 narratives); as --narratives of the 0-4 scale it
    has no sub-narratives, said in one line with what to give instead."""
    assert len(read_topics(QUERIES_2026)) == 119
    out = tmp_path / "pool.qrels"
    result = invoke("relevance", "--topics", QUERIES_2026, "--narratives", QUERIES_2026,
                    "--scale", "0-4", "--run", RAG26 / "run-thorough.jsonl", "--corpus",
                    RAG26 / "corpus.jsonl", "-o", out, "--assessor", "mock")
    line = one_error_line(result)
    assert str(QUERIES_2026) in line and "no sub-narratives" in line
    assert "--sub-narratives-from" in line and not out.exists()


def test_a_narratives_file_without_an_id_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "narratives.jsonl"
    bad.write_text(NARRATIVES.read_text().splitlines()[0] + "\n"
                   + json.dumps({"narrative": "no id"}) + "\n")
    line = one_error_line(invoke("validate", "--narratives", bad, RAG26 / "run-thorough.jsonl"))
    assert f"{bad}:2:" in line and "'narrative_id'" in line


# --- 3. the official data as shipped --------------------------------------------------------

def dev_run(tmp_path: Path, qids: list[str]) -> Path:
    """A small 2026-format run answering development narratives `qids`."""
    topics = read_topics(DEV_TOPICS)
    lines = [{"metadata": {"team_id": "t", "narrative_id": q, "narrative": topics[q].text,
                           "run_id": "dev-run", "run_desc": "written for the test"},
              "references": [f"shard_00000_{k}"],
              "answer": [{"text": f"An answer to narrative {q} about its subject.",
                          "citations": [0]}]} for k, q in enumerate(qids)]
    return write_jsonl(tmp_path / "dev-run.jsonl", lines)


def test_the_2026_nuggets_without_topics_say_to_give_them(tmp_path: Path) -> None:
    run, out = dev_run(tmp_path, ["58", "14"]), tmp_path / "judged"
    line = one_error_line(invoke("assign", "--nuggets", DEV_NUGGETS, "--run", run, "-o", out,
                                 "--assessor", "mock"))
    assert str(DEV_NUGGETS) in line and "22 of its 22 topics" in line
    assert "no field 'query'" in line and "--topics" in line
    assert not out.exists() or not any(out.iterdir())


def test_the_2026_nuggets_take_the_query_from_topics(tmp_path: Path) -> None:
    run, out = dev_run(tmp_path, ["58", "14"]), tmp_path / "judged"
    result = invoke("assign", "--nuggets", DEV_NUGGETS, "--topics", DEV_TOPICS, "--run", run,
                    "-o", out, "--assessor", "mock", "--cache", tmp_path / "c.sqlite")
    assert result.exit_code == 0, result.output
    judged = [json.loads(x) for x in (out / "dev-run.jsonl").read_text().splitlines()]
    texts = read_topics(DEV_TOPICS)
    assert {j["qid"]: j["query"] for j in judged} == {q: texts[q].text for q in ("58", "14")}
    scored = invoke("score", "--nuggets", DEV_NUGGETS, out, "-o", tmp_path / "board.tsv")
    assert scored.exit_code == 0, scored.output  # scoring needs no query


def test_a_track_with_the_2026_nuggets_takes_the_query_from_its_topics(tmp_path: Path) -> None:
    run = dev_run(tmp_path, ["58", "14"])
    config = tmp_path / "track.toml"
    config.write_text(f'name = "dev"\nmethod = "nuggets"\ntopics = "{DEV_TOPICS}"\n'
                      f'key = "{DEV_NUGGETS}"\nruns = ["{run}"]\n')
    out = tmp_path / "out"
    result = invoke("evaluate", "--track", config, "--assessor", "mock", "-o", out, "--cache",
                    tmp_path / "c.sqlite")
    assert result.exit_code == 0, result.output
    judged = [json.loads(x) for f in sorted(out.rglob("dev-run.jsonl"))
              for x in f.read_text().splitlines()]
    texts = read_topics(DEV_TOPICS)
    assert judged and all(j["query"] == texts[j["qid"]].text for j in judged)


def test_topics_that_lack_a_nuggets_topic_are_named(tmp_path: Path) -> None:
    run, out = dev_run(tmp_path, ["58"]), tmp_path / "judged"
    some = tmp_path / "topics.tsv"
    some.write_text("\n".join(DEV_TOPICS.read_text().splitlines()[:3]) + "\n")
    line = one_error_line(invoke("assign", "--nuggets", DEV_NUGGETS, "--topics", some,
                                 "--run", run, "-o", out, "--assessor", "mock"))
    assert "19 of its 22 topics" in line and "no line in the topics file" in line


def test_the_mistral_nuggets_strict_name_the_first_label(tmp_path: Path) -> None:
    run, out = GPT4O, tmp_path / "judged"
    line = one_error_line(invoke("assign", "--nuggets", MISTRAL, "--run", run, "-o", out,
                                 "--only-topics", "2024-105741", "--assessor", "mock"))
    assert f"{MISTRAL}:31:" in line and "nuggets[20].importance label 'failed'" in line
    assert "--lenient" in line and not out.exists()


def test_the_mistral_nuggets_lenient_warn_once_with_the_count(tmp_path: Path) -> None:
    """Through the command as a user runs it (its log on stderr)."""
    out = tmp_path / "judged"
    result = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "assign", "--nuggets", str(MISTRAL), "--lenient",
         "--run", str(GPT4O), "-o", str(out), "--only-topics", "2024-105741", "--assessor",
         "mock", "--cache", str(tmp_path / "c.sqlite")],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    warned = [x for x in result.stderr.splitlines() if "not recognised" in x]
    assert len(warned) == 1, result.stderr
    assert warned[0].startswith(f"{MISTRAL}: 40 importance label(s) not recognised on 7 "
                                "line(s), the first on line 31 ('failed' x10")
    assert warned[0].endswith("; recorded as unjudged")


# --- 4. UDCG and reasoning models -----------------------------------------------------------

def udcg_files(tmp_path: Path) -> list[object]:
    """The arguments of a UDCG key build on two passages of the sample track."""
    (tmp_path / "t.tsv").write_text("q1\tHow do I compost indoors?\n")
    (tmp_path / "q.qrels").write_text("q1 0 shard_00001_1 2\nq1 0 shard_00001_2 0\n")
    (tmp_path / "d.run").write_text("q1 Q0 shard_00001_1 1 2 r\nq1 Q0 shard_00001_2 2 1 r\n")
    return ["nuggetize", "--method", "udcg", "--topics", tmp_path / "t.tsv", "--qrels",
            tmp_path / "q.qrels", "--corpus", RAG26 / "corpus.jsonl", "--docs-run",
            tmp_path / "d.run", "-o", tmp_path / "key.jsonl"]


def test_udcg_refuses_a_model_known_to_reason_before_any_call(tmp_path: Path) -> None:
    """Nothing listens at the base URL: a call would fail otherwise than this line."""
    result = invoke(*udcg_files(tmp_path), "--assessor", "openai:o4-mini", "--base-url",
                    "http://127.0.0.1:9/v1", "--reasoning-effort", "low", "--cache",
                    tmp_path / "c.sqlite")
    line = one_error_line(result)
    assert "--method udcg cannot use openai:o4-mini: it is a reasoning model (a reasoning " \
           "effort (low) is sent to it)" in line
    assert "first token" in line and "thinking" in line
    assert not (tmp_path / "key.jsonl").exists()


def test_udcg_takes_a_plain_model(tmp_path: Path) -> None:
    result = invoke(*udcg_files(tmp_path), "--assessor", "mock", "--cache",
                    tmp_path / "c.sqlite")
    assert result.exit_code == 0, result.output
    key = json.loads((tmp_path / "key.jsonl").read_text().splitlines()[0])
    assert all(p["models_info"]["mock"]["no_res_prob"] is not None for p in key["passages"])


@pytest.mark.parametrize("answer", [
    Completion(text="", model="r1", reasoning="", finish_reason="length",
               first_token_logprobs={"<think>": -0.01}),
    Completion(text="NO", model="r1", reasoning_tokens=1, first_token_logprobs={"NO": -0.1}),
])
def test_udcg_refuses_a_model_whose_answer_shows_thinking(answer: Completion) -> None:
    """A reasoning model given no reasoning option shows it in its first answer."""
    backend = ScriptedBackend(lambda request: answer, model="r1")
    item = KeyInput(qid="q", query="Capital of France?",
                    documents=[Segment(id="a", text="Paris is the capital.")])
    with pytest.raises(ConfigError, match="cannot use scripted:r1: it is a reasoning model "
                       r"\(its answer began with thinking\)"):
        asyncio.run(UdcgMethod(UdcgConfig()).build_key(Assessor(backend, None), item))
    assert len(backend.requests) == 1 and isinstance(backend.requests[0], Request)
