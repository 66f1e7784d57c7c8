"""Rubric scoring (ResearchRubrics): the compliance formula on hand-made gradings, negative
weights included; the verdict parser and its closed menu; the method end to end through the
CLI with the mock backend on the real dev rubrics; rubric sheets out and back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import scripted
from click.testing import CliRunner, Result
from shared_data import RAG26_DEV

from nuggetizer.assessors import make_assessor
from nuggetizer.cli import cli
from nuggetizer.interface import Target, make_method
from nuggetizer.measures import compliance
from nuggetizer.methods.rubrics import parse_verdict
from nuggetizer.parsing import ParseFailure

RUBRICS = RAG26_DEV / "research-rubrics-dev-rubrics.jsonl"

# A hand-made topic: four rewarded criteria and two failure modes.
KEY = {"qid": "t1", "rubrics": [
    {"criterion": "Names the three causes.", "weight": 5.0, "axis": "Explicit Criteria"},
    {"criterion": "Compares the two periods.", "weight": 4.0, "axis": "Synthesis of Information"},
    {"criterion": "Defines each acronym.", "weight": 2.0, "axis": "Communication Quality"},
    {"criterion": "Cites a primary source.", "weight": 1.0,
     "axis": "References & Citation Quality"},
    {"criterion": "Gives a wrong date for the treaty.", "weight": -3.0,
     "axis": "Implicit Criteria"},
    {"criterion": "Repeats the question verbatim.", "weight": -2.0,
     "axis": "Communication Quality"},
]}
GRADINGS = {  # run -> labels of the six criteria, in order
    "good": ["satisfied", "satisfied", "not_satisfied", "satisfied", "not_satisfied",
             "not_satisfied"],
    "flawed": ["satisfied", "not_satisfied", "satisfied", "not_satisfied", "satisfied",
               "satisfied"],
    "partly": ["satisfied", "unjudged", "not_satisfied", "unjudged", "satisfied",
               "not_satisfied"],
}
# By hand: Σ(weight × grade) / Σ(positive weights), Satisfied 1, Not Satisfied 0; the
# denominator's positive weights are those of the judged criteria.
#   good:   (5 + 4 + 0 + 1 + 0 + 0) / (5 + 4 + 2 + 1)        = 10 / 12
#   flawed: (5 + 0 + 2 + 0 - 3 - 2) / (5 + 4 + 2 + 1)        =  2 / 12
#   partly: (5 + 0 - 3 + 0) / (5 + 2)  [criteria 2, 4 unjudged] = 2 / 7
BY_HAND = {"good": 10 / 12, "flawed": 2 / 12, "partly": 2 / 7}


def judgment(run_id: str, labels: list[str]) -> dict[str, Any]:
    criteria = [{**c, "label": label} for c, label in zip(KEY["rubrics"], labels, strict=True)]
    return {"run_id": run_id, "qid": "t1", "answer_text": f"answer of {run_id}",
            "criteria": criteria, "unjudged": labels.count("unjudged")}


def run_cli(*args: object) -> Result:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def per_topic(path: Path) -> dict[tuple[str, str], float]:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    return {(r[0], r[1]): float(r[3]) for r in rows if r[2] == "compliance"}


def test_compliance_by_hand_negative_weights_included() -> None:
    method = make_method("rubrics")
    for run_id, labels in GRADINGS.items():
        weights = [c["weight"] for c in KEY["rubrics"]]
        assert compliance(zip(weights, labels)) == pytest.approx(BY_HAND[run_id])
        assert method.score(KEY, judgment(run_id, labels), [])["compliance"] == \
            pytest.approx(BY_HAND[run_id])
    # only failure modes shown, nothing rewarded: (0+0+0+0-3-2) / 12, below zero
    worst = ["not_satisfied"] * 4 + ["satisfied"] * 2
    assert compliance(zip([c["weight"] for c in KEY["rubrics"]], worst)) == \
        pytest.approx(-5 / 12)


def test_hand_gradings_scored_through_the_cli(tmp_path: Path) -> None:
    """The same gradings as judgment files, scored by `score` against a rubrics key file."""
    key, judged, board = tmp_path / "key.jsonl", tmp_path / "judged", tmp_path / "board.tsv"
    key.write_text(json.dumps(KEY) + "\n")
    judged.mkdir()
    for run_id, labels in GRADINGS.items():
        (judged / f"{run_id}.jsonl").write_text(json.dumps(judgment(run_id, labels)) + "\n")
    result = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o", board,
                     "--per-topic", tmp_path / "pt.tsv")
    assert result.exit_code == 0, result.output
    rows = per_topic(tmp_path / "pt.tsv")
    for run_id, value in BY_HAND.items():
        assert rows[(run_id, "t1")] == pytest.approx(value, abs=1e-4)
    assert "2 unjudged (left out: 2 criteria)" in result.output


def test_every_criterion_unjudged_is_no_score(tmp_path: Path) -> None:
    method = make_method("rubrics")
    record = judgment("none", ["unjudged"] * 6)
    assert method.nothing_judged(record) == "answer"
    assert method.nothing_judged(judgment("good", GRADINGS["good"])) is None


@pytest.mark.parametrize(("text", "label"), [
    ('{"verdict": "Satisfied"}', "satisfied"), ('{"verdict": "Not Satisfied"}', "not_satisfied"),
    ("Verdict: not satisfied.", "not_satisfied"), ("SATISFIED", "satisfied"),
    ('{"verdict": "unsatisfied"}', "not_satisfied")])
def test_verdicts_parse(text: str, label: str) -> None:
    assert parse_verdict(text) == label


@pytest.mark.parametrize("text", ['{"verdict": "Partially"}', "I cannot tell.", ""])
def test_off_menu_verdicts_do_not_parse(text: str) -> None:
    with pytest.raises(ParseFailure):
        parse_verdict(text)


def judged_by(method: Any, script: str) -> Any:
    """The method's judgment of one answer on KEY by the scripted judge `script`."""
    assessor = make_assessor(f"scripted:{script}", cache=None)

    async def go() -> Any:
        try:
            return await method.judge(assessor, KEY, Target(run_id="r", qid="t1", answer="a"))
        finally:
            await assessor.aclose()

    return asyncio.run(go())


def test_off_menu_answers_are_unjudged_and_counted() -> None:
    """A model that grades failure modes but rambles on the rest: those stay unjudged (raw
    kept), and the score is over the judged criteria only."""
    scripted.SCRIPTS["rubrics-half"] = scripted.by_prompt(
        lambda prompt: '{"verdict": "Satisfied"}' if "Weight: -" in prompt else "Hmm.")
    method = make_method("rubrics", {"reasks": 0})
    outcome = judged_by(method, "rubrics-half")
    labels = [c["label"] for c in outcome.record["criteria"]]
    assert labels == ["unjudged"] * 4 + ["satisfied"] * 2 and outcome.unjudged == 4
    assert all("raw" in c for c in outcome.record["criteria"][:4])
    # judged: the two failure modes only, no positive weight judged -> the release's 0.0
    assert method.score(KEY, outcome.record, [])["compliance"] == 0.0


def write_run(path: Path, qids: list[str]) -> None:
    """A RAG 2024-format answer run over `qids`."""
    lines = [{"run_id": "rr-run", "topic_id": qid, "topic": "t", "references": [],
              "response_length": 14, "answer": [
                  {"text": "Olympiad geometry leans on cyclic quadrilaterals and Ptolemy's "
                           "theorem.", "citations": []},
                  {"text": "School courses prove triangle congruence (SSS, SAS).",
                   "citations": []}]} for qid in qids]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_assign_and_score_with_the_mock_backend_on_the_dev_rubrics(tmp_path: Path) -> None:
    keys = [json.loads(x) for x in RUBRICS.read_text().splitlines()]
    qids = [k["qid"] for k in keys[:2]]
    run, judged = tmp_path / "run.jsonl", tmp_path / "judged"
    write_run(run, qids)
    made = run_cli("assign", "--method", "rubrics", "--key", RUBRICS, "--run", run, "-o",
                   judged, "--assessor", "mock", "--no-cache")
    assert made.exit_code == 0, made.output
    calls = sum(len(k["rubrics"]) for k in keys[:2])
    assert f"assign --method rubrics: 2 answers, {calls} calls" in made.output
    records = {r["qid"]: r for r in map(json.loads,
                                        (judged / "rr-run.jsonl").read_text().splitlines())}
    assert set(records) == set(qids)
    for key in keys[:2]:
        got = records[key["qid"]]["criteria"]
        assert [(c["criterion"], c["weight"]) for c in got] == \
            [(c["criterion"], c["weight"]) for c in key["rubrics"]]
        assert {c["label"] for c in got} <= {"satisfied", "not_satisfied"}
    assert any(c["weight"] < 0 for k in keys[:2] for c in k["rubrics"])
    scored = run_cli("score", "--method", "rubrics", "--key", RUBRICS, judged, "-o",
                     tmp_path / "board.tsv", "--per-topic", tmp_path / "pt.tsv")
    assert scored.exit_code == 0, scored.output
    rows = per_topic(tmp_path / "pt.tsv")
    for qid, record in records.items():  # the formula again, from the judgment file
        crit = record["criteria"]
        expected = sum(c["weight"] for c in crit if c["label"] == "satisfied") / \
            sum(c["weight"] for c in crit if c["weight"] > 0)
        assert rows[("rr-run", qid)] == pytest.approx(expected, abs=1e-4)
    assert f"{len(keys) - 2} unanswered (scored 0)" in scored.output


def test_rubric_sheets_round_trip(tmp_path: Path) -> None:
    """Judgments -> sheets -> (blank ones filled in) -> judgments: the same labels, scored the
    same; blank sheets from --run carry the key's criteria; a tampered weight is refused."""
    key, judged = tmp_path / "key.jsonl", tmp_path / "judged"
    key.write_text(json.dumps(KEY) + "\n")
    judged.mkdir()
    for run_id, labels in GRADINGS.items():
        (judged / f"{run_id}.jsonl").write_text(json.dumps(judgment(run_id, labels)) + "\n")
    sheets, back = tmp_path / "sheets", tmp_path / "back"
    out = run_cli("export-sheets", "--method", "rubrics", "--assessments", judged, "-o", sheets)
    assert out.exit_code == 0, out.output
    (sheet,) = sheets.iterdir()
    text = sheet.read_text()
    assert "\t-3\tImplicit Criteria\tGives a wrong date for the treaty.\t" in text
    blank = run_cli("import-sheets", "--method", "rubrics", "--key", key, sheet, "-o", back)
    assert blank.exit_code == 2 and "column label is empty" in blank.output
    done = run_cli("import-sheets", "--method", "rubrics", "--key", key, "--allow-blank", sheet,
                   "-o", back)
    assert done.exit_code == 0, done.output
    for run_id, labels in GRADINGS.items():
        (record,) = map(json.loads, (back / f"{run_id}.jsonl").read_text().splitlines())
        assert [c["label"] for c in record["criteria"]] == labels
        assert [c["weight"] for c in record["criteria"]] == \
            [c["weight"] for c in KEY["rubrics"]]
    scored = run_cli("score", "--method", "rubrics", "--key", key, back, "-o",
                     tmp_path / "b.tsv", "--per-topic", tmp_path / "pt.tsv")
    assert scored.exit_code == 0, scored.output
    rows = per_topic(tmp_path / "pt.tsv")
    assert all(rows[(r, "t1")] == pytest.approx(v, abs=1e-4) for r, v in BY_HAND.items())
    sheet.write_text(text.replace("\t-3\t", "\t-1\t"))
    tampered = run_cli("import-sheets", "--method", "rubrics", "--key", key, "--allow-blank",
                       sheet, "-o", tmp_path / "t")
    assert tampered.exit_code == 2 and "differs from the rubrics file" in tampered.output


def test_blank_sheets_from_a_run_filled_by_hand(tmp_path: Path) -> None:
    key, run, sheets = tmp_path / "key.jsonl", tmp_path / "run.jsonl", tmp_path / "sheets"
    key.write_text(json.dumps(KEY) + "\n")
    write_run(run, ["t1"])
    out = run_cli("export-sheets", "--method", "rubrics", "--run", run, "--key", key, "-o",
                  sheets)
    assert out.exit_code == 0, out.output
    (sheet,) = sheets.iterdir()
    lines = sheet.read_text().splitlines()
    filled = [line + ("S" if line.startswith("criterion") and "\t-" not in line else "NS")
              if line.startswith("criterion") else line for line in lines]
    sheet.write_text("\n".join(filled) + "\n")
    back = tmp_path / "back"
    done = run_cli("import-sheets", "--method", "rubrics", "--key", key, sheet, "-o", back)
    assert done.exit_code == 0, done.output
    (record,) = map(json.loads, (back / "rr-run.jsonl").read_text().splitlines())
    assert make_method("rubrics").score(KEY, record, [])["compliance"] == pytest.approx(1.0)


def test_bad_rubrics_and_nuggetize_refused(tmp_path: Path) -> None:
    bad, run = tmp_path / "bad.jsonl", tmp_path / "run.jsonl"
    bad.write_text(json.dumps({"qid": "t1", "rubrics": [{"criterion": "c", "axis": "a"}]})
                   + "\n")
    write_run(run, ["t1"])
    result = run_cli("assign", "--method", "rubrics", "--key", bad, "--run", run, "-o",
                     tmp_path / "j", "--assessor", "mock", "--no-cache")
    assert result.exit_code == 2
    assert f"{bad}:1" in result.output
    assert "missing field 'rubrics[0].weight' (expected number)" in result.output
    assert not (tmp_path / "j").exists()
    topics = RAG26_DEV / "research-rubrics-topics-dev.tsv"
    refused = run_cli("nuggetize", "--method", "rubrics", "--topics", topics, "-o",
                      tmp_path / "k.jsonl", "--assessor", "mock", "--no-cache")
    assert refused.exit_code == 2 and "pass the rubrics file" in refused.output
    assert not (tmp_path / "k.jsonl").exists()


def test_ternary_grading_as_the_release_scores_it() -> None:
    """calculate_final_score.py's map: Satisfied 1, Partially Satisfied 0.5, Not Satisfied 0,
    over the positive weights; its binary mode reads Partially Satisfied as Not Satisfied."""
    weights = [c["weight"] for c in KEY["rubrics"]]
    labels = ["satisfied", "partially_satisfied", "partially_satisfied", "not_satisfied",
              "satisfied", "not_satisfied"]
    numerator = sum(w * {"satisfied": 1.0, "partially_satisfied": 0.5}.get(label, 0.0)
                    for w, label in zip(weights, labels))
    positive = sum(w for w in weights if w > 0)
    assert compliance(zip(weights, labels), "ternary") == pytest.approx(numerator / positive)
    binary = sum(w for w, label in zip(weights, labels) if label == "satisfied")
    assert compliance(zip(weights, labels)) == pytest.approx(binary / positive)
    ternary = make_method("rubrics", {"grading": "ternary"})
    assert ternary.score(KEY, judgment("r", labels), [])["compliance"] == \
        pytest.approx(numerator / positive)


def test_ternary_verdicts_and_prompt() -> None:
    assert parse_verdict('{"verdict": "Partially Satisfied"}', "ternary") == \
        "partially_satisfied"
    assert parse_verdict("partially satisfied", "ternary") == "partially_satisfied"
    with pytest.raises(ParseFailure):  # off the binary menu
        parse_verdict('{"verdict": "Partially Satisfied"}')
    prompt = make_method("rubrics").prompt("rubrics_grade")
    args = {"document": "d", "criterion": "c", "axis": "a", "weight": 1}
    binary = prompt.render(**args, ternary=False)[-1][1]
    ternary = prompt.render(**args, ternary=True)[-1][1]
    assert "Partially Satisfied" not in binary and "binary scale" in binary
    assert ternary.count("Partially Satisfied") == 2 and "ternary scale" in ternary
    with pytest.raises(Exception, match="grading"):
        make_method("rubrics", {"grading": "quaternary"})


def test_ternary_assign_sends_the_three_level_menu(tmp_path: Path) -> None:
    """assign --set grading=ternary: every request's schema offers the three verdicts; a
    Partially Satisfied answer is recorded and scored half."""
    seen: list[str] = []

    def answer(prompt: str) -> str:
        seen.append(prompt)
        return '{"verdict": "Partially Satisfied"}'

    scripted.SCRIPTS["rubrics-ternary"] = scripted.by_prompt(answer)
    method = make_method("rubrics", {"grading": "ternary"})
    outcome = judged_by(method, "rubrics-ternary")
    assert len(seen) == len(KEY["rubrics"]) and all("Partially Satisfied" in p for p in seen)
    assert {c["label"] for c in outcome.record["criteria"]} == {"partially_satisfied"}
    weights = [c["weight"] for c in KEY["rubrics"]]
    assert method.score(KEY, outcome.record, [])["compliance"] == pytest.approx(
        0.5 * sum(weights) / sum(w for w in weights if w > 0))
