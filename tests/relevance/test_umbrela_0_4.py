"""UMBRELA on the 0-4 sub-narrative scale (TREC RAG 2026): the published prompt, its grade
parser, `relevance --scale 0-4` at the emulator on a pool of the 2026 development narratives
(the passages written here: no ClimbMix text is stored), the scale in the provenance, mixing
scales as an error, and the threshold >= 2 in graded pools and qrels-agreement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import emulator
from scripted import SCRIPTS
from shared_data import METHODS_MD, RAG26_DEV

from nuggetizer.cli import cli, track_grading
from nuggetizer.formats import (
    Wanted,
    read_narratives,
    read_track_inputs,
    sub_narratives_from_nuggets,
)
from nuggetizer.parsing import ParseFailure
from nuggetizer.plan import load_track
from nuggetizer.relevance import SCALES, Grading, declared_scale
from nuggetizer.templates import load_prompt

REPO = Path(__file__).resolve().parents[2]
TOPICS = RAG26_DEV / "rag25-topics-dev.tsv"
NUGGETS = RAG26_DEV / "rag25-dev-nuggets.jsonl"
SCALE = SCALES["0-4"]
FAST = {"NUGGETIZER_RETRY_WAIT": "0.01", "NUGGETIZER_RETRY_MAX_WAIT": "0.05",
        "NUGGETIZER_PROGRESS_INTERVAL": "0", "NUGGETIZER_TIMEOUT": "60"}


def published_0_4() -> str:
    """The 0-4 prompt as METHODS.md section 8 prints it (indented 4 spaces), read at test time."""
    section = METHODS_MD.read_text(encoding="utf-8").split("## 8. TREC RAG 2026", 1)[1]
    block = section.split("**UMBRELA on a 0-4 sub-narrative scale**", 1)[1]
    block = block.split("On this scale", 1)[0]
    return "\n".join(line[4:] for line in block.splitlines() if line.startswith("    "))


def test_the_0_4_template_renders_the_published_text_exactly() -> None:
    narrative, subs, passage = "I want to grow tomatoes.", '["Soil", "Water"]', "Tomatoes..."
    ((role, text),) = load_prompt(SCALE.prompt).render(narrative=narrative, sub_narratives=subs,
                                                      passage=passage)
    assert role == "user"
    published = published_0_4()
    assert published.startswith("Given a user first person narrative") and \
        published.endswith("##final score: X")
    assert text == published.replace("{narrative}", narrative).replace(
        "{sub_narratives}", subs).replace("{passage}", passage)


@pytest.mark.parametrize(("answer", "grade"), [
    ("##final score: 3", 3), ("##final score: 4", 4), ("##final score:0", 0),
    ("## Final Score :  2", 2), ("##final score: **4**", 4), ("**##final score: 1**", 1),
    ("Sub-narratives answered: Soil, Water\n##final score: 3\n", 3),
    ('{"answer": "##final score: 2"}', 2), ("##final score: X\n##final score: 4", 4),
])
def test_the_0_4_parser_reads_the_final_score(answer: str, grade: int) -> None:
    assert SCALE.parse(answer) == grade


@pytest.mark.parametrize("answer", ["", "4", "score 4", "##final score: 5",
                                    "##final score: -1", "##final score: 2.5",
                                    "##final score: X"])
def test_the_0_4_parser_refuses_anything_else(answer: str) -> None:
    with pytest.raises(ParseFailure):
        SCALE.parse(answer)
    assert SCALES["0-3"].grades == (0, 1, 2, 3)
    with pytest.raises(ParseFailure, match="from 0 to 3, not 4"):
        SCALES["0-3"].parse("##final score: 4")


def test_sub_narratives_from_the_nuggets_and_from_a_narratives_file(tmp_path: Path) -> None:
    found = sub_narratives_from_nuggets(NUGGETS)
    record = next(json.loads(line) for line in NUGGETS.read_text().splitlines()
                  if json.loads(line)["qid"] == "58")
    mapped = [n["mapped_sub_narrative"] for n in record["nuggets"]]
    assert found["58"][0] == "Key advantages of nuclear energy"  # its quotes removed
    assert len(found["58"]) == len(set(mapped)) and '"' not in "".join(found["58"])
    narratives = tmp_path / "narratives.jsonl"
    narratives.write_text(json.dumps({"qid": "58", "narrative": "n", "sub_narratives": [
        "Safety", {"text": '"Waste"'}]}) + "\n")
    assert read_narratives(narratives) == {"58": ["Safety", "Waste"]}
    array = tmp_path / "narratives.json"
    array.write_text(json.dumps([{"id": 58, "sub_narratives": [{"text": "Cost"}]}]))
    assert read_narratives(array) == {"58": ["Cost"]}
    narratives.write_text('{"qid": "58", "sub_narratives": "Safety"}\n')
    bad = CliRunner().invoke(cli, ["relevance", "--topics", str(TOPICS), "--run", "x",
                                   "-o", str(tmp_path / "q"), "--scale", "0-4",
                                   "--narratives", str(narratives)])
    assert bad.exit_code == 2 and f"{narratives}:1" in bad.output
    assert "sub_narratives" in bad.output and "Traceback" not in bad.output


PASSAGES = {  # (topic, docid) -> a passage written for the test, in pool order
    ("14", "p14-a"): "Athlete pay differs widely between leagues and between sports.",
    ("14", "p14-b"): "Modern running shoes changed how marathon records are set.",
    ("58", "p58-a"): "Nuclear power plants emit almost no greenhouse gases while running.",
    ("58", "p58-b"): "Chernobyl and Fukushima left long-lasting radioactive contamination.",
    ("58", "p58-c"): "A recipe for lemon cake with three eggs.",
}


SCRIPTS["umbrela04"] = lambda request: (  # the re-ask too: the first message's passage
    "##final score: 5" if "lemon cake" in request.messages[0][1] else "##final score: 4")


def small_pool(tmp: Path) -> tuple[Path, Path, Path]:
    """Two 2026 development narratives, a run citing the passages above, their corpus."""
    topics = tmp / "topics.tsv"
    rows = [line for line in TOPICS.read_text().splitlines() if line.split("\t")[0] in
            ("58", "14")]
    topics.write_text("\n".join(rows) + "\n")
    run = tmp / "run.jsonl"
    run.write_text("".join(json.dumps({
        "run_id": "r", "topic_id": qid, "topic": "t",
        "references": [d for q, d in PASSAGES if q == qid],
        "answer": [{"text": "x", "citations": [0]}]}) + "\n" for qid in ("14", "58")))
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "contents": t}) + "\n"
                              for (_, d), t in PASSAGES.items()))
    return topics, run, corpus


def relevance(tmp: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    topics, run, corpus = small_pool(tmp)
    command = [sys.executable, "-m", "nuggetizer", "relevance", "--topics", str(topics),
               "--run", str(run), "--corpus", str(corpus), *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO,
                            env={**os.environ, **FAST})
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_the_prompt_shows_the_narrative_its_sub_narratives_and_the_passage() -> None:
    subs = sub_narratives_from_nuggets(NUGGETS)
    grading = Grading(SCALE, subs, {"path": str(NUGGETS)})  # each on one line, runs of
    # whitespace as one space (the nuggets write "New: Security  risks")
    ((_, text),) = grading.messages("58", "I'm curious\nabout nuclear power.", "A passage.")
    assert text == published_0_4().replace("{narrative}", "I'm curious about nuclear power.") \
        .replace("{sub_narratives}", json.dumps([" ".join(x.split()) for x in subs["58"]],
                                                ensure_ascii=False)) \
        .replace("{passage}", "A passage.")


def test_relevance_on_the_0_4_scale_at_the_emulator(tmp_path: Path) -> None:
    """Topic 58's prompts carry its sub-narratives (the emulator refuses them, and only them:
    unjudged with the reason), topic 14's are graded 0-4."""
    out = tmp_path / "llm.qrels"
    first = sub_narratives_from_nuggets(NUGGETS)["58"][:2]
    refused = json.dumps(first)[:-1]  # '["Key advantages of nuclear energy", "Major ...'
    with emulator(tmp_path, "--refuse", refused) as server:
        done = relevance(tmp_path, "-o", out, "--scale", "0-4", "--sub-narratives-from",
                         NUGGETS, "--assessor", "openai:emulated", "--base-url", server.url,
                         "--no-cache", "--reasks", "0")
        assert done.returncode == 0, done.stderr
        assert {r["kind"] for r in server.requests()} == {"grade"}
    records = [json.loads(line) for line in
               (tmp_path / "llm.qrels.judgments.jsonl").read_text().splitlines()]
    assert [(r["qid"], r["docid"]) for r in records] == list(PASSAGES)
    assert all(r["grade"] is None and r["error"] for r in records if r["qid"] == "58")
    rows = [line.split(" ") for line in out.read_text().splitlines()]
    assert [(q, d) for q, _, d, _ in rows] == [k for k in PASSAGES if k[0] == "14"]
    assert {int(g) for *_, g in rows} <= set(range(5))
    sidecar = json.loads((tmp_path / "llm.qrels.provenance.json").read_text())
    assert sidecar["scale"] == "0-4" and sidecar["relevant_from"] == 2
    assert sidecar["sub_narratives"]["path"] == str(NUGGETS)
    assert str(NUGGETS) in [i["path"] for i in sidecar["inputs"]]
    assert declared_scale(out) == "0-4"
    assert records[0]["provenance"]["config"]["scale"] == "0-4"
    assert records[0]["provenance"]["templates"] == {
        SCALE.prompt: load_prompt(SCALE.prompt).sha256}


def test_a_grade_off_the_scale_is_reasked_then_unjudged(tmp_path: Path) -> None:
    topics, run, corpus = small_pool(tmp_path)
    out = tmp_path / "q.qrels"
    result = CliRunner().invoke(cli, [
        "relevance", "--topics", str(topics), "--run", str(run), "--corpus", str(corpus),
        "-o", str(out), "--scale", "0-4", "--sub-narratives-from", str(NUGGETS),
        "--assessor", "scripted:umbrela04", "--no-cache", "--reasks", "1"])
    assert result.exit_code == 0, result.output
    records = {r["docid"]: r for r in map(json.loads, (tmp_path / "q.qrels.judgments.jsonl")
                                          .read_text().splitlines())}
    assert records["p58-c"]["grade"] is None and records["p58-c"]["attempts"] == 2
    assert "from 0 to 4, not 5" in records["p58-c"]["error"]
    assert all(r["grade"] == 4 for d, r in records.items() if d != "p58-c")
    assert "p58-c" not in out.read_text()


def test_0_4_needs_the_sub_narratives_of_every_topic_graded(tmp_path: Path) -> None:
    topics, run, corpus = small_pool(tmp_path)
    base = ["relevance", "--topics", str(topics), "--run", str(run), "--corpus", str(corpus),
            "-o", str(tmp_path / "q"), "--scale", "0-4", "--assessor", "scripted:umbrela04",
            "--no-cache"]
    none = CliRunner().invoke(cli, base)
    assert none.exit_code == 2 and "--sub-narratives-from" in none.output
    partial = tmp_path / "narratives.jsonl"
    partial.write_text('{"qid": "58", "sub_narratives": ["Safety"]}\n')
    lacking = CliRunner().invoke(cli, [*base, "--narratives", str(partial)])
    assert lacking.exit_code == 2 and "no sub-narratives for 1 topics" in lacking.output
    assert "'14'" in lacking.output and not (tmp_path / "q").exists()


def graded(tmp: Path, name: str, scale: str, rows: str) -> Path:
    """Qrels with a sidecar declaring `scale`, as `relevance` writes them."""
    path = tmp / name
    path.write_text(rows)
    (tmp / f"{name}.provenance.json").write_text(json.dumps({"scale": scale, "inputs": []}))
    return path


def test_mixing_scales_is_an_error_naming_both_files(tmp_path: Path) -> None:
    old = graded(tmp_path, "old.qrels", "0-3", "58 0 p58-a 1\n")
    new = graded(tmp_path, "new.qrels", "0-4", "58 0 p58-a 2\n")
    agreement = CliRunner().invoke(cli, ["qrels-agreement", str(old), str(new)])
    assert agreement.exit_code == 2, agreement.output
    line = agreement.output.strip()
    assert "\n" not in line and str(old) in line and str(new) in line and "scale" in line
    topics, run, corpus = small_pool(tmp_path)
    out = tmp_path / "filled.qrels"
    fill = CliRunner().invoke(cli, [
        "relevance", "--topics", str(topics), "--run", str(run), "--corpus", str(corpus),
        "-o", str(out), "--fill", str(old), "--scale", "0-4", "--sub-narratives-from",
        str(NUGGETS), "--assessor", "scripted:umbrela04", "--no-cache"])
    assert fill.exit_code == 2 and str(old) in fill.output and str(out) in fill.output
    assert "\n" not in fill.output.strip() and not out.exists()
    bare = tmp_path / "bare.qrels"  # no sidecar: scale unknown, never an error
    bare.write_text("58 0 p58-a 2\n")
    assert declared_scale(bare) is None
    assert CliRunner().invoke(cli, ["qrels-agreement", str(bare), str(new)]).exit_code == 0


def test_qrels_agreement_on_0_4_qrels_is_binary_at_2(tmp_path: Path) -> None:
    rows_a = "".join(f"1 0 d{i} {i % 5}\n" for i in range(20))
    rows_b = "".join(f"1 0 d{i} {(i * 3) % 5}\n" for i in range(20))
    a, b = graded(tmp_path, "a.qrels", "0-4", rows_a), graded(tmp_path, "b.qrels", "0-4", rows_b)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["qrels-agreement", str(a), str(b), "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["relevant_at"] == 2
    assert "| precision (grade >= 2) |" in result.output
    plain_a, plain_b = tmp_path / "pa.qrels", tmp_path / "pb.qrels"
    plain_a.write_text(rows_a)
    plain_b.write_text(rows_b)
    unknown = CliRunner().invoke(cli, ["qrels-agreement", str(plain_a), str(plain_b)])
    assert "| precision (grade >= 1) |" in unknown.output  # unknown scale: today's default
    chosen = CliRunner().invoke(cli, ["qrels-agreement", str(plain_a), str(plain_b), "--scale",
                                      "0-4"])
    assert "| precision (grade >= 2) |" in chosen.output
    wrong = CliRunner().invoke(cli, ["qrels-agreement", str(a), str(b), "--scale", "0-3"])
    assert wrong.exit_code == 2 and str(a) in wrong.output and "--scale is 0-3" in wrong.output


PROMPTS: list[str] = []
GRADES = {"p14-a": 2, "p14-b": 1, "p58-a": 1, "p58-b": 1, "p58-c": 0}


def key_builder(prompt: str) -> str:
    """Grades by passage (GRADES), one nugget, its label."""
    PROMPTS.append(prompt)
    if "##final score" in prompt:
        grade = next(g for d, g in GRADES.items() if PASSAGES[d[1:3], d] in prompt)
        return f"##final score: {grade}"
    if "Updated Nugget List:" in prompt:
        return '["athletes are paid differently across leagues"]'
    return '["vital"]'


SCRIPTS["umbrela04-keys"] = lambda request: key_builder(request.messages[-1][1])


def test_a_graded_pool_on_0_4_builds_keys_from_grade_2(tmp_path: Path) -> None:
    topics, run, corpus = small_pool(tmp_path)
    out = tmp_path / "nuggets.jsonl"
    PROMPTS.clear()
    made = CliRunner().invoke(cli, [
        "nuggetize", "--topics", str(topics), "--run", str(run), "--corpus", str(corpus),
        "--grade-pool", "-o", str(out), "--scale", "0-4", "--sub-narratives-from",
        str(NUGGETS), "--assessor", "scripted:umbrela04-keys", "--no-cache"])
    assert made.exit_code == 0, made.output
    (key,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert key["qid"] == "14" and key["provenance"]["config"]["min_grade"] == 2
    (create,) = [p for p in PROMPTS if "Updated Nugget List:" in p]
    assert PASSAGES["14", "p14-a"] in create and PASSAGES["14", "p14-b"] not in create
    assert "1 of 2 topics have no passage graded >= 2" in made.output
    assert declared_scale(tmp_path / "nuggets.llm.qrels") == "0-4"
    lowered = CliRunner().invoke(cli, [
        "nuggetize", "--topics", str(topics), "--run", str(run), "--corpus", str(corpus),
        "--grade-pool", "-o", str(tmp_path / "one.jsonl"), "--scale", "0-4",
        "--sub-narratives-from", str(NUGGETS), "--assessor", "scripted:umbrela04-keys",
        "--no-cache", "--min-grade", "1"])
    assert lowered.exit_code == 0, lowered.output
    assert [json.loads(line)["qid"] for line in (tmp_path / "one.jsonl").read_text()
            .splitlines()] == ["14", "58"]


def test_a_track_relevance_table_on_0_4(tmp_path: Path) -> None:
    topics, run, corpus = small_pool(tmp_path)
    track = tmp_path / "track.toml"
    track.write_text(f'name = "t"\ntopics = "{topics.name}"\ncorpus = "{corpus.name}"\n'
                     f'runs = ["{run.name}"]\n[relevance]\nscale = "0-4"\n'
                     f'sub_narratives_from = "{NUGGETS}"\n')
    loaded = load_track(str(track))
    assert loaded.settings()["min_grade"] == 2
    grading = track_grading(loaded, read_track_inputs(Wanted(
        sub_narratives_from=loaded.relevance.sub_narratives_from if loaded.relevance else None)))
    assert grading.scale.name == "0-4" and grading.sub_narratives is not None
    track.write_text(track.read_text() + "[nuggets]\nmin_grade = 3\n")
    assert load_track(str(track)).settings()["min_grade"] == 3


def test_the_development_qrels_with_scale_0_4_are_relevant_from_2(tmp_path: Path) -> None:
    """The three 2026 development qrels (no sidecar: scale unknown) with --scale 0-4: the same
    report as --relevant 2 (whose binary kappa and alpha test_judges_agreement.py checks
    against scikit-learn and krippendorff)."""
    three = [str(p) for p in sorted((RAG26_DEV / "qrels").glob("*.qrels"))]
    assert len(three) == 3 and not any(declared_scale(Path(p)) for p in three)
    by_scale = CliRunner().invoke(cli, ["qrels-agreement", *three, "--scale", "0-4"])
    by_grade = CliRunner().invoke(cli, ["qrels-agreement", *three, "--relevant", "2"])
    assert by_scale.exit_code == 0 and by_scale.output == by_grade.output
    assert "F1 >= 2" in by_scale.output


def test_keys_from_qrels_declared_0_4_are_built_from_grade_2(tmp_path: Path) -> None:
    topics, _, corpus = small_pool(tmp_path)
    rows = "".join(f"{q} 0 {d} {GRADES[d]}\n" for q, d in PASSAGES)
    declared = graded(tmp_path, "llm04.qrels", "0-4", rows)
    plain = tmp_path / "plain.qrels"
    plain.write_text(rows)
    for qrels, expected in ((declared, ["14"]), (plain, ["14", "58"])):
        out = tmp_path / f"{qrels.stem}.jsonl"
        made = CliRunner().invoke(cli, [
            "nuggetize", "--topics", str(topics), "--qrels", str(qrels), "--corpus",
            str(corpus), "-o", str(out), "--assessor", "scripted:umbrela04-keys", "--no-cache"])
        assert made.exit_code == 0, made.output
        assert [json.loads(line)["qid"] for line in out.read_text().splitlines()] == expected
