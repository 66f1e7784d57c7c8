"""Ensembles: three scripted judges with known disagreements give the declared aggregate (per
rule), keep every vote in the records, and count and list the items they disagree on; free
text comes from the first judge alone; repeated samples of one judge have cache keys of their
own (sample 0 keeps a single judge's); the command line refuses what an ensemble cannot do."""

from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scripted import SCRIPTS, by_prompt

from nuggetizer.assessors import (
    Ensemble,
    closed_answer,
    combine,
    combine_scalar,
    inline,
    make_assessor,
)
from nuggetizer.cache import Cache
from nuggetizer.cli import cli
from nuggetizer.formats import read_corpus
from nuggetizer.interface import KeyInput, Target, make_method
from nuggetizer.parsing import labels_schema, parse_labels, strings_schema
from nuggetizer.relevance import GRADE_SCHEMA
from nuggetizer.run import build_keys, judge_targets
from nuggetizer.types import Segment

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
TOPICS, CORPUS = SAMPLE / "topics.tsv", SAMPLE / "corpus.jsonl"
RUNS = sorted((REPO / "runs" / "sample").glob("*.jsonl"))
RULES = {"labels": "majority", "grades": "median"}


def test_the_rules_and_their_tie_breaks() -> None:
    assert combine_scalar(["support", "not_support", "support"], "majority") == "support"
    # a tie goes to the lower-credit label, whatever the order of the votes
    assert combine_scalar(["support", "partial_support", "not_support"], "majority") == \
        "not_support"
    assert combine_scalar(["vital", "okay"], "majority") == "okay"
    assert combine_scalar([True, False], "majority") is False
    assert combine_scalar([3, 0, 1], "majority") == 0  # umbrela's rule: mode, ties lowest
    assert combine_scalar([3, 0, 1], "median") == 1
    assert combine_scalar([3, 2], "median") == 2  # even: the lower median
    assert combine_scalar([3, 0, 1], "mean") == 1  # 4/3
    assert combine_scalar([1, 2], "mean") == 1  # 1.5: a half rounds down
    assert combine_scalar([2, 3, 3], "mean") == 3  # 8/3
    assert combine_scalar(["support", "not_support"], "mean") == "partial_support"
    assert combine_scalar(["yes", "neutral", "no"], "median") == "neutral"
    value, disagree = combine([["support", "okay"], ["support", "vital"],
                               ["not_support", "vital"]], RULES)
    assert value == ["support", "vital"] and disagree == [True, True]
    value, disagree = combine([[1, 2], [1, 2, 3]], RULES)  # cannot be lined up
    assert value == [1, 2] and disagree == [True, True]
    assert combine([{"a": 1}, {"a": 2}], RULES) == ({"a": 1}, [True])
    with pytest.raises(ValueError, match="unknown aggregation"):
        combine_scalar([1], "mode")


def test_only_closed_answers_are_voted_on() -> None:
    assert closed_answer(labels_schema(["support", "not_support"], 3))
    assert closed_answer(GRADE_SCHEMA)
    assert closed_answer({"type": "object", "properties": {"rating": {"type": "integer"}}})
    assert not closed_answer(strings_schema(30, min_items=1, max_length=120))
    assert not closed_answer(None) and not closed_answer({"type": "object"})


# --- three judges grading the sample pool ------------------------------------------------------

def passage_of(prompt: str) -> str:
    return prompt.split("\nPassage: ", 1)[1].split("\n", 1)[0]


def votes_for(passage: str) -> tuple[int | None, ...]:
    """The three judges' grades of a passage (None: an answer without a grade), by a
    category the passage's hash picks: all agree; two agree; all differ; one without a grade;
    none with one."""
    digest = hashlib.sha256(passage.encode()).digest()
    grade, category = digest[0] % 4, digest[1] % 5
    return [(grade, grade, grade), (grade, grade, (grade + 1) % 4), (0, 1, 3), (2, 3, None),
            (None, None, None)][category]


def judge(index: int) -> object:
    def answer(prompt: str) -> str:
        grade = votes_for(passage_of(prompt))[index]
        return "I cannot say." if grade is None else f"##final score: {grade}"
    return by_prompt(answer)


for _i in range(3):
    SCRIPTS[f"judge{_i}"] = judge(_i)


def expected(votes: tuple[int | None, ...], rule: str) -> int | None:
    """The aggregate by the rule, computed apart from the code under test."""
    given = [v for v in votes if v is not None]
    if not given:
        return None
    if rule == "median":
        return statistics.median_low(given)
    if rule == "mean":
        mean = statistics.fmean(given)
        return int(mean) + (1 if mean - int(mean) > 0.5 else 0)
    counts = Counter(given)
    return min(v for v in counts if counts[v] == max(counts.values()))


def relevance(tmp_path: Path, *extra: str) -> tuple[object, Path]:
    out = tmp_path / "ensemble.qrels"
    args = ["relevance", "--topics", str(TOPICS), *[x for r in RUNS for x in ("--run", str(r))],
            "--corpus", str(CORPUS), "-o", str(out), "--no-cache", "--reasks", "0",
            *[x for i in range(3) for x in ("--assessor", f"scripted:judge{i}")], *extra]
    return CliRunner().invoke(cli, args), out


@pytest.mark.parametrize("rule", ["median", "majority", "mean"])
def test_three_judges_grade_by_the_declared_rule(tmp_path: Path, rule: str) -> None:
    result, out = relevance(tmp_path, *(["--aggregate", rule] if rule != "median" else []))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in
               (tmp_path / "ensemble.qrels.judgments.jsonl").read_text().splitlines()]
    texts = read_corpus(CORPUS, {r["docid"] for r in records})
    votes = {(r["qid"], r["docid"]): votes_for(inline(texts[r["docid"]].text))
             for r in records}
    assert {v for v in votes.values()} >= {(0, 1, 3), (2, 3, None), (None, None, None)}
    grades = {(q, d): int(g) for q, _, d, g in
              (line.split() for line in out.read_text().splitlines())}
    assert grades == {k: expected(v, rule) for k, v in votes.items()
                      if expected(v, rule) is not None}
    disagreeing = set()
    for record in records:
        key, mine = (record["qid"], record["docid"]), votes[record["qid"], record["docid"]]
        (call,) = record["ensemble"]["calls"]
        assert [v["value"] for v in call["votes"]] == list(mine)
        assert [v["assessor"] for v in call["votes"]] == [f"scripted:judge{i}" for i in range(3)]
        assert call["missing"] == mine.count(None)
        assert record["grade"] == expected(mine, rule) == call["value"]
        if len({v for v in mine if v is not None}) > 1:
            disagreeing.add(key)
        assert call["disagreement"] == ([key in disagreeing] if call["value"] is not None
                                        else [])
        assert record["ensemble"]["disagreements"] == (key in disagreeing)
    voted = sum(1 for v in votes.values() if any(x is not None for x in v))
    assert f"the judges disagree on {len(disagreeing)} of {voted} items" in result.output
    unjudged = sum(1 for v in votes.values() if all(x is None for x in v))
    assert f"{unjudged} unjudged" in result.output
    listed = (tmp_path / "ensemble.qrels.disagreements.tsv").read_text().splitlines()
    assert listed[0].split("\t") == ["run_id", "qid", "docid", "call", "item", "aggregate",
                                     "votes"]
    assert {(row.split("\t")[1], row.split("\t")[2]) for row in listed[1:]} == disagreeing
    stamp = records[0]["provenance"]
    assert stamp["assessor"] == "ensemble:" + "+".join(f"scripted:judge{i}" for i in range(3))
    assert [m["assessor"] for m in stamp["ensemble"]["members"]] == [
        f"scripted:judge{i}" for i in range(3)]
    assert stamp["ensemble"]["aggregate"]["grades"] == rule


def test_a_dry_run_counts_every_judge(tmp_path: Path) -> None:
    result, out = relevance(tmp_path, "--dry-run", "--tokenizer", "chars")
    assert result.exit_code == 0, result.output
    assert "(26 pooled pairs of 4 topics): 78 calls to make" in result.output  # 3 judges
    assert not out.exists()


# --- three judges assigning nuggets, listwise ----------------------------------------------------

ASSIGNED = (["support", "not_support", "partial_support"],
            ["support", "partial_support", "partial_support"],
            ["not_support", "support", "partial_support"])
NUGGETS = ["Slepian was killed", "Kopp is sought", "clinics saw violence"]


def nugget_judge(index: int) -> object:
    def answer(prompt: str) -> str:
        if "Updated Nugget List" in prompt:
            return json.dumps(NUGGETS)
        if "vital or okay" in prompt:
            return json.dumps([["vital", "okay", "okay"], ["vital", "vital", "okay"],
                               ["okay", "vital", "okay"]][index])
        return json.dumps(ASSIGNED[index])
    return by_prompt(answer)


for _i in range(3):
    SCRIPTS[f"nuggeteer{_i}"] = nugget_judge(_i)


def trio(cache: Cache | None = None, samples: int = 1) -> Ensemble:
    return Ensemble([make_assessor(f"scripted:nuggeteer{i}", cache=cache) for i in range(3)],
                    samples=samples)


def test_listwise_labels_are_voted_per_nugget_and_creation_is_the_first_judges(
        tmp_path: Path) -> None:
    method = make_method("nuggets")
    ensemble = trio()
    item = KeyInput(qid="t1", query="who shot Slepian?",
                    documents=[Segment(id="d1", text="Slepian was shot by Kopp.")])
    built = asyncio.run(build_keys(method, [item], ensemble, tmp_path / "nuggets.jsonl"))
    (key,) = [json.loads(line) for line in (tmp_path / "nuggets.jsonl").read_text().splitlines()]
    creation = [[r for r in m.backend.requests if "Updated Nugget List" in r.messages[-1][1]]
                for m in ensemble.members]
    assert len(creation[0]) == 1 and creation[1] == creation[2] == []
    # importance votes: vital/vital/okay -> vital; okay/vital/vital -> vital; okay x3 -> okay
    assert [(n["text"], n["importance"]) for n in key["nuggets"]] == [
        ("Slepian was killed", "vital"), ("Kopp is sought", "vital"),
        ("clinics saw violence", "okay")]
    assert key["ensemble"]["items"] == 3 and key["ensemble"]["disagreements"] == 2
    assert built.voted == 3 and built.disagreements == 2

    keys = method.read_keys(tmp_path / "nuggets.jsonl", False)
    target = Target(run_id="run-a", qid="t1", answer="Kopp shot Slepian.", length=3)
    judged = asyncio.run(judge_targets(method, keys, {"run-a": {"t1": target}}, ensemble,
                                       tmp_path / "judged"))
    (record,) = [json.loads(line) for line in
                 (tmp_path / "judged" / "run-a.jsonl").read_text().splitlines()]
    # per position: support 2 of 3; a three-way tie -> the lowest credit; all partial
    assert [n["assignment"] for n in record["nuggets"]] == ["support", "not_support",
                                                           "partial_support"]
    (call,) = record["ensemble"]["calls"]
    assert [v["value"] for v in call["votes"]] == [list(a) for a in ASSIGNED]
    assert call["disagreement"] == [True, True, False]
    assert judged.voted == 3 and judged.disagreements == 2
    rows = [r.split("\t") for r in
            (tmp_path / "judged" / "disagreements.tsv").read_text().splitlines()[1:]]
    assert [(r[0], r[1], r[4], r[5]) for r in rows] == [("run-a", "t1", "0", "support"),
                                                        ("run-a", "t1", "1", "not_support")]
    assert "scripted:nuggeteer2#0=support" in rows[1][6]


def test_samples_of_one_judge_have_keys_of_their_own(tmp_path: Path) -> None:
    answers = {None: '["support"]', 1: '["not_support"]', 2: '["not_support"]'}
    SCRIPTS["sampled"] = lambda request: answers[request.seed]
    cache = Cache(tmp_path / "cache.sqlite")
    messages = [("user", "Does the answer support the nugget?")]
    schema = labels_schema(["support", "not_support"], 1)

    def ask(assessor: Any) -> Any:
        return asyncio.run(assessor.ask(
            messages, lambda t: parse_labels(t, ["support", "not_support"], 1), schema=schema))

    single = make_assessor("scripted:sampled", cache=cache)
    assert ask(single).value == ["support"] and single.backend.calls == 1
    sampled = Ensemble([make_assessor("scripted:sampled", cache=cache)], samples=3)
    assert ask(sampled).value == ["not_support"]
    member = sampled.members[0]
    assert [r.seed for r in member.backend.requests] == [1, 2]  # sample 0 replayed
    assert member.stats.cache_hits == 1 and sampled.stats.calls == 2
    again = Ensemble([make_assessor("scripted:sampled", cache=cache)], samples=3)
    assert ask(again).value == ["not_support"] and again.members[0].backend.calls == 0


def test_what_an_ensemble_cannot_do_is_refused(tmp_path: Path) -> None:
    twice = CliRunner().invoke(cli, ["relevance", "--topics", str(TOPICS), "--run", str(RUNS[0]),
                                     "--corpus", str(CORPUS), "-o", str(tmp_path / "q"),
                                     "--assessor", "scripted:judge0", "--assessor",
                                     "scripted:judge0"])
    assert twice.exit_code == 2 and "--samples" in twice.output
    batch = CliRunner().invoke(cli, ["relevance", "--topics", str(TOPICS), "--run", str(RUNS[0]),
                                     "--corpus", str(CORPUS), "-o", str(tmp_path / "q"),
                                     "--assessor", "scripted:judge0", "--samples", "2",
                                     "--batch-api"])
    assert batch.exit_code == 2 and "--batch-api" in batch.output
    assert not (tmp_path / "q").exists()
    track = tmp_path / "track.toml"
    track.write_text(f'name = "t"\ntopics = "{TOPICS}"\nqrels = "{REPO / "qrels" / "sample.qrels"}"'
                     f'\ncorpus = "{CORPUS}"\nassessor = "local"\nassessors = ["openai:a"]\n')
    both = CliRunner().invoke(cli, ["evaluate", "--track", str(track), "-o", str(tmp_path / "o")])
    assert both.exit_code == 2 and "not both" in both.output


def test_a_track_judges_with_its_ensemble(tmp_path: Path) -> None:
    track = tmp_path / "track.toml"
    sample = (SAMPLE / "track.toml").read_text()
    body = sample.split("[nuggets]")[0].replace('"topics.tsv"', f'"{TOPICS}"').replace(
        '"corpus.jsonl"', f'"{CORPUS}"').replace("../../", f"{REPO}/")
    track.write_text(body + 'assessors = ["scripted:nuggeteer0", "scripted:nuggeteer1", '
                     '"scripted:nuggeteer2"]\naggregate = "majority"\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["evaluate", "--track", str(track), "-o", str(out),
                                      "--no-cache"])
    assert result.exit_code == 0, result.output
    judged = [json.loads(line) for f in sorted((out / "assessments").glob("*.jsonl"))
              for line in f.read_text().splitlines()]
    assert judged and all(r["ensemble"]["disagreements"] == 2 for r in judged)
    assert all([n["assignment"] for n in r["nuggets"]] == ["support", "not_support",
                                                           "partial_support"] for r in judged)
    stamp = judged[0]["provenance"]
    assert stamp["assessor"].startswith("ensemble:scripted:nuggeteer0+")
    assert stamp["ensemble"]["aggregate"] == {"labels": "majority", "grades": "majority"}
    assert f"the judges disagree on {2 * len(judged)} of {3 * len(judged)} items" \
        in result.output
    assert (out / "assessments" / "disagreements.tsv").is_file()
    assert (out / "nuggets.jsonl.disagreements.tsv").is_file()
