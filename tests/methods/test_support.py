"""Support assessment (METHODS.md section 6): its measures on hand-computed answers, citations
resolved through the references to the corpus (and named when they do not resolve), the
sample track end to end through the CLI, and the manual sheets' round trip."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import scripted
from click.testing import CliRunner
from emulated import emulator
from shared_data import RAG24
from sheet_rows import read_rows, write_rows

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.formats import read_passages, read_run, read_runs
from nuggetizer.interface import Judged, make_method
from nuggetizer.measures import support_scores
from nuggetizer.plan import answer_targets, cite_targets, cited_ids
from nuggetizer.scoring import score_judged

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
CORPUS = SAMPLE / "corpus.jsonl"
RUNS = [REPO / "runs" / "sample" / f"{name}.jsonl" for name in ("good", "middling", "poor")]
FS, PS, NS, UJ = "full_support", "partial_support", "no_support", "unjudged"


# --- the measures -------------------------------------------------------------------------

def test_weights_and_the_two_measures_by_hand() -> None:
    # two sentences, one cited passage each: FS and PS -> both measures (1 + 0.5) / 2
    assert support_scores([[FS], [PS]]) == {"support_recall": 0.75, "support_precision": 0.75}
    assert support_scores([[NS]]) == {"support_recall": 0.0, "support_precision": 0.0}


def test_over_citation_lowers_precision_not_recall() -> None:
    one = support_scores([[FS], [FS]])
    over = support_scores([[FS, NS, NS], [FS, PS]])  # three extra citations, weights 0 0 0.5
    assert one == {"support_recall": 1.0, "support_precision": 1.0}
    assert over["support_recall"] == 1.0  # each sentence keeps its best citation
    assert over["support_precision"] == pytest.approx((1 + 0 + 0 + 1 + 0.5) / 5)


def test_an_uncited_sentence_lowers_recall_not_precision() -> None:
    scores = support_scores([[FS], [], [PS]])
    assert scores["support_recall"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert scores["support_precision"] == pytest.approx((1 + 0.5) / 2)
    assert support_scores([[], []]) == {"support_recall": 0.0, "support_precision": 0.0}
    assert support_scores([]) == {"support_recall": 0.0, "support_precision": 0.0}


def test_unjudged_pairs_are_left_out_not_scored_as_no_support() -> None:
    assert support_scores([[UJ], [FS]]) == {"support_recall": 1.0, "support_precision": 1.0}
    assert support_scores([[UJ, PS]]) == {"support_recall": 0.5, "support_precision": 0.5}


def _judged(run_id: str, qid: str, sentences: list[list[str]]) -> Judged:
    record = {"run_id": run_id, "qid": qid, "query": "", "sentences": [
        {"text": f"s{k}", "citations": list(range(len(labels))),
         "pairs": [{"citation": j, "docid": f"d{j}", "passage": "p", "label": label}
                   for j, label in enumerate(labels)]}
        for k, labels in enumerate(sentences)]}
    return Judged(run_id, qid, record, Path("x.jsonl"), 1)


def test_an_unanswered_topic_scores_zero_in_the_run_mean() -> None:
    method = make_method("support")
    judged = [_judged("A", "t1", [[FS], [PS]]), _judged("A", "t2", [[FS]]),
              _judged("B", "t1", [[FS], [PS]])]  # B skips t2
    table = score_judged(method, judged, topics=["t1", "t2", "t3"])
    assert table.topics == ["t1", "t2", "t3"] and table.missing == {"A": 1, "B": 2}
    assert table.per_topic["B"]["t2"] == {"support_recall": 0.0, "support_precision": 0.0}
    assert table.means["A"]["support_recall"] == pytest.approx((0.75 + 1 + 0) / 3)
    assert table.means["B"]["support_precision"] == pytest.approx(0.75 / 3)
    assert table.ranking() == ["A", "B"] and table.primary == "support_recall"


# --- citations: references, corpus, and what does not resolve -----------------------------

def _run_with(tmp: Path, change) -> Path:
    """The sample's good run with `change(objects)` applied, written to tmp."""
    objs = [json.loads(line) for line in RUNS[0].read_text().splitlines()]
    change(objs)
    path = tmp / "good.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _assign(*args: object, script: str = "fs") -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["assign", "--method", "support", "--no-cache",
                                      "--assessor", f"scripted:{script}", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.output


scripted.SCRIPTS["fs"] = lambda request: '{"label": "full_support"}'


def test_a_citation_outside_the_references_is_named(tmp_path: Path) -> None:
    run = _run_with(tmp_path, lambda objs: objs[2]["answer"][3].update(citations=[9]))
    code, output = _assign("--run", run, "--corpus", CORPUS, "-o", tmp_path / "out")
    assert code == 2
    assert (f"{run}:3: topic 'sample-3', sentence 4: answer[3].citations[0] is 9, outside "
            "references (0..5)") in output
    assert not (tmp_path / "out").exists()
    # with --allow-missing it is an unjudged pair, named and counted
    code, output = _assign("--run", run, "--corpus", CORPUS, "-o", tmp_path / "out",
                           "--allow-missing")
    assert code == 0, output
    assert (f"{run}:3: run 'sample-good' topic 'sample-3', sentence 4, citations[0]: citation "
            "9 is outside the references (0..5)") in output
    assert "1 unjudged" in output
    record = [json.loads(x) for x in (tmp_path / "out" / "sample-good.jsonl").read_text()
              .splitlines()][2]
    pair = record["sentences"][3]["pairs"][0]
    assert pair["label"] == UJ and pair["citation"] == 9 and "outside" in pair["reason"]
    result = CliRunner().invoke(cli, ["score", "--method", "support", str(tmp_path / "out")])
    assert result.exit_code == 0 and "1 unjudged (left out: 1 citation)" in result.output


def test_a_cited_passage_missing_from_the_corpus_is_named(tmp_path: Path) -> None:
    lines = CORPUS.read_text().splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(x + "\n" for x in lines if '"sample-doc-2-3"' not in x))
    code, output = _assign("--run", RUNS[0], "--corpus", corpus, "-o", tmp_path / "out")
    assert code == 2
    assert (f"{RUNS[0]}:2: topic 'sample-2', sentence 4, citations[0]: passage sample-doc-2-3 "
            f"is not in the corpus {corpus}; 1 cited passages are missing") in output
    code, output = _assign("--run", RUNS[0], "--corpus", corpus, "-o", tmp_path / "out",
                           "--allow-missing")
    assert code == 0 and "1 citations cannot be judged" in output and "1 unjudged" in output


def test_only_first_citations_are_read_unless_all(tmp_path: Path) -> None:
    """A passage only a second citation names need not be in the corpus by default."""
    lines = CORPUS.read_text().splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(x + "\n" for x in lines if '"sample-doc-3-6"' not in x))
    code, output = _assign("--run", RUNS[0], "--corpus", corpus, "-o", tmp_path / "first")
    assert code == 0 and "22 calls" in output, output
    code, output = _assign("--run", RUNS[0], "--corpus", corpus, "-o", tmp_path / "all",
                           "--set", "citations=all")
    assert code == 2 and "topic 'sample-3', sentence 6, citations[1]: passage " \
        "sample-doc-3-6 is not in the corpus" in output
    code, output = _assign("--run", RUNS[0], "--corpus", CORPUS, "-o", tmp_path / "all",
                           "--set", "citations=all")
    assert code == 0 and "25 calls" in output, output
    code, output = _assign("--run", RUNS[0], "--corpus", CORPUS, "-o", tmp_path / "x",
                           "--set", "citations=every")
    assert code == 2 and "citations must be first or all" in output


def test_real_trec_rag_2024_citations_resolve_through_references(tmp_path: Path) -> None:
    """The official baseline runs: every citation is an index into `references`; a corpus
    that lacks the cited MS MARCO segments is named at the first answer that cites one."""
    path = sorted((RAG24 / "runs").glob("*.jsonl"))[0]
    _, answers = read_run(path)
    first = next(iter(answers.values()))
    cited = {first.references[c] for s in first.sentences for c in s.citations[:1]}
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"docid": d, "segment": "text"}) + "\n"
                              for d in sorted(cited)))
    targets = answer_targets({"run": {first.topic_id: first}})
    assert cite_targets(targets, read_passages(corpus, cited), every=False) == []
    assert set(targets["run"][first.topic_id].cited) == cited
    targets = answer_targets(read_runs([path]))
    with pytest.raises(InputError) as info:
        cite_targets(targets, read_passages(corpus, cited_ids(targets, every=False)),
                     every=False)
    assert str(info.value.path) == str(path) and info.value.line == 2
    assert re.search(r"topic '[^']+', sentence \d+, citations\[0\]: passage msmarco_v2\.1_doc_",
                     info.value.message)


def test_2025_shape_citations_by_segment_id(tmp_path: Path) -> None:
    obj = {"metadata": {"run_id": "r25", "narrative_id": "sample-1"},
           "references": ["sample-doc-1-1", "sample-doc-1-2"],
           "answer": [{"text": "One.", "citations": ["sample-doc-1-2", 0]},
                      {"text": "Two.", "citations": ["sample-doc-9-9"]}]}
    path = tmp_path / "r25.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert info.value.line == 1 and info.value.message.startswith(
        "topic 'sample-1', sentence 2: answer[1].citations[0] cites 'sample-doc-9-9'")
    code, output = _assign("--run", path, "--corpus", CORPUS, "-o", tmp_path / "out",
                           "--allow-missing")
    assert code == 0 and "citation 'sample-doc-9-9' is not in the references" in output
    record = json.loads((tmp_path / "out" / "r25.jsonl").read_text())
    first, second = (s["pairs"][0] for s in record["sentences"])
    assert first["docid"] == "sample-doc-1-2" and first["label"] == FS
    assert second["label"] == UJ and second["docid"] is None


# --- the sample track end to end ----------------------------------------------------------

def _label(request) -> str:
    """A deterministic judge: the label from a hash of the sentence and passage."""
    text = request.messages[-1][1]
    digest = hashlib.sha256(text.encode()).digest()[0]
    return json.dumps({"label": (FS, PS, NS)[digest % 3]})


scripted.SCRIPTS["hashed"] = _label


def _expected(folder: Path, topics: list[str]) -> dict[str, dict[str, float]]:
    """Run means recomputed from the judgment files by the definitions, independently."""
    weight = {FS: 1.0, PS: 0.5, NS: 0.0}
    means = {}
    for path in sorted(folder.glob("*.jsonl")):
        per_topic = {}
        for line in path.read_text().splitlines():
            record = json.loads(line)
            pairs = [[weight[p["label"]] for p in s["pairs"]] for s in record["sentences"]]
            flat = [w for ws in pairs for w in ws]
            best = [max(ws) if ws else 0.0 for ws in pairs]
            per_topic[record["qid"]] = (sum(best) / len(best), sum(flat) / len(flat))
            run_id = record["run_id"]
        means[run_id] = {
            "support_recall": sum(per_topic.get(q, (0, 0))[0] for q in topics) / len(topics),
            "support_precision": sum(per_topic.get(q, (0, 0))[1] for q in topics) / len(topics)}
    return means


def _board(path: Path) -> dict[str, dict[str, float]]:
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return {r[0]: {m: float(v) for m, v in zip(rows[0][1:], r[1:])} for r in rows[1:]}


def _track(tmp: Path, assessor: str | None = None) -> Path:
    toml = tmp / "support.toml"
    runs = ", ".join(f'"{p}"' for p in RUNS)
    lines = ['name = "sample-support"', 'method = "support"',
             f'topics = "{SAMPLE / "topics.tsv"}"', f'corpus = "{CORPUS}"', f"runs = [{runs}]"]
    if assessor:
        lines.append(f'assessor = "{assessor}"')
    toml.write_text("\n".join(lines) + '\n\n[support]\ncitations = "first"\n')
    return toml


def test_sample_track_through_assign_score_and_evaluate(tmp_path: Path) -> None:
    runner = CliRunner()
    judged, board = tmp_path / "judged", tmp_path / "board.tsv"
    args = ["assign", "--method", "support", "--corpus", str(CORPUS), "-o", str(judged),
            "--assessor", "scripted:hashed", "--no-cache"]
    for run in RUNS:
        args += ["--run", str(run)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "assign --method support: 11 answers, 36 calls" in result.output
    topics = [line.split("\t")[0] for line in (SAMPLE / "topics.tsv").read_text().splitlines()]
    result = runner.invoke(cli, ["score", "--method", "support", str(judged), "-o", str(board),
                                 "--per-topic", str(tmp_path / "pt.tsv"),
                                 "--topics", str(SAMPLE / "topics.tsv")])
    assert result.exit_code == 0, result.output
    assert "1 unanswered (scored 0)" in result.output
    scores = _board(board)
    expected = _expected(judged, topics)
    assert list(scores) == sorted(scores, key=lambda r: (-scores[r]["support_recall"], r))
    for run_id, means in expected.items():
        for measure, value in means.items():
            assert scores[run_id][measure] == pytest.approx(value, abs=5e-5)
    # evaluate with a track naming the method: the same leaderboard
    out = tmp_path / "eval"
    result = runner.invoke(cli, ["evaluate", "--track", str(_track(tmp_path)), "-o", str(out),
                                 "--assessor", "scripted:hashed", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "evaluate: 4 topics, 11 answers, 36 LLM calls" in result.output
    assert (out / "leaderboard.tsv").read_text() == board.read_text()
    assert (out / "per_topic.tsv").read_text() == (tmp_path / "pt.tsv").read_text()
    record = json.loads((out / "support" / "sample-good.jsonl").read_text().splitlines()[0])
    assert record["provenance"]["config"] == {"method": "support", "citations": "first",
                                              "reasks": 4}
    assert set(record["provenance"]["templates"]) == {"support_judge"}


def test_the_shipped_support_track_config() -> None:
    from nuggetizer.plan import load_track

    track = load_track(str(SAMPLE / "support.toml"))
    assert track.method == "support" and track.runs == [p.resolve() for p in RUNS]
    assert track.corpus == CORPUS.resolve() and track.settings() == {"citations": "first"}


def test_a_key_is_refused_and_a_corpus_needed(tmp_path: Path) -> None:
    code, output = _assign("--run", RUNS[0], "--key", RUNS[0], "-o", tmp_path / "o")
    assert code == 2 and "judges without an answer key" in output
    code, output = _assign("--run", RUNS[0], "-o", tmp_path / "o")
    assert code == 2 and "reads the cited passages: give --corpus" in output


def test_an_unparsed_label_is_unjudged_with_its_output(tmp_path: Path) -> None:
    scripted.SCRIPTS["garbage"] = lambda request: "I cannot tell."
    code, output = _assign("--run", RUNS[2], "--corpus", CORPUS, "-o", tmp_path / "o",
                           script="garbage")
    assert code == 0 and "5 unjudged" in output
    record = json.loads((tmp_path / "o" / "sample-poor.jsonl").read_text().splitlines()[0])
    pair = record["sentences"][0]["pairs"][0]
    assert pair["label"] == UJ and pair["raw"] == "I cannot tell." and "no label" in pair["error"]


def test_the_emulator_labels_every_pair(tmp_path: Path) -> None:
    """The emulator knows the support prompt: every pair of the sample track is judged, with a
    label on the menu, the same one for the same prompt and seed, another seed another mix."""
    def labels(out: Path) -> list[str]:
        return [pair["label"] for path in sorted(out.glob("*.jsonl"))
                for line in path.read_text().splitlines()
                for sentence in json.loads(line)["sentences"] for pair in sentence["pairs"]]

    runs = [a for run in RUNS for a in ("--run", run)]
    seen = []
    for seed in ("1", "1", "2"):
        out = tmp_path / f"judged-{len(seen)}"
        with emulator(tmp_path, "--seed", seed, name=f"emulator-{len(seen)}") as server:
            result = CliRunner().invoke(cli, [
                "assign", "--method", "support", *runs, "--corpus", str(CORPUS), "-o", str(out),
                "--assessor", "openai:emulated", "--base-url", server.url, "--no-cache"])
            kinds = {r["kind"] for r in server.requests()}
        assert result.exit_code == 0, result.output
        assert "11 answers, 36 calls, 0 cache hits, 0 unjudged" in result.output
        assert kinds == {"support"}
        seen.append(labels(out))
    assert len(seen[0]) == 36 and set(seen[0]) <= {FS, PS, NS} and len(set(seen[0])) > 1
    assert seen[0] == seen[1] != seen[2]


# --- sheets ---------------------------------------------------------------------------------



def test_sheets_round_trip_gives_identical_scores(tmp_path: Path) -> None:
    """Automatic judgments (one citation outside the references: unjudged with its reason) ->
    prefilled sheets -> imported strictly -> the same leaderboard and per-topic scores."""
    runner = CliRunner()
    bad = _run_with(tmp_path, lambda objs: objs[0]["answer"][1].update(citations=[7]))
    auto, manual = tmp_path / "auto", tmp_path / "manual"
    args = ["assign", "--method", "support", "--corpus", str(CORPUS), "-o", str(auto),
            "--assessor", "scripted:hashed", "--no-cache", "--allow-missing",
            "--set", "citations=all", "--run", str(bad), "--run", str(RUNS[1])]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    score = ["score", "--method", "support", "--topics", str(SAMPLE / "topics.tsv")]
    result = runner.invoke(cli, [*score, str(auto), "-o", str(tmp_path / "a.tsv"),
                                 "--per-topic", str(tmp_path / "a.pt.tsv")])
    assert result.exit_code == 0 and "1 citation" in result.output, result.output
    sheets = tmp_path / "sheets"
    result = runner.invoke(cli, ["export-sheets", "--method", "support", "--assessments",
                                 str(auto), "-o", str(sheets)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in sheets.glob("*.tsv")) == [f"sample-{k}.tsv" for k in range(1, 5)]
    rows = read_rows(sheets / "sample-1.tsv")
    assert rows[0] == ["kind", "qid", "run_id", "n", "citation", "docid", "text", "label", "note"]
    unjudged = [r for r in rows if r[0] == "pair" and r[7] == "unjudged"]
    assert len(unjudged) == 1 and unjudged[0][4] == "7" and "outside" in unjudged[0][8]
    result = runner.invoke(cli, ["import-sheets", "--method", "support", str(sheets), "-o",
                                 str(manual)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, [*score, str(manual), "-o", str(tmp_path / "m.tsv"),
                                 "--per-topic", str(tmp_path / "m.pt.tsv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.tsv").read_text() == (tmp_path / "a.tsv").read_text()
    assert (tmp_path / "m.pt.tsv").read_text() == (tmp_path / "a.pt.tsv").read_text()
    strip = ("provenance",)
    for path in sorted(auto.glob("*.jsonl")):
        mine = [json.loads(x) for x in path.read_text().splitlines()]
        theirs = [json.loads(x) for x in (manual / path.name).read_text().splitlines()]
        for a, b in zip(mine, theirs, strict=True):
            for record in (a, b):
                for key in strip:
                    record.pop(key)
            assert a == b


def test_blank_sheets_filled_by_hand_and_strict_import(tmp_path: Path) -> None:
    runner = CliRunner()
    sheets = tmp_path / "sheets"
    args = ["export-sheets", "--method", "support", "--corpus", str(CORPUS), "-o", str(sheets)]
    for run in RUNS:
        args += ["--run", str(run)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0 and "11 answers in 4 topic sheets" in result.output
    out = tmp_path / "manual"
    importing = ["import-sheets", "--method", "support", str(sheets), "-o", str(out)]
    result = runner.invoke(cli, importing)
    sheet = sheets / "sample-1.tsv"
    assert result.exit_code == 2
    # comment, header, answer, sentence: the first pair row is line 5
    assert f"{sheet}:5: column label is empty" in result.output
    # a hand-filled sheet: FS for the first sentence's pair, PS for the others, and a typo
    for path in sorted(sheets.glob("*.tsv")):
        rows = read_rows(path)
        for r in rows[1:]:
            if r[0] == "pair":
                r[7] = "FS" if r[3] == "1" else "partial support"
        write_rows(path, rows)
    rows = read_rows(sheet)
    rows[3][7] = "mostly"
    write_rows(sheet, rows)
    result = runner.invoke(cli, importing)
    assert result.exit_code == 2 and f"{sheet}:4: column label is 'mostly'" in result.output
    rows[3][7] = "ns"
    rows[2][3] = "3"  # a sentence renumbered
    write_rows(sheet, rows)
    result = runner.invoke(cli, importing)
    assert result.exit_code == 2 and f"{sheet}:3: column n is '3'" in result.output
    rows[2][3] = "1"
    write_rows(sheet, rows)
    result = runner.invoke(cli, importing)
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["score", "--method", "support", str(out), "-o",
                                 str(tmp_path / "b.tsv"), "--topics",
                                 str(SAMPLE / "topics.tsv")])
    assert result.exit_code == 0, result.output
    # each sentence's pair FS for sentence 1, PS for the others; but NS for sample-good's
    # first sentence of sample-1 (line 4); sample-middling's sample-3 has an uncited sentence
    scores = _board(tmp_path / "b.tsv")
    middling = {"sample-1": (1 + .5 + .5) / 3, "sample-2": (1 + .5) / 2,
                "sample-3": (1 + .5 + 0) / 3, "sample-4": (1 + .5) / 2}
    assert scores["sample-middling"]["support_recall"] == pytest.approx(
        sum(middling.values()) / 4, abs=5e-5)
    assert scores["sample-middling"]["support_precision"] == pytest.approx(
        ((1 + .5 + .5) / 3 + .75 + .75 + .75) / 4, abs=5e-5)
    good = {"sample-1": (0 + .5 * 4) / 5, "sample-2": (1 + .5 * 5) / 6,
            "sample-3": (1 + .5 * 5) / 6, "sample-4": (1 + .5 * 4) / 5}
    assert scores["sample-good"]["support_recall"] == pytest.approx(
        sum(good.values()) / 4, abs=5e-5)


# --- the embedded model ---------------------------------------------------------------------

def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "nuggetizer", *map(str, args)],
                            capture_output=True, text=True, timeout=900, cwd=REPO,
                            env={**os.environ, "NUGGETIZER_PROGRESS_INTERVAL": "0"})
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.slow
def test_sample_track_with_the_embedded_model(gguf_path: Path, tmp_path: Path) -> None:
    """SmolLM2-135M through the CLI: every pair gets a label of the menu (schema-constrained)
    or is unjudged with its output; the scores are in range. Content quality is not asserted."""
    cache = ["--cache", tmp_path / "cache.sqlite"]
    judged, board = tmp_path / "judged", tmp_path / "board.tsv"
    runs = [a for run in RUNS for a in ("--run", run)]
    started = time.monotonic()
    made = _cli("assign", "--method", "support", *runs, "--corpus", CORPUS, "-o", judged,
                "--assessor", "local", *cache)
    elapsed = time.monotonic() - started
    assert made.returncode == 0, made.stderr
    summary = [x for x in made.stderr.splitlines() if x.startswith("assign --method support")]
    assert summary and "11 answers, 36 calls" in summary[0], made.stderr
    print(f"support on the sample track, embedded model: {summary[0]} ({elapsed:.1f} s wall)")
    for path in judged.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            for sentence in json.loads(line)["sentences"]:
                for pair in sentence["pairs"]:
                    assert pair["label"] in (FS, PS, NS) or "raw" in pair
    scored = _cli("score", "--method", "support", judged, "-o", board, "--topics",
                  SAMPLE / "topics.tsv")
    assert scored.returncode == 0, scored.stderr
    scores = _board(board)
    assert set(scores) == {"sample-good", "sample-middling", "sample-poor"}
    assert all(0.0 <= v <= 1.0 for row in scores.values() for v in row.values())
    # evaluate from a track config: the same prompts, all from the cache, the same board
    out = tmp_path / "eval"
    evaluated = _cli("evaluate", "--track", _track(tmp_path, "local"), "-o", out, *cache)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "36 cache hits" in evaluated.stderr and "0 LLM calls" in evaluated.stderr
    assert (out / "leaderboard.tsv").read_text() == board.read_text()
