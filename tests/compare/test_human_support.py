"""A judge's citation-support labels measured against NIST's assessors: the reader of NIST's
support files (files written here in both published shapes, and malformed ones), the agreement
figures on a simulated judge whose errors are set (against sklearn, a hand-written tau-b and the
measures computed here by hand), and `human-agreement --support` end to end."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from statistics import fmean

import numpy as np
import pytest
from click.testing import CliRunner
from test_human_agreement import assert_labels_agree, tau_b

from nuggetizer.cli import cli
from nuggetizer.compare.human_support import RANKED, support_agreement
from nuggetizer.errors import InputError
from nuggetizer.formats.nist_support import HumanSupport, read_nist_support

LABELS = ("full_support", "partial_support", "no_support")
CODE = {"full_support": "2", "partial_support": "1", "no_support": "0"}
WEIGHT = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}


def segment(t: int, k: int) -> str:
    return f"msmarco_v2.1_doc_{t:02d}_{k}#0_{k}"


def write_support(path: Path, topics: int, runs: int, seed: int = 1,
                  webassess: bool = False, start: int = 0) -> list[dict]:
    """A file in the shape NIST published: one line per (topic, run) answer, each sentence with
    no citation or (without_prediction) its first one, or (Webassess) up to three, the ids
    spelt `sentenceId` / `citationId`, a sentence not worth verifying with "-1" labels."""
    rng = random.Random(seed)
    rows = []
    for t in range(start, start + topics):
        for r in range(runs):
            sentences = []
            for k in range(rng.randint(2, 6)):
                count = rng.choice([0, 1, 1, 2, 3]) if webassess else rng.choice([0, 1, 1, 1])
                refs = rng.sample(range(8), count)
                worthy = not webassess or rng.random() > 0.15
                cites = [{("citationId" if webassess else "citationID"):
                          (ref if webassess else 0), "reference": segment(t, ref),
                          "support": CODE[rng.choice(LABELS)] if worthy else "-1"}
                         for ref in refs]
                sentence = {("sentenceId" if webassess else "sentenceID"): k,
                            "text": f"sentence {k} of run {r} on topic {t}", "citations": cites}
                if webassess:
                    sentence.update({"verification_worthy": "1" if worthy else "0",
                                     "citationsCombibed": "-1"})
                sentences.append(sentence)
            rows.append({"topic_id": f"2024-{t}", "run_id": f"team.run{r}",
                         "sentences": sentences})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


def write_corpus(path: Path, rows: list[dict]) -> None:
    refs = sorted({c["reference"] for row in rows for s in row["sentences"]
                   for c in s["citations"]})
    path.write_text("".join(json.dumps({"docid": d, "segment": f"the text of {d}"}) + "\n"
                            for d in refs))


def test_reads_both_published_shapes(tmp_path: Path) -> None:
    first, web = tmp_path / "without_prediction.jsonl", tmp_path / "webassess.jsonl"
    rows = write_support(first, topics=2, runs=3)
    rows_web = write_support(web, topics=2, runs=3, webassess=True, start=2, seed=2)
    answers = read_nist_support([first, web])
    assert len(answers) == 12 and answers[7].line == 2 and answers[7].path == str(web)
    for answer, row in zip(answers, rows + rows_web):
        assert (answer.qid, answer.run_id) == (row["topic_id"], row["run_id"])
        assert answer.texts == tuple(s["text"] for s in row["sentences"])
        codes = {"2": "full_support", "1": "partial_support", "0": "no_support", "-1": None}
        assert answer.citations == tuple(tuple((c["reference"], codes[c["support"]])
                                               for c in s["citations"])
                                         for s in row["sentences"])
    assert any(label is None for a in answers for cites in a.citations for _, label in cites)


def test_reads_a_sentence_text_given_as_nan(tmp_path: Path) -> None:
    """Some published lines hold `"text": NaN` (Python's json writes it; it is not JSON)."""
    path = tmp_path / "nist.jsonl"
    rows = write_support(path, topics=1, runs=2)
    lines = path.read_text().splitlines()
    text = rows[1]["sentences"][1]["text"]
    lines[1] = lines[1].replace(json.dumps(text), "NaN")
    path.write_text("\n".join(lines) + "\n")
    answers = read_nist_support([path])
    assert answers[1].texts[1] is None and answers[1].texts[0] is not None
    # NaN anywhere else is still an error: here a citation's reference
    k, cited = next((k, s["citations"][0]) for k, s in enumerate(rows[0]["sentences"])
                    if s["citations"])
    lines[0] = lines[0].replace(json.dumps(cited["reference"]), "NaN", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"nist.jsonl:1: field 'sentences\[{k}\]\.citations"
                                         r"\[0\]\.reference' must be string or integer"):
        read_nist_support([path])


@pytest.mark.parametrize("change, message", [
    (lambda row: row["sentences"][1]["citations"].append(
        {"citationID": 1, "reference": "x", "support": "FS"}),
     r"nist.jsonl:3: field 'sentences\[1\]\.citations\[\d\]\.support' must be \"2\" \(full "
     r"support\), \"1\" \(partial\), \"0\" \(no support\) or \"-1\" \(not judged\), got 'FS'"),
    (lambda row: row["sentences"][1].update(sentenceID=4),
     r"nist.jsonl:3: run 'team.run0' topic '2024-1': sentences\[1\] has id 4, expected 1"),
    (lambda row: row["sentences"][0].pop("text"),
     r"nist.jsonl:3: missing field 'sentences\[0\]\.text' \(expected string\)"),
    (lambda row: row.pop("run_id"), r"nist.jsonl:3: missing field 'run_id'"),
    (lambda row: row.update(sentences=[]),
     r"nist.jsonl:3: field 'sentences' must hold at least 1 item"),
])
def test_names_the_file_and_line_of_a_bad_line(tmp_path: Path, change, message) -> None:
    path = tmp_path / "nist.jsonl"
    rows = write_support(path, topics=2, runs=2)
    change(rows[2])
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(InputError, match=message):
        read_nist_support([path])


def test_refuses_an_answer_given_twice_and_a_file_without_answers(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    write_support(one, topics=2, runs=2)
    write_support(two, topics=1, runs=2, start=1)  # topic 2024-1 again
    with pytest.raises(InputError, match=r"two.jsonl:1: run 'team.run0' topic '2024-1' is "
                                         r"given twice \(also .*one.jsonl:3\)"):
        read_nist_support([one, two])
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="empty.jsonl: no answers"):
        read_nist_support([tmp_path / "empty.jsonl"])
    (tmp_path / "bad.jsonl").write_text('{"topic_id": "1", "run_id": "r", "sentences": [\n')
    with pytest.raises(InputError, match="bad.jsonl:1: expected a JSON object"):
        read_nist_support([tmp_path / "bad.jsonl"])


def by_hand(answer: HumanSupport, judged: list[list[tuple[str, str]]], side: str
            ) -> dict[str, float] | None:
    """Weighted precision and recall of one side over the pairs both sides have (the judge's
    first-citation pairs), written out: precision over the labelled pairs, recall over the
    sentences (one without citations 0, one with nothing labelled left out); None when the
    answer cites but has nothing labelled on this side."""
    weights, best, labelled_any = [], [], False
    for cites, pairs in zip(answer.citations, judged):
        if not cites:
            best.append(0.0)
            continue
        mine = []
        for (_ref, human), (_docid, judge) in ((c, p) for c in cites for p in pairs
                                               if c[0] == p[0]):
            label = human if side == "human" else (judge if human is not None else None)
            if label in WEIGHT:
                mine.append(WEIGHT[label])
        if mine:
            labelled_any = True
            weights += mine
            best.append(max(mine))
    if any(answer.citations) and not labelled_any:
        return None
    return {"support_precision": fmean(weights) if weights else 0.0,
            "support_recall": fmean(best) if best else 0.0}


def test_agreement_on_a_simulated_judge_equals_an_independent_computation(
        tmp_path: Path) -> None:
    web = tmp_path / "webassess.jsonl"
    write_support(web, topics=6, runs=7, seed=3, webassess=True)
    answers = read_nist_support([web])
    rng = random.Random(7)
    judged: dict[tuple[str, str], list[list[tuple[str, str]]]] = {}
    for a in answers:  # judges each first citation, erring on a third; a few unjudged
        sentences = []
        for cites in a.citations:
            if not cites:
                sentences.append([])
                continue
            ref, human = cites[0]
            label = human if human is not None and rng.random() > 0.33 else rng.choice(LABELS)
            sentences.append([(ref, "unjudged" if rng.random() < 0.03 else label)])
        judged[a.run_id, a.qid] = sentences
    del judged["team.run2", "2024-4"]
    result = support_agreement(answers, judged)

    kept = [a for a in answers if (a.run_id, a.qid) in judged]
    compared = [(human, pairs[0][1]) for a in kept
                for cites, pairs in zip(a.citations, judged[a.run_id, a.qid])
                for ref, human in cites[:1]]
    labelled = [(h, j) for h, j in compared if h is not None and j != "unjudged"]
    assert result.missing == 1 and result.pairs == len(labelled)
    assert result.human_unjudged == sum(h is None for h, _ in compared)
    assert result.unjudged == sum(h is not None and j == "unjudged" for h, j in compared)
    assert result.uncovered == sum(len(c) - 1 for a in kept for c in a.citations if c) > 0
    assert_labels_agree(result, labelled, LABELS)

    scores = {}
    for a in kept:
        sides = [by_hand(a, judged[a.run_id, a.qid], side) for side in ("human", "judge")]
        if None not in sides:
            scores[a.run_id, a.qid] = sides
    assert result.unscored == len(kept) - len(scores)
    assert result.answers == len(kept)
    runs = sorted({run for run, _ in scores})
    for m in RANKED:
        means = [[fmean(s[side][m] for (run, _), s in scores.items() if run == r) for r in runs]
                 for side in (0, 1)]
        assert [result.human_board[r][m] for r in runs] == pytest.approx(means[0])
        assert [result.judge_board[r][m] for r in runs] == pytest.approx(means[1])
        assert result.run_tau[m] == pytest.approx(tau_b(means[0], means[1]))
        per_topic = []
        for qid in sorted({q for _, q in scores}):
            here = [s for (_, q), s in scores.items() if q == qid]
            per_topic.append(tau_b([s[0][m] for s in here], [s[1][m] for s in here]))
        per_topic = [t for t in per_topic if not np.isnan(t)]
        assert result.topic_tau[m] == pytest.approx(np.mean(per_topic))
        assert result.topics_defined[m] == len(per_topic)
    # a perfect judge agrees perfectly
    perfect = support_agreement(answers, {
        (a.run_id, a.qid): [[(c[0][0], c[0][1] or "unjudged")] if c else []
                            for c in a.citations] for a in answers})
    assert perfect.exact == 1 and perfect.kappa == pytest.approx(1)
    assert all(perfect.run_tau[m] == pytest.approx(1) for m in RANKED)


def run_command(*args: str) -> object:
    return CliRunner().invoke(cli, ["human-agreement", "--support", *args])


def test_the_command_with_the_mock_assessor(tmp_path: Path) -> None:
    first, web, corpus = (tmp_path / "without_prediction.jsonl", tmp_path / "web.jsonl",
                          tmp_path / "corpus.jsonl")
    rows = write_support(first, topics=2, runs=3) + write_support(
        web, topics=2, runs=3, webassess=True, start=2, seed=2)
    write_corpus(corpus, rows)
    out = tmp_path / "ha"
    args = [str(first), str(web), "--corpus", str(corpus), "--assessor", "mock", "-o", str(out)]
    result = run_command(*args)
    assert result.exit_code == 0, result.output
    figures = json.loads((out / "agreement.json").read_text())
    answers = read_nist_support([first, web])
    first_cited = sum(1 for a in answers for t, c in zip(a.texts, a.citations) if c)
    assert figures["answers"] == 12 and figures["spend"]["answers_judged"] == 12
    assert figures["pairs"] + figures["human_unjudged"] + figures["unjudged"] == first_cited
    assert figures["uncovered"] == sum(len(c) - 1 for a in answers for c in a.citations if c)
    spent = figures["spend"]["tokens"]  # one call per sentence's first citation
    assert spent["calls"] + spent["cache_hits"] == first_cited
    assert f"Judge against NIST's assessors (citation support): 12 answers, 3 runs, 4 topics, " \
           f"{figures['pairs']} (sentence, citation) labels" in result.output
    for name in ("agreement.json", "confusion.tsv", "tau.tsv", "human_leaderboard.tsv",
                 "judge_leaderboard.tsv"):
        assert (out / name).is_file() and (out / f"{name}.provenance.json").is_file()
    # the judge's labels as its judgments hold them: the confusion's columns count them
    judged = [json.loads(line) for f in sorted((out / "judge").glob("*.jsonl"))
              for line in f.read_text().splitlines() if line.strip()]
    labels = {(r["run_id"], r["qid"], k, p["docid"]): p["label"] for r in judged
              for k, s in enumerate(r["sentences"]) for p in s["pairs"]}
    human = {(a.run_id, a.qid, k, c[0][0]): c[0][1] for a in answers
             for k, c in enumerate(a.citations) if c}
    counted = Counter(labels[key] for key, h in human.items() if h is not None)
    for label in LABELS:
        assert sum(v for k, v in figures["confusion"].items()
                   if k.endswith(f"|{label}")) == counted[label]
    board = (out / "human_leaderboard.tsv").read_text().splitlines()
    assert board[0] == "run_id\tsupport_recall\tsupport_precision" and len(board) == 4

    again = run_command(*args)  # again: every call replayed, nothing paid twice
    assert again.exit_code == 0, again.output
    spent = json.loads((out / "agreement.json").read_text())["spend"]["tokens"]
    assert spent["calls"] == 0

    every = run_command(*args[:-1], str(tmp_path / "all"), "--set", "citations=all")
    assert every.exit_code == 0, every.output
    figures = json.loads((tmp_path / "all" / "agreement.json").read_text())
    assert figures["uncovered"] == 0
    assert figures["pairs"] + figures["human_unjudged"] == sum(
        len(c) for a in answers for c in a.citations)


def test_only_topics_sample_dry_run_and_mistakes(tmp_path: Path) -> None:
    path, corpus = tmp_path / "nist.jsonl", tmp_path / "corpus.jsonl"
    write_corpus(corpus, write_support(path, topics=4, runs=5))
    result = run_command(str(path), "--corpus", str(corpus), "--assessor", "mock",
                         "--only-topics", "2024-1,2024-2", "--sample", "7", "-o",
                         str(tmp_path / "ha"))
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "ha" / "agreement.json").read_text())
    assert figures["answers"] == 7 and figures["topics"] == 2

    dry = run_command(str(path), "--corpus", str(corpus), "--assessor", "mock", "--dry-run",
                      "-o", str(tmp_path / "dry"))
    assert dry.exit_code == 0, dry.output
    assert not (tmp_path / "dry" / "agreement.json").exists()

    for args, why in (([], "give --corpus"),
                      (["--corpus", str(tmp_path / "none.jsonl")], "none.jsonl"),
                      (["--corpus", str(corpus), "--only-topics", "nope"],
                       "none of these topics")):
        bad = run_command(str(path), *args, "--assessor", "mock", "-o", str(tmp_path / "x"))
        assert bad.exit_code != 0 and why in bad.output and "Traceback" not in bad.output
    nuggets = CliRunner().invoke(cli, ["human-agreement", str(path), "--corpus", str(corpus),
                                       "--assessor", "mock", "-o", str(tmp_path / "y")])
    assert nuggets.exit_code != 0 and "are for --support" in nuggets.output

    # a cited segment the corpus lacks: an error naming it, or unjudged under --allow-missing
    lines = corpus.read_text().splitlines()
    corpus.write_text("\n".join(lines[1:]) + "\n")
    missing = run_command(str(path), "--corpus", str(corpus), "--assessor", "mock", "-o",
                          str(tmp_path / "m"))
    assert missing.exit_code != 0 and "is not in the corpus" in missing.output
    allowed = run_command(str(path), "--corpus", str(corpus), "--assessor", "mock",
                          "--allow-missing", "-o", str(tmp_path / "m"))
    assert allowed.exit_code == 0, allowed.output
    figures = json.loads((tmp_path / "m" / "agreement.json").read_text())
    assert figures["unjudged"] > 0
