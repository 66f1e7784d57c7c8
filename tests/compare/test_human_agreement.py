"""A judge measured against NIST's assessors: the reader of NIST's assignment file (the shared
sample and files written in its shape), the agreement figures on a simulated judge whose
errors are set (against sklearn and a hand-written tau-b), and the command end to end."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from shared_data import RAG24_HUMAN
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from nuggetizer.cli import cli
from nuggetizer.compare.human import RANKED, human_agreement
from nuggetizer.errors import InputError
from nuggetizer.formats.nist import read_nist_assignments

SAMPLE = RAG24_HUMAN / "nugget_assignment.20241218.sample.jsonl"
LABELS = ("support", "partial_support", "not_support")


def test_reads_the_shared_sample() -> None:
    answers = read_nist_assignments(SAMPLE)
    assert len(answers) == 5
    assert {a.qid for a in answers} == {"2024-105741"}
    assert answers[0].run_id == "BEST_cot_gpt3.5"
    assert all(len(a.labels) == len(a.texts) == 16 for a in answers)
    assert answers[0].importance.count("vital") == 3
    # the first answer's labels as the file gives them
    first = json.loads(SAMPLE.read_text().splitlines()[0])
    assert answers[0].labels == tuple(n["assignment"] for n in first["nuggets"])


def write_nist(path: Path, topics: int, runs: int, seed: int = 1) -> list[dict]:
    """A file in NIST's shape: each topic's nuggets shared by its answers, labels drawn."""
    rng = random.Random(seed)
    rows = []
    for t in range(topics):
        nuggets = [(f"nugget {t}.{k}", "vital" if k < 3 else "okay") for k in range(6)]
        for r in range(runs):
            rows.append({"query": f"question {t}", "qid": f"t{t}", "run_id": f"run{r}",
                         "answer_text": f"answer of run {r} to {t}", "response_length": 7,
                         "nuggets": [{"text": x, "importance": i, "assignment":
                                      rng.choice(LABELS)} for x, i in nuggets]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_reads_files_in_its_shape_and_names_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "nist.jsonl"
    rows = write_nist(path, topics=3, runs=4)
    answers = read_nist_assignments(path)
    assert len(answers) == 12 and answers[5].line == 6
    assert answers[5].labels == tuple(n["assignment"] for n in rows[5]["nuggets"])

    rows[4]["nuggets"][2]["assignment"] = "supported"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"nist.jsonl:5: .*nuggets\[2\]\.assignment"):
        read_nist_assignments(path)

    rows[4]["nuggets"][2]["assignment"] = "support"
    rows[6]["nuggets"][0]["text"] = "another nugget"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"nist.jsonl:7: topic 't1': the nuggets differ from "
                                         r"those of line 5"):
        read_nist_assignments(path)


def tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b by counting pairs (an independent computation)."""
    conc = disc = tx = ty = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                conc += 1
            else:
                disc += 1
    return (conc - disc) / np.sqrt((conc + disc + tx) * (conc + disc + ty))


def assert_labels_agree(result: Any, labelled: list[tuple[str, str]], labels: tuple[str, ...]
                        ) -> None:
    """The confusion matrix, exact agreement and both kappas of `result` equal sklearn's over
    the (human, judge) labels both gave (the strict kappa: the first label against the rest)."""
    human, judge = [h for h, _ in labelled], [j for _, j in labelled]
    matrix = confusion_matrix(human, judge, labels=list(labels))
    assert all(result.confusion.get((h, j), 0) == matrix[x, y]
               for x, h in enumerate(labels) for y, j in enumerate(labels))
    assert result.exact == pytest.approx(np.trace(matrix) / matrix.sum())
    assert result.kappa == pytest.approx(cohen_kappa_score(human, judge))
    assert result.kappa_strict == pytest.approx(cohen_kappa_score(
        [h == labels[0] for h in human], [j == labels[0] for j in judge]))


def v_strict(importance: tuple[str, ...], labels: list[str]) -> float:
    """V_strict of one answer; an unjudged label is out of both sums (never not_support)."""
    vital = [lab for i, lab in zip(importance, labels) if i == "vital" and lab != "unjudged"]
    return sum(lab == "support" for lab in vital) / len(vital)


def test_agreement_on_a_simulated_judge_equals_an_independent_computation(
        tmp_path: Path) -> None:
    path = tmp_path / "nist.jsonl"
    write_nist(path, topics=6, runs=8, seed=3)
    answers = read_nist_assignments(path)
    rng = random.Random(7)
    judged: dict[tuple[str, str], list[str]] = {}
    for a in answers:  # the judge errs on a quarter of the labels, one answer left unjudged
        judged[a.run_id, a.qid] = [rng.choice(LABELS) if rng.random() < 0.25 else lab
                                   for lab in a.labels]
    judged["run3", "t2"][1] = "unjudged"
    del judged["run0", "t5"]
    result = human_agreement(answers, judged)

    pairs = [(h, j) for a in answers if (a.run_id, a.qid) in judged
             for h, j in zip(a.labels, judged[a.run_id, a.qid])]
    kept = [(h, j) for h, j in pairs if j != "unjudged"]
    assert result.missing == 1 and result.unjudged == 1 and result.nuggets == len(kept)
    assert_labels_agree(result, kept, LABELS)

    scored = [a for a in answers if (a.run_id, a.qid) in judged]
    runs = sorted({a.run_id for a in scored})
    means = {side: [fmean([v_strict(a.importance, list(a.labels) if side == "h" else
                                      judged[a.run_id, a.qid]) for a in scored
                             if a.run_id == r]) for r in runs] for side in "hj"}
    assert result.run_tau["V_strict"] == pytest.approx(tau_b(means["h"], means["j"]))
    per_topic = []
    for qid in sorted({a.qid for a in scored}):
        here = [a for a in scored if a.qid == qid]
        per_topic.append(tau_b([v_strict(a.importance, list(a.labels)) for a in here],
                               [v_strict(a.importance, judged[a.run_id, a.qid]) for a in here]))
    per_topic = [t for t in per_topic if not np.isnan(t)]
    assert result.topic_tau["V_strict"] == pytest.approx(np.mean(per_topic))
    assert set(result.run_tau) == set(RANKED)
    # a perfect judge agrees perfectly
    perfect = human_agreement(answers, {(a.run_id, a.qid): list(a.labels) for a in answers})
    assert perfect.exact == 1 and perfect.kappa == pytest.approx(1)
    assert all(perfect.run_tau[m] == pytest.approx(1) for m in RANKED)


def test_the_command_on_the_shared_sample_with_the_mock_assessor(tmp_path: Path) -> None:
    out = tmp_path / "ha"
    args = ["human-agreement", str(SAMPLE), "--assessor", "mock", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Judge against NIST's assessors: 5 answers, 5 runs, 1 topics, 80 nugget labels" \
        in result.output
    figures = json.loads((out / "agreement.json").read_text())
    assert figures["nuggets"] == 80 and figures["spend"]["answers_judged"] == 5
    spent = figures["spend"]["tokens"]  # 16 nuggets, 10 a call: 2 calls per answer
    assert spent["calls"] + spent["cache_hits"] == 10
    assert (out / "agreement.json.provenance.json").is_file()
    # the human leaderboard from the same file, computed here by hand
    answers = read_nist_assignments(SAMPLE)
    board = (out / "human_leaderboard.tsv").read_text().splitlines()
    got = {line.split("\t")[0]: float(line.split("\t")[1]) for line in board[1:]}
    assert got == {a.run_id: pytest.approx(v_strict(a.importance, list(a.labels)), abs=1e-4)
                   for a in answers}
    # the judge's labels as its assessments hold them
    judged = [json.loads(line) for f in sorted((out / "judge").glob("*.jsonl"))
              for line in f.read_text().splitlines() if line.strip()]
    counted = Counter(n["assignment"] for r in judged for n in r["nuggets"])
    assert sum(counted.values()) == 80
    assert sum(v for k, v in figures["confusion"].items()
               if k.endswith("|support")) == counted["support"]

    again = CliRunner().invoke(cli, args)  # again: every call replayed, nothing paid twice
    assert again.exit_code == 0, again.output
    spent = json.loads((out / "agreement.json").read_text())["spend"]["tokens"]
    assert spent["calls"] == 0 and spent["cache_hits"] == 10


def test_only_topics_and_sample(tmp_path: Path) -> None:
    path = tmp_path / "nist.jsonl"
    write_nist(path, topics=4, runs=5)
    out = tmp_path / "ha"
    result = CliRunner().invoke(cli, ["human-agreement", str(path), "--assessor", "mock",
                                      "--only-topics", "t1,t2", "--sample", "7", "-o", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads((out / "agreement.json").read_text())
    assert figures["answers"] == 7 and figures["topics"] == 2

    result = CliRunner().invoke(cli, ["human-agreement", str(path), "--assessor", "mock",
                                      "--only-topics", "nope", "-o", str(tmp_path / "x")])
    assert result.exit_code != 0 and "none of these topics" in result.output
    assert "Traceback" not in result.output

    dry = CliRunner().invoke(cli, ["human-agreement", str(path), "--assessor", "mock",
                                   "--dry-run", "-o", str(tmp_path / "dry")])
    assert dry.exit_code == 0, dry.output
    assert not (tmp_path / "dry" / "agreement.json").exists()



def test_an_answer_the_judge_labelled_nothing_of_is_left_out_of_both_boards_as_score_does(
        tmp_path: Path) -> None:
    """The judge failed every window of one answer (run2, t1): it is no 0 on the judge's side
    (the issue's V_strict 0.2981 on the board where `score` says 0.3727); both boards and the
    rankings leave it out and count it, and the judge's board equals what the score engine
    makes of the same labels."""
    from nuggetizer.interface.registry import make_method
    from nuggetizer.scoring.engine import read_judged, score_judged

    path = tmp_path / "nist.jsonl"
    write_nist(path, topics=4, runs=5, seed=5)
    answers = read_nist_assignments(path)
    judged = {(a.run_id, a.qid): list(a.labels) for a in answers}
    judged["run2", "t1"] = ["unjudged"] * 6
    result = human_agreement(answers, judged)
    assert (result.nothing_judged, result.missing, result.answers) == (1, 0, 19)
    assert "1 answers with nothing judged by the judge, left out of both boards" \
        in result.headline()
    assert result.unjudged == 6 and result.confusion_tsv().count("\t") > 0
    kept = [a for a in answers if (a.run_id, a.qid) != ("run2", "t1")]
    for side, board in (("h", result.human_board), ("j", result.judge_board)):
        for run in sorted(board):
            mine = [v_strict(a.importance, list(a.labels) if side == "h" else
                             judged[a.run_id, a.qid]) for a in kept if a.run_id == run]
            assert board[run]["V_strict"] == pytest.approx(fmean(mine))
    assert json.loads(result.json())["nothing_judged"] == 1

    folder = tmp_path / "judge"  # the same labels as assessments, scored by `score`'s engine
    folder.mkdir()
    for run in sorted({a.run_id for a in answers}):
        (folder / f"{run}.jsonl").write_text("".join(json.dumps({
            "run_id": a.run_id, "qid": a.qid, "query": a.query, "answer_text": a.answer,
            "nuggets": [{"text": t, "importance": i, "assignment": lab} for t, i, lab in
                        zip(a.texts, a.importance, judged[a.run_id, a.qid])]}) + "\n"
            for a in answers if a.run_id == run))
    method = make_method("nuggets", {})
    table = score_judged(method, read_judged(method, [folder], scoring=True))
    assert table.left_out["answers with nothing judged"] == 1
    for run, row in result.judge_board.items():
        assert table.means[run]["V_strict"] == pytest.approx(row["V_strict"])
