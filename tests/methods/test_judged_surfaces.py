"""Nothing lost, nothing silent (issue 28), on inputs written here: rubric keys checked as
strictly as sheets (an empty criterion refused, a topic without criteria left out and counted,
a key changed since judging named at scoring); an ensemble's summary naming the judge whose
votes are missing; the Python API refusing wrong arguments at the door with the toolkit's own
error, and its assessors closing as context managers; battles between runs with no topic in
common refused, and their summary counting battles and presentation orders apart."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import scripted
from click.testing import CliRunner, Result

from nuggetizer import api
from nuggetizer.assessors import Ensemble, PermanentError, make_assessor
from nuggetizer.cli import cli
from nuggetizer.errors import ArgumentError, AssessorError, NuggetizerError

KEY = {"qid": "t1", "rubrics": [
    {"criterion": "Names the three causes.", "weight": 5.0, "axis": "Explicit Criteria"},
    {"criterion": "Compares the two periods.", "weight": 4.0, "axis": "Synthesis"},
    {"criterion": "Defines each acronym.", "weight": 2.0, "axis": "Communication"},
    {"criterion": "Gives a wrong date.", "weight": -3.0, "axis": "Implicit Criteria"},
]}
EMPTY = {"qid": "t2", "rubrics": []}

scripted.SCRIPTS["satisfied"] = scripted.by_prompt(lambda _: '{"verdict": "Satisfied"}')
scripted.SCRIPTS["satisfied-too"] = scripted.by_prompt(lambda _: '{"verdict": "Satisfied"}')
scripted.SCRIPTS["rambler"] = scripted.by_prompt(lambda _: "Well, it depends on the reader.")


def run_cli(*args: object) -> Result:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def answer(run_id: str, qid: str) -> dict[str, Any]:
    """One answer of a TREC RAG 2024-format run."""
    return {"run_id": run_id, "topic_id": qid, "topic": f"what happened in {qid}?",
            "references": [], "response_length": 9,
            "answer": [{"text": f"{run_id} says three causes led to {qid}.", "citations": []}]}


def write_run(path: Path, run_id: str, qids: list[str]) -> Path:
    return write_jsonl(path, [answer(run_id, q) for q in qids])


def error_line(result: Result) -> str:
    """The one line of a refused command."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def judged_lines(folder: Path, run_id: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (folder / f"{run_id}.jsonl").read_text().splitlines()]


# --- rubric keys -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_an_empty_criterion_is_refused_before_anything_is_judged(tmp_path: Path,
                                                                 text: str) -> None:
    bad = dict(KEY, rubrics=[*KEY["rubrics"][:2], dict(KEY["rubrics"][2], criterion=text)])
    key = write_jsonl(tmp_path / "key.jsonl", [bad])
    run = write_run(tmp_path / "run.jsonl", "r1", ["t1"])
    result = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o",
                     tmp_path / "judged", "--assessor", "mock", "--no-cache")
    assert result.exit_code == 2
    line = error_line(result)
    assert line == (f"error: {key}:1: field 'rubrics[2].criterion' is empty: write what the "
                    "answer is graded on, or remove the criterion")
    assert not (tmp_path / "judged").exists()
    scored = run_cli("score", "--method", "rubrics", "--key", key, tmp_path, "-o",
                     tmp_path / "board.tsv")
    assert scored.exit_code == 2 and "rubrics[2].criterion" in error_line(scored)
    assert not (tmp_path / "board.tsv").exists()


def test_an_empty_criterion_on_a_sheet_is_refused_as_empty(tmp_path: Path) -> None:
    """As in a key: a criterion row whose text was cleared is refused as empty, the line
    named."""
    key, judged = judge_key(tmp_path)
    sheets = tmp_path / "sheets"
    out = run_cli("export-sheets", "--method", "rubrics", "--assessments", judged, "-o", sheets)
    assert out.exit_code == 0, out.output
    (sheet,) = sheets.iterdir()
    lines = sheet.read_text().splitlines()
    number = next(n for n, line in enumerate(lines, 1) if "Defines each acronym." in line)
    sheet.write_text(sheet.read_text().replace("Defines each acronym.", " "))
    back = run_cli("import-sheets", "--method", "rubrics", "--key", key, sheet, "-o",
                   tmp_path / "back")
    assert back.exit_code == 2
    assert error_line(back) == (f"error: {sheet}:{number}: column text (the criterion) is "
                                "empty: an empty criterion cannot be graded; write it back as "
                                "exported")
    assert not (tmp_path / "back").exists()


def test_a_topic_without_criteria_is_left_out_and_counted_never_zero(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key = write_jsonl(tmp_path / "key.jsonl", [KEY, EMPTY])
    run = write_run(tmp_path / "run.jsonl", "r1", ["t1", "t2"])
    judged = tmp_path / "judged"
    with caplog.at_level(logging.WARNING, logger="nuggetizer.methods.rubrics.method"):
        made = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o",
                       judged, "--assessor", "mock", "--no-cache")
    assert made.exit_code == 0, made.output
    assert "1 answers, 1 skipped (topic's key has no criteria: topic t2)" in made.output
    assert f"{key}:2: topic 't2' has no criteria: it is skipped (neither graded nor " \
        "scored); give it a criterion to grade it" in [r.getMessage() for r in caplog.records]
    assert [r["qid"] for r in judged_lines(judged, "r1")] == ["t1"]
    # a judgment of t2 written before (no criteria: the old record) is not scored 0 either
    old = dict(judged_lines(judged, "r1")[0], qid="t2", criteria=[], unjudged=0)
    del old["provenance"]  # it records t1's key
    write_jsonl(judged / "r2.jsonl", [dict(old, run_id="r2")])
    board, per_topic = tmp_path / "board.tsv", tmp_path / "pt.tsv"
    scored = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o", board,
                     "--per-topic", per_topic)
    assert scored.exit_code == 0, scored.output
    assert "1 topics, " in scored.output
    assert "1 topics with no criteria in the key (left out, no score)" in scored.output
    rows = [line.split("\t") for line in per_topic.read_text().splitlines()[1:]]
    assert {(r[0], r[1]) for r in rows} == {("r1", "t1"), ("r1", "all")}  # no t2 row, no 0
    assert "r2" not in board.read_text()
    sidecar = json.loads(Path(f"{board}.provenance.json").read_text())
    assert sidecar["left_out"] == {"topics with no criteria in the key": 1}


def test_a_rubrics_file_without_any_criterion_is_refused(tmp_path: Path) -> None:
    key = write_jsonl(tmp_path / "key.jsonl", [EMPTY, dict(EMPTY, qid="t3")])
    run = write_run(tmp_path / "run.jsonl", "r1", ["t2"])
    result = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o",
                     tmp_path / "judged", "--assessor", "mock", "--no-cache")
    assert result.exit_code == 2
    assert error_line(result) == (f"error: {key}: none of its 2 topics has a criterion (every "
                                  "'rubrics' list is empty): nothing to grade")
    assert not (tmp_path / "judged").exists()


def judge_key(tmp_path: Path) -> tuple[Path, Path]:
    """KEY's rubric judged for one run with the mock backend: (key file, judgments)."""
    key = write_jsonl(tmp_path / "key.jsonl", [KEY])
    run = write_run(tmp_path / "run.jsonl", "r1", ["t1"])
    judged = tmp_path / "judged"
    made = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o", judged,
                   "--assessor", "mock", "--no-cache")
    assert made.exit_code == 0, made.output
    return key, judged


@pytest.mark.parametrize(("edit", "said"), [
    (lambda c: c[2].update(weight=7), "criterion 3: weight 2.0 when judged, 7.0 in the "
                                      "rubrics file"),
    (lambda c: c[0].update(criterion="Names two causes."), "criterion 1: text 'Names the "
                                                           "three causes.' when judged"),
    (lambda c: c.append({"criterion": "Is short.", "weight": 1}), "4 criteria judged, 5 in "
                                                                  "the rubrics file"),
])
def test_a_key_changed_since_judging_is_named_at_scoring(tmp_path: Path, edit: Any,
                                                         said: str) -> None:
    key, judged = judge_key(tmp_path)
    (record,) = judged_lines(judged, "r1")
    assert len(record["provenance"]["key_sha256"]) == 64
    changed = json.loads(json.dumps(KEY))
    edit(changed["rubrics"])
    write_jsonl(key, [changed])
    board = tmp_path / "board.tsv"
    scored = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o", board)
    assert scored.exit_code == 2
    line = error_line(scored)
    assert line.startswith(f"error: {judged / 'r1.jsonl'}:1: run 'r1' topic 't1' was judged "
                           "against another rubric") and said in line
    assert not board.exists()
    lenient = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o", board,
                      "--lenient")
    assert lenient.exit_code == 0 and "scored as judged" in lenient.output


def test_a_judgment_whose_recorded_key_hash_differs_is_named(tmp_path: Path) -> None:
    key, judged = judge_key(tmp_path)
    (record,) = judged_lines(judged, "r1")
    record["provenance"]["key_sha256"] = "0" * 64
    write_jsonl(judged / "r1.jsonl", [record])
    scored = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o",
                     tmp_path / "board.tsv")
    assert scored.exit_code == 2
    assert "its provenance records key hash 000000000000" in error_line(scored)


def test_an_unchanged_key_scores_clean(tmp_path: Path) -> None:
    key, judged = judge_key(tmp_path)
    write_jsonl(key, [dict(KEY, rubrics=[dict(c, weight=int(c["weight"]))
                                         for c in KEY["rubrics"]])])  # 5 and 5.0: one weight
    scored = run_cli("score", "--method", "rubrics", "--key", key, judged, "-o",
                     tmp_path / "board.tsv")
    assert scored.exit_code == 0, scored.output
    assert "note:" not in scored.output


# --- ensembles -------------------------------------------------------------------------------

def test_a_judge_that_never_parses_is_named_in_the_summary(tmp_path: Path) -> None:
    key = write_jsonl(tmp_path / "key.jsonl", [KEY])
    run = write_jsonl(tmp_path / "run.jsonl", [answer("r1", "t1")])
    judged = tmp_path / "judged"
    made = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o", judged,
                   "--no-cache", "--set", "reasks=0", "--assessor", "scripted:satisfied",
                   "--assessor", "scripted:rambler", "--assessor", "scripted:satisfied-too")
    assert made.exit_code == 0, made.output
    assert "0 unjudged, the judges disagree on 0 of 4 items" in made.output
    assert ("4 of 12 votes missing (scripted:rambler: 4 of 4 never parsed or refused)"
            in made.output)
    (record,) = judged_lines(judged, "r1")
    assert all(c["missing"] == 1 for c in record["ensemble"]["calls"])


def test_an_ensemble_whose_judges_all_answer_misses_no_vote(tmp_path: Path) -> None:
    key = write_jsonl(tmp_path / "key.jsonl", [KEY])
    run = write_jsonl(tmp_path / "run.jsonl", [answer("r1", "t1")])
    made = run_cli("assign", "--method", "rubrics", "--key", key, "--run", run, "-o",
                   tmp_path / "judged", "--no-cache", "--assessor", "scripted:satisfied",
                   "--assessor", "scripted:satisfied-too")
    assert made.exit_code == 0, made.output
    assert "0 of 8 votes missing," in made.output and "never parsed" not in made.output


# --- the Python API --------------------------------------------------------------------------

def api_inputs(tmp_path: Path) -> dict[str, Any]:
    key = write_jsonl(tmp_path / "key.jsonl", [KEY])
    run = write_run(tmp_path / "run.jsonl", "r1", ["t1"])
    return {"method": api.method("rubrics"), "key": key, "run": run,
            "out": tmp_path / "judged"}


WRONG_CALLS: list[tuple[str, Any, str]] = [
    ("load_keys swapped", lambda i: api.load_keys(i["key"], i["method"]),
     "argument method: expected a method such as api.method(\"nuggets\"), got PosixPath"),
    ("assessor(42)", lambda i: api.assessor(42),
     "argument spec: expected an assessor spec such as \"mock\" or \"openai:gpt-4o\", got "
     "int 42"),
    ("judge with a spec", lambda i: api.judge(i["method"], i["key"], [i["run"]], "mock",
                                              i["out"]),
     "argument assessor: expected an assessor such as api.assessor(\"mock\"), got str 'mock' "
     "(make one with api.assessor('mock'))"),
    ("judge with an int run", lambda i: api.judge(i["method"], i["key"], [i["run"], 7],
                                                  api.assessor("mock", cache=False), i["out"]),
     "argument runs[1]: expected a file path (str or pathlib.Path), got int 7"),
    ("score with a list of keys", lambda i: api.score(i["method"], i["out"], [KEY]),
     "argument keys: expected the keys as api.load_keys gives them ({qid: key record}) or "
     "the key file's path, got list"),
    ("score with topic objects", lambda i: api.score(i["method"], i["out"], i["key"],
                                                     topics=[{"qid": "t1"}]),
     "argument topics[0]: expected a topic id (str), got dict {'qid': 't1'}"),
    ("method(None)", lambda i: api.method(None),
     "argument name: expected a method name such as \"nuggets\", got NoneType None"),
]


@pytest.mark.parametrize(("call", "said"), [(c, s) for _, c, s in WRONG_CALLS],
                         ids=[n for n, _, _ in WRONG_CALLS])
def test_wrong_arguments_are_refused_at_the_door(tmp_path: Path, call: Any, said: str
                                                 ) -> None:
    inputs = api_inputs(tmp_path)
    with pytest.raises(ArgumentError) as raised:
        call(inputs)
    assert str(raised.value).startswith(said)
    assert isinstance(raised.value, NuggetizerError) and isinstance(raised.value, TypeError)
    assert not inputs["out"].exists()


def test_a_single_path_where_a_list_is_expected_is_one_path(tmp_path: Path) -> None:
    inputs = api_inputs(tmp_path)
    with api.assessor("mock", cache=False) as judge:
        summary = api.judge(inputs["method"], str(inputs["key"]), str(inputs["run"]), judge,
                            inputs["out"])
    assert summary.done == 1 and [r["qid"] for r in judged_lines(inputs["out"], "r1")] == ["t1"]
    scores = api.score(inputs["method"], str(inputs["out"]), str(inputs["key"]),
                       topics=["t1"])
    assert [row["run_id"] for row in scores.leaderboard()] == ["r1"]
    assert list(api.load_runs([inputs["run"]])) == ["r1"]


def test_a_list_of_the_wrong_things_is_refused_not_an_empty_leaderboard(tmp_path: Path
                                                                        ) -> None:
    inputs = api_inputs(tmp_path)
    method = inputs["method"]
    with api.assessor("mock", cache=False) as judge:
        api.judge(method, inputs["key"], [inputs["run"]], judge, inputs["out"])
    keys = api.load_keys(method, inputs["key"])
    assert [row["run_id"] for row in api.score(method, inputs["out"], keys).leaderboard()] == \
        ["r1"]
    with pytest.raises(ArgumentError, match=r"^argument keys: expected the keys as "):
        api.score(method, inputs["out"], list(keys.values()))
    topics = api.load_topics(write_jsonl(tmp_path / "topics.jsonl",
                                         [{"qid": "t1", "query": "what happened?"}]))
    with pytest.raises(ArgumentError, match=r"^argument topics\[0\]: expected a topic id"):
        api.score(method, inputs["out"], topics=list(topics.values()))
    assert api.score(method, inputs["out"], topics=list(topics)).ranking() == ["r1"]
    # numeric topic ids given as ints are the topics' ids, not a universe nothing is in
    key = write_jsonl(tmp_path / "numbered.jsonl", [dict(KEY, qid="1001")])
    run = write_run(tmp_path / "numbered-run.jsonl", "r9", ["1001"])
    with api.assessor("mock", cache=False) as judge:
        api.judge(method, key, run, judge, tmp_path / "numbered")
    assert api.score(method, tmp_path / "numbered", topics=[1001]).ranking() == ["r9"]


def test_a_failing_step_raises_the_toolkits_error_and_the_assessor_closes(tmp_path: Path
                                                                         ) -> None:
    """A server that refuses every call: the step's own AssessorError, not the TaskGroup's
    ExceptionGroup, and the `with` block closes the assessor on its way out."""
    scripted.SCRIPTS["refusing"] = lambda request: PermanentError("401: bad API key")
    inputs = api_inputs(tmp_path)
    with pytest.raises(AssessorError, match="401: bad API key"):
        with api.assessor("scripted:refusing", cache=False) as judge:
            api.judge(inputs["method"], inputs["key"], inputs["run"], judge, inputs["out"])
    assert judge.backend.closed
    assert not (inputs["out"] / "r1.jsonl").exists()


def test_an_assessor_closes_however_its_block_ends() -> None:
    scripted.SCRIPTS["closing"] = ["never asked"]
    with pytest.raises(RuntimeError, match="before close"):
        with api.assessor("scripted:closing", cache=False) as judge:
            raise RuntimeError("an error before close()")
    assert judge.backend.closed

    async def ensemble() -> Any:
        async with Ensemble([make_assessor("scripted:closing", cache=None),
                             make_assessor("scripted:satisfied", cache=None)]) as both:
            return both

    closed = asyncio.run(ensemble())
    assert all(m.backend.closed for m in closed.members)


# --- battles ---------------------------------------------------------------------------------

def test_runs_with_no_topic_in_common_are_refused_by_name(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a.jsonl", "run-a", ["t1", "t2"])
    b = write_run(tmp_path / "b.jsonl", "run-b", ["t3"])
    out = tmp_path / "out"
    result = run_cli("battles", "--run", a, "--run", b, "-o", out, "--assessor", "mock",
                     "--no-cache")
    assert result.exit_code == 2
    assert error_line(result) == (
        "error: battles: no topic of runs 'run-a' (2 topics), 'run-b' (1 topics) is answered by "
        "another run, so no battle can be judged for them: give runs that answer the same "
        "topics (check their topic ids and --only-topics)")
    assert not out.exists()


def test_a_run_alone_on_its_topics_is_named(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / f"{r}.jsonl", r, q) for r, q in
            (("run-a", ["t1"]), ("run-b", ["t1"]), ("run-c", ["t9"]))]
    result = run_cli("battles", *[x for r in runs for x in ("--run", r)], "-o",
                     tmp_path / "out", "--assessor", "mock", "--no-cache")
    assert result.exit_code == 2 and "no topic of run 'run-c' (1 topics)" in result.output
    assert not (tmp_path / "out").exists()


def test_unparseable_verdicts_are_counted_apart_from_battles(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / f"{r}.jsonl", r, ["t1", "t2"]) for r in ("run-a", "run-b")]
    out = tmp_path / "out"
    result = run_cli("battles", *[x for r in runs for x in ("--run", r)], "-o", out,
                     "--assessor", "scripted:rambler", "--no-cache", "--set", "reasks=0")
    assert result.exit_code == 0, result.output
    assert ("battles --method battles: 2 battles, 4 calls, 0 cache hits, 4 unjudged "
            "presentation orders, 2 battles with nothing judged") in result.output
    records = [json.loads(x) for x in (out / "battles.jsonl").read_text().splitlines()]
    assert [r["result"] for r in records] == ["unjudged", "unjudged"]
