"""RAGDoll's rubric capabilities: rubrics authored from nuggets (its mapping: vital -> mandatory,
weight 5; okay -> optional, weight 2; an uncovered vital nugget gets a criterion of its own) in
the ResearchRubrics shape, rubric diagnostics (failure rate per criterion type, mandatory
failures, ternary vs binary Kendall tau) and rubric-guided battles, on inputs written here and
on the TREC RAG 2026 development nuggets, narratives and ResearchRubrics prompts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from emulated import emulator
from search_api import run_2026
from shared_data import RAG26_DEV

from nuggetizer.cli import cli
from nuggetizer.interface.base import Target
from nuggetizer.measures.correlation import kendall_tau
from nuggetizer.measures.rubric_diagnostics import Graded, diagnose
from nuggetizer.methods.battles.method import Battle, BattlesConfig, BattlesMethod
from nuggetizer.methods.rubrics.authoring import finalize, parse_rubric
from nuggetizer.methods.rubrics.method import RubricsMethod
from nuggetizer.parsing import ParseFailure
from nuggetizer.types import Nugget, NuggetList, Sentence

NUGGETS = RAG26_DEV / "rag25-dev-nuggets.jsonl"
TOPICS = RAG26_DEV / "rag25-topics-dev.tsv"


def cli_ok(*argv: str) -> Any:
    done = CliRunner().invoke(cli, [str(a) for a in argv])
    assert done.exit_code == 0, done.output + repr(done.exception)
    return done


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_ragdolls_mapping_on_criteria_written_here() -> None:
    nuggets = NuggetList(qid="1", query="q", nuggets=[
        Nugget(text="vital one", importance="vital"), Nugget(text="okay one", importance="okay"),
        Nugget(text="vital two", importance="vital")])
    authored = parse_rubric(json.dumps({"items": [
        {"text": "Says vital one", "type": "implicit", "source_nugget": "n0"},
        {"text": "Says okay one", "type": "explicit", "source_nugget": "n1"},
        {"text": "Well organized", "type": "Communication", "source_nugget": None},
        {"text": "Odd type", "type": "poetry", "source_nugget": "n9"},
        {"text": "  ", "type": "explicit", "source_nugget": "n2"}]}))
    final = finalize(authored, nuggets)
    assert [(c["criterion"], c["weight"], c["tier"], c["type"], c["axis"], c["source_nugget"])
            for c in final] == [
        ("Says vital one", 5, "mandatory", "implicit", "Implicit Criteria", "n0"),
        ("Says okay one", 2, "optional", "explicit", "Explicit Criteria", "n1"),
        ("Well organized", 2, "optional", "communication", "Communication Quality", None),
        ("Odd type", 2, "optional", "explicit", "Explicit Criteria", "n9"),
        ("The answer conveys: vital two", 5, "mandatory", "explicit", "Explicit Criteria",
         "n2")]
    with pytest.raises(ParseFailure):
        parse_rubric("I would write these criteria: none")


def test_rubrics_authored_from_the_2026_nuggets_at_the_emulator(tmp_path: Path) -> None:
    out = tmp_path / "rubrics.jsonl"
    argv = ["author-rubrics", "--nuggets", NUGGETS, "--topics", TOPICS, "--only-topics",
            "14,31,37", "--cache", tmp_path / "cache.sqlite"]
    with emulator(tmp_path) as server:
        cli_ok(*argv, "-o", out, "--assessor", "openai:emulated", "--base-url", server.url)
        assert [r["kind"] for r in server.requests()] == ["author"] * 3
        cli_ok(*argv, "-o", tmp_path / "again.jsonl", "--assessor", "openai:emulated",
               "--base-url", server.url)
        assert len(server.requests()) == 3  # the rerun from the cache
    source = {r["qid"]: r["nuggets"] for r in map(json.loads, NUGGETS.read_text().splitlines())}
    authored = lines(out)
    assert [r["qid"] for r in authored] == ["14", "31", "37"]
    for record in authored:
        vital = {f"n{k}" for k, n in enumerate(source[record["qid"]])
                 if n["importance"] == "vital"}
        mandatory = {c["source_nugget"] for c in record["rubrics"] if c["tier"] == "mandatory"}
        assert mandatory == vital  # every vital nugget covered, and only vital ones mandatory
        first = min(vital, key=lambda n: int(n[1:]))  # the one the emulator left out
        added = [c for c in record["rubrics"] if c["source_nugget"] == first]
        assert added[0]["criterion"] == \
            f"The answer conveys: {source[record['qid']][int(first[1:])]['text']}"
        assert {(c["tier"], c["weight"]) for c in record["rubrics"]} == \
            {("mandatory", 5), ("optional", 2)}
        assert record["provenance"]["config"]["authored_from"] == str(NUGGETS)
        assert "rubrics_author" in record["provenance"]["templates"]
    assert set(RubricsMethod().read_keys(out)) == {"14", "31", "37"}  # a key the method reads


def graded(run: str, qid: str, kind: str, mandatory: bool, weight: float, label: str
           ) -> Graded:
    return Graded(run, qid, kind, mandatory, weight, label)


def test_diagnostics_on_judgments_written_here() -> None:
    answers = [
        ("a", "1", [graded("a", "1", "explicit", True, 5, "satisfied"),
                    graded("a", "1", "explicit", True, 5, "partially_satisfied"),
                    graded("a", "1", "implicit", False, 2, "not_satisfied"),
                    graded("a", "1", "implicit", False, -3, "satisfied"),
                    graded("a", "1", "synthesis", False, 2, "unjudged")]),
        ("b", "1", [graded("b", "1", "explicit", True, 5, "partially_satisfied"),
                    graded("b", "1", "explicit", True, 5, "partially_satisfied"),
                    graded("b", "1", "implicit", False, 2, "satisfied"),
                    graded("b", "1", "implicit", False, -3, "not_satisfied")]),
        ("c", "1", [graded("c", "1", "explicit", True, 5, "satisfied"),
                    graded("c", "1", "explicit", True, 5, "not_satisfied"),
                    graded("c", "1", "implicit", False, 2, "satisfied"),
                    graded("c", "1", "implicit", False, -3, "not_satisfied")])]
    found = diagnose(answers)
    assert found.by_type == {"explicit": (6, 4), "implicit": (6, 2)}  # a failure mode shown
    assert found.mandatory == {"a": (1, 1, 1), "b": (1, 2, 1), "c": (1, 1, 1)}
    assert found.unjudged == 1
    # compliance by hand: positive weights 12; a: ternary (5 + 2.5 - 3) / 12, binary (5 - 3) / 12
    assert found.ternary == pytest.approx({"a": 4.5 / 12, "b": 7 / 12, "c": 7 / 12})
    assert found.binary == pytest.approx({"a": 2 / 12, "b": 2 / 12, "c": 7 / 12})
    assert found.tau == pytest.approx(kendall_tau([4.5, 7, 7], [2, 2, 7]))
    rows = {(t, n, m): v for t, n, m, v in found.rows()}
    assert rows[("type", "explicit", "failure_rate")] == pytest.approx(4 / 6)
    assert math.isnan(diagnose(answers[:1]).tau)


def rubric_runs(tmp_path: Path, qids: list[str]) -> list[Path]:
    """Two runs in the 2026 format answering ResearchRubrics prompts: one restates each
    prompt, the other says little."""
    prompts = dict(x.split("\t", 1) for x in (RAG26_DEV / "research-rubrics-topics-dev.tsv")
                   .read_text().splitlines())
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\t{prompts[q]}\n" for q in qids))
    paths = []
    for run_id, words in (("long", 60), ("short", 5)):
        path = run_2026(tmp_path / f"{run_id}.jsonl", run_id, {q: [] for q in qids})
        rows = lines(path)
        for row in rows:
            text = " ".join(prompts[row["metadata"]["narrative_id"]].split()[:words])
            row["answer"] = [{"text": text, "citations": []}]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(path)
    return paths


def test_diagnostics_of_the_research_rubrics_graded_ternary(tmp_path: Path) -> None:
    key = RAG26_DEV / "research-rubrics-dev-rubrics.jsonl"
    qids = [json.loads(x)["qid"] for x in key.read_text().splitlines()[:3]]
    runs = rubric_runs(tmp_path, qids)
    judged = tmp_path / "judged"
    cli_ok("assign", "--method", "rubrics", "--set", "grading=ternary", "--key", key,
           *[a for r in runs for a in ("--run", r)], "--assessor", "mock", "--no-cache",
           "-o", judged)
    out = tmp_path / "diagnostics.tsv"
    done = cli_ok("rubric-diagnostics", judged, "--key", key, "-o", out)
    rows = {tuple(x.split("\t")[:3]): x.split("\t")[3]
            for x in out.read_text().splitlines()[1:]}
    # the reference: the same counts from the judgment files and the key, by hand
    criteria = {q: k["rubrics"] for q, k in RubricsMethod().read_keys(key).items()}
    fails: dict[str, list[int]] = {}
    for path in sorted(judged.glob("*.jsonl")):
        for record in lines(path):
            for c in record["criteria"]:
                kind = {"Explicit Criteria": "explicit", "Implicit Criteria": "implicit",
                        "Synthesis of Information": "synthesis",
                        "References & Citation Quality": "references",
                        "Communication Quality": "communication",
                        "Instruction Following": "instruction"}.get(c["axis"], c["axis"])
                bad = c["label"] == "satisfied" if c["weight"] < 0 else \
                    c["label"] != "satisfied"
                fails.setdefault(kind, [0, 0])
                fails[kind][0] += 1
                fails[kind][1] += bad
    for kind, (total, bad) in fails.items():
        assert int(rows[("type", kind, "criteria")]) == total
        assert float(rows[("type", kind, "failure_rate")]) == pytest.approx(bad / total,
                                                                            abs=1e-4)
    assert rows[("runs", "ternary_vs_binary", "runs")] == "2"
    assert "Kendall tau" in done.output and len(criteria) >= 3


def test_battles_guided_by_an_authored_rubric(tmp_path: Path) -> None:
    out = tmp_path / "rubrics.jsonl"
    cli_ok("author-rubrics", "--nuggets", NUGGETS, "--topics", TOPICS, "--only-topics", "14,31",
           "-o", out, "--assessor", "mock", "--no-cache")
    method = BattlesMethod(BattlesConfig(rubrics=str(out)))
    a = Target(run_id="a", qid="14", sentences=[Sentence(text="First answer.")])
    b = Target(run_id="b", qid="14", sentences=[Sentence(text="Second answer.")])
    prompt = method.messages(Battle("14", "the narrative", a, b), "a")[-1][1]
    rubric = lines(out)[0]["rubrics"]
    first = rubric[0]
    assert f"[The Start of Rubric]\n1. [tier={first['tier']}, weight={first['weight']}, " \
        f"criterion_type={first['type']}] {first['criterion']}\n" in prompt
    assert f"{len(rubric)}. [" in prompt and "do not treat it as a rigid checklist" in prompt
    plain = BattlesMethod().messages(Battle("14", "the narrative", a, b), "a")[-1][1]
    assert "Rubric" not in plain
    with pytest.raises(Exception, match="topic '37' has no rubric"):
        method.messages(Battle("37", "n", a, b), "a")
    (tmp_path / "topics.tsv").write_text(TOPICS.read_text())
    runs = [run_2026(tmp_path / f"{r}.jsonl", r, {"14": [], "31": []}) for r in ("x", "y")]
    with emulator(tmp_path) as server:
        cli_ok("battles", *[a for r in runs for a in ("--run", r)], "--set",
               f"rubrics={out}", "--assessor", "openai:emulated", "--base-url", server.url,
               "--no-cache", "-o", tmp_path / "battles")
        assert {r["kind"] for r in server.requests()} == {"battle"}
    judged = lines(tmp_path / "battles" / "battles.jsonl")
    assert len(judged) == 2
    assert judged[0]["provenance"]["config"]["rubrics"] == str(out)
    assert len(judged[0]["provenance"]["config"]["rubrics_sha256"]) == 64
