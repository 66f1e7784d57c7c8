"""NIST's citation-support files: the reader, on files written here in both published shapes,
and malformed ones."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nuggetizer.errors import InputError
from nuggetizer.formats.nist_support import read_nist_support

LABELS = ("full_support", "partial_support", "no_support")
CODE = {"full_support": "2", "partial_support": "1", "no_support": "0"}


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
