"""Issue 42, "a track read once": a track's (or a step's) inputs are read in one pass by
formats/track_inputs.py, each file once, the corpus streamed once for every passage the steps
need, every error naming file and line; the plan receives the value and opens no file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import nuggetizer.formats.corpus as corpus_module
from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import Demand, Wanted, read_track_inputs
from nuggetizer.formats.track_inputs import read_passages
from nuggetizer.plan import load_track
from nuggetizer.plan.evaluate import track_methods_made, track_wanted

SAMPLE = Path(__file__).resolve().parents[2] / "tracks" / "sample"
RUNS = sorted((SAMPLE.parents[1] / "runs" / "sample").glob("*.jsonl"))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every opening of a corpus from now on, by path."""
    opened: list[Path] = []
    real = corpus_module.read_corpus

    def counted(path, wanted=None):  # type: ignore[no-untyped-def]
        opened.append(Path(path))
        return real(path, wanted)

    monkeypatch.setattr("nuggetizer.formats.track_inputs.read_corpus", counted)
    return opened


def test_a_track_of_two_layers_reads_the_corpus_once_for_both(monkeypatch) -> None:
    """nuggets (the judged passages) and support (the cited ones): one pass over the corpus,
    holding exactly what the two read, no more."""
    opened = _counting(monkeypatch)
    config = load_track(str(SAMPLE / "layers.toml"))
    read = read_track_inputs(track_wanted(config, track_methods_made(config)))
    assert opened == [config.corpus]
    judged = {q.docid for q in read.qrels if q.grade >= 1}
    cited = {d for by_topic in read.answers.values() for a in by_topic.values()
             for d in a.references}
    every = set(corpus_module.read_corpus(SAMPLE / "corpus.jsonl"))
    assert set(read.passages.texts) == judged | cited < every  # the others are not kept
    assert len(read.topics or {}) == 4 and len(read.answers) == 3
    assert read.lines() == [
        f"read: 4 topics ({config.topics})",
        f"read: {len(read.qrels)} judgments of 4 topics ({config.qrels})",
        f"read: 11 answers of 3 runs ({', '.join(map(str, config.runs))})",
        f"read: {len(read.passages.texts)} passages of the corpus ({config.corpus})"]


def test_only_the_passages_asked_for_are_kept() -> None:
    config = load_track("sample")
    files = Wanted(topics=config.topics, qrels=config.qrels, corpus=config.corpus)
    nothing = read_track_inputs(files)
    assert nothing.passages.texts == {} and nothing.passages.corpus == config.corpus
    read = read_track_inputs(Wanted(qrels=config.qrels, corpus=config.corpus,
                                    passages=Demand(judged=3)))
    assert set(read.passages.texts) == {q.docid for q in read.qrels if q.grade >= 3}
    assert read_passages(None, {"sample-doc-1-1"}).texts == {}


def test_a_bad_line_is_named_with_its_file_and_line_before_anything_is_planned(
        tmp_path: Path) -> None:
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("sample-1 0 sample-doc-1-1 3\nsample-1 0 sample-doc-1-2 high\n")
    with pytest.raises(InputError) as info:
        read_track_inputs(Wanted(topics=SAMPLE / "topics.tsv", qrels=qrels))
    assert (info.value.path, info.value.line) == (str(qrels), 2)
    assert "grade must be an integer" in info.value.message
    track = tmp_path / "track.toml"
    track.write_text(f'name = "t"\ntopics = "{SAMPLE / "topics.tsv"}"\nqrels = "{qrels}"\n'
                     f'corpus = "{SAMPLE / "corpus.jsonl"}"\n'
                     f'runs = [{", ".join(json.dumps(str(p)) for p in RUNS)}]\n')
    result = CliRunner().invoke(cli, ["evaluate", "--track", str(track), "--assessor", "mock",
                                      "-o", str(tmp_path / "out"), "--no-cache"])
    assert result.exit_code == 2 and f"{qrels}:2: grade must be an integer" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_cut_answers_are_copies_and_the_answers_read_stay_whole(tmp_path: Path) -> None:
    """A RAGTIME report over its limit is cut for judging; the answers read (which a
    relevance pool also reads) keep every sentence."""
    docs = [f"47601789-65d8-4706-9bde-fc89fccfdf1{k}_1598{k}" for k in range(2)]
    report = {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "t1", "task": "english"},
              "responses": [{"text": c * 40 + ".", "citations": {d: 50}}
                            for c, d in zip("ab", docs)], "references": docs}
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(report) + "\n")
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"request_id": "t1", "title": "t", "limit": 50}) + "\n")
    read = read_track_inputs(Wanted(runs=[run], track_rules="auto", requests=requests))
    cut, count = read.cut_answers()
    assert count == 1 and len(cut["r"]["t1"].sentences) == 2
    assert sum(len(s.text) for s in cut["r"]["t1"].sentences) < 82
    assert [len(s.text) for s in read.answers["r"]["t1"].sentences] == [41, 41]


def test_evaluate_dry_run_says_what_was_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["evaluate", "--track", "sample", "--assessor", "mock",
                                      "--dry-run", "--tokenizer", "chars", "--no-cache",
                                      "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    config = load_track("sample")
    said = result.output.splitlines()
    assert said[:4] == [
        f"dry run read: 4 topics ({config.topics})",
        f"dry run read: 32 judgments of 4 topics ({config.qrels})",
        f"dry run read: 11 answers of 3 runs ({', '.join(map(str, config.runs))})",
        f"dry run read: 22 passages of the corpus ({config.corpus})"]
