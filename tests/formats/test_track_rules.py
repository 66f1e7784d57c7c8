"""Per-track rules of report runs (formats/track_rules.py), one test per rule, through
`nuggetizer validate` (exit 2 on an error; warnings only: 0, or 1 with --strict) and
`nuggetizer assign` (a rule broken: one line naming file, line, field and rule, exit 2,
nothing written); and how RAGTIME runs are read: the most confident citation first, the report
cut to its limit."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from shared_data import SPOT_CHECK

from nuggetizer.cli import make_targets
from nuggetizer.formats import Limit, Wanted, length, read_run, read_track_inputs, truncate
from nuggetizer.interface import make_method

REPO = Path(__file__).resolve().parents[2]
SPOT_RUN = SPOT_CHECK / "runs" / "my_best_run_02.jsonl"
# An assessor that is never reached: every error below stops the command before any call.
UNREACHABLE = ["--assessor", "openai:none", "--base-url", "http://127.0.0.1:9/v1", "--no-cache"]
TOPIC = "msmarco_v2.1_doc_04_420132660"


def nuggetizer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def write(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def segment(i: int) -> str:
    return f"msmarco_v2.1_doc_01_{i}#0_{i}"


def ragtime_doc(i: int) -> str:
    return f"47601789-65d8-4706-9bde-fc89fccfdf1{i}_1598{i}"


def dragun(responses: list[dict], topic: str = TOPIC) -> dict:
    """A DRAGUN 2025 report line as its guidelines show it: no `references`."""
    return {"metadata": {"team_id": "t", "run_id": "dragun-run", "topic_id": topic,
                         "type": "automatic", "use_starter_kit": 0}, "responses": responses}


def ragtime(responses: list[dict], references: list[str], topic: str = "300") -> dict:
    return {"metadata": {"team_id": "t", "run_id": "ragtime-run", "topic_id": topic,
                         "task": "english"}, "responses": responses, "references": references}


@pytest.fixture
def key(tmp_path: Path) -> Path:
    topics = [TOPIC, "300", "28"]
    return write(tmp_path / "nuggets.jsonl", *({"qid": q, "query": "q", "nuggets": [
        {"text": "n", "importance": "vital"}]} for q in topics))


def validate(path: Path, *extra: str | Path) -> subprocess.CompletedProcess[str]:
    return nuggetizer("validate", path, *extra)


def breaks(path: Path, key: Path, tmp_path: Path, field: str, rule: str,
           *extra: str | Path) -> None:
    """`validate` finds the rule broken (exit 2, file:line and field named), and `assign`
    stops on it in one line, before anything is written."""
    checked = validate(path, *extra)
    assert checked.returncode == 2, checked.stderr
    assert f"{path}:1: error: {field}:" in checked.stderr and f"[{rule}]" in checked.stderr
    out = tmp_path / "out"
    result = nuggetizer("assign", "--run", path, "--nuggets", key, "-o", out, *UNREACHABLE,
                        *extra)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {path}:1: {field}: ")
    assert f"[{rule}]" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_dragun_run_as_its_spec_is_clean(tmp_path: Path) -> None:
    run = write(tmp_path / "run.jsonl", dragun([
        {"text": "One sentence.", "citations": [segment(1), segment(2), segment(3)]},
        {"text": "Another, uncited.", "citations": []}]))
    checked = validate(run)
    assert checked.returncode == 0, checked.stderr  # no `references`: no warning either
    assert "references" not in checked.stderr


def test_dragun_at_most_three_citations_per_sentence(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", dragun([
        {"text": "Five citations in one sentence.", "citations": [segment(i) for i in range(5)]}]))
    breaks(run, key, tmp_path, "responses[0].citations", "dragun citations-per-sentence")


def test_dragun_at_most_250_words(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", dragun([
        {"text": " ".join(["word"] * 150) + ".", "citations": [segment(1)]},
        {"text": " ".join(["more"] * 150) + ".", "citations": []}]))
    breaks(run, key, tmp_path, "responses", "dragun length")
    assert "300 words, over the limit of 250 words" in validate(run).stderr


def test_dragun_cites_ms_marco_segments(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", dragun([{"text": "A.", "citations": ["doc-42"]}]))
    breaks(run, key, tmp_path, "responses[0].citations[0]", "dragun doc-id")


def test_dragun_metadata_type(tmp_path: Path, key: Path) -> None:
    line = dragun([{"text": "A.", "citations": []}])
    line["metadata"]["type"] = "semi-automatic"
    run = write(tmp_path / "run.jsonl", line)
    breaks(run, key, tmp_path, "metadata.type", "dragun metadata")


def test_ragtime_references_are_the_cited_ids(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", ragtime(
        [{"text": "A.", "citations": {ragtime_doc(1): 50.0}}], [ragtime_doc(1), ragtime_doc(2)]))
    breaks(run, key, tmp_path, "references", "ragtime references-cited")


def test_ragtime_over_its_character_limit_is_warned(tmp_path: Path) -> None:
    run = write(tmp_path / "run.jsonl", ragtime(
        [{"text": "x" * 60 + ".", "citations": {ragtime_doc(1): 50}},
         {"text": "y" * 60 + ".", "citations": {ragtime_doc(2): 90}}],
        [ragtime_doc(1), ragtime_doc(2)]))
    requests = write(tmp_path / "requests.jsonl",
                     {"request_id": "300", "title": "t", "limit": 100})
    checked = validate(run, "--topics", requests, "--strict")
    assert checked.returncode == 1, checked.stderr  # a warning, as the track's validator
    assert (f"{run}:1: warning: responses: 123 characters, over the limit of 100 characters "
            "(cut to the limit before scoring) [ragtime length]") in checked.stderr


def test_ragtime_doc_ids_and_confidences_are_warned(tmp_path: Path) -> None:
    run = write(tmp_path / "run.jsonl", ragtime(
        [{"text": "A.", "citations": {"doc7": 150}}], ["doc7"]))
    checked = validate(run, "--strict")
    assert checked.returncode == 1, checked.stderr
    assert "responses[0].citations[0]: 'doc7' is not UUID_N" in checked.stderr
    assert "confidence 150 is outside 0..100 [ragtime confidence]" in checked.stderr


def test_neuclir_doc_ids_are_uuids(tmp_path: Path) -> None:
    line = {"metadata": {"team_id": "t", "run_id": "n1", "request_id": "253"},
            "responses": [{"text": "A.", "citations": ["not-a-uuid"]}],
            "references": ["not-a-uuid"]}
    run = write(tmp_path / "run.jsonl", line)
    assert validate(run).returncode == 0  # no track shows in the run: no track rules
    assert validate(run, "--track-rules", "neuclir").returncode == 0  # warnings only
    checked = validate(run, "--track-rules", "neuclir", "--strict")
    assert checked.returncode == 1, checked.stderr
    assert "'not-a-uuid' is not a UUID [neuclir doc-id]" in checked.stderr


def test_autojudge_reports_name_their_team(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", {"metadata": {"run_id": "a1", "topic_id": "28"},
                                         "responses": [{"text": "A.", "citations": []}]})
    breaks(run, key, tmp_path, "metadata.team_id", "autojudge metadata",
           "--track-rules", "autojudge")


def test_the_spot_check_runs_keep_every_rule_of_their_framework() -> None:
    runs = sorted((SPOT_CHECK / "runs").glob("*.jsonl"))[1:]
    checked = validate(*runs, "--track-rules", "autojudge")
    assert checked.returncode == 0, checked.stderr


def test_ragtime_first_citation_is_the_most_confident(tmp_path: Path) -> None:
    cites = {ragtime_doc(1): 10.0, ragtime_doc(2): 90.0, ragtime_doc(3): 90.0, ragtime_doc(4): 5}
    run = write(tmp_path / "run.jsonl", ragtime([{"text": "A.", "citations": cites}],
                                                list(cites)))
    _, answers = read_run(run)
    answer = answers["300"]
    first = [answer.references[c] for c in answer.sentences[0].citations]
    # highest confidence first, a tie in map order (auto-judge-base's ordering)
    assert first == [ragtime_doc(2), ragtime_doc(3), ragtime_doc(1), ragtime_doc(4)]
    _, spot = read_run(SPOT_RUN)
    assert spot["28"].sentences[1].citations == [0]


def test_ragtime_reports_are_cut_to_their_limit_before_judging(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture
                                                              ) -> None:
    texts = ["ﬁrst " + "a" * 40 + ".", "second " + "b" * 40 + ".", "third " + "c" * 40 + "."]
    run = write(tmp_path / "run.jsonl", ragtime(
        [{"text": t, "citations": {ragtime_doc(k): 50}} for k, t in enumerate(texts)],
        [ragtime_doc(k) for k in range(3)]))
    requests = write(tmp_path / "requests.jsonl", {"request_id": "300", "title": "t",
                                                   "limit": 70})
    nuggets = make_method("nuggets")
    targets = make_targets(nuggets, read_track_inputs(Wanted(runs=[run], track_rules="auto",
                                                             requests=requests)))
    target = targets["ragtime-run"]["300"]
    kept = [s.text for s in target.sentences]
    assert length(kept, "characters") == 70
    assert kept[0] == texts[0] and kept[1] == unicodedata.normalize("NFKC", texts[1])[:22]
    assert [s.citations for s in target.sentences] == [[0], [1]]
    assert "1 reports over their length limit are cut" in capsys.readouterr().err
    whole = make_targets(nuggets, read_track_inputs(Wanted(runs=[run], requests=requests)))
    assert [s.text for s in whole["ragtime-run"]["300"].sentences] == texts


def test_truncation_counts_as_the_validator() -> None:
    # NFKC: the ligature counts as two characters, as the RAGTIME validator counts it
    assert length(["ﬁ", "b"], "characters") == 4 and length(["a b", "c"], "words") == 3
    assert truncate(["one two", "three four five"], Limit(3, "words")) == ["one two", "three"]
    assert truncate(["abc", "def"], Limit(4, "characters")) == ["abc"]
    assert truncate(["abc", "def"], Limit(3, "characters")) == ["abc"]


def test_a_request_limit_that_is_no_number_names_its_line(tmp_path: Path, key: Path) -> None:
    run = write(tmp_path / "run.jsonl", ragtime([{"text": "A.", "citations": {ragtime_doc(1): 5}}],
                                                [ragtime_doc(1)]))
    requests = write(tmp_path / "requests.jsonl", {"request_id": "300", "title": "t",
                                                   "limit": "2000"})
    out = tmp_path / "out"
    result = nuggetizer("assign", "--run", run, "--nuggets", key, "-o", out, "--requests",
                        requests, *UNREACHABLE)
    assert result.returncode == 2 and not out.exists()
    assert result.stderr.strip() == (f"error: {requests}:1: field 'limit' must be a positive "
                                     "integer (the report's length limit in characters), got "
                                     "'2000'")
