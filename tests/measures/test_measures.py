"""The AutoNuggetizer measures: the paper's worked examples, the rules, and L on real runs."""

from __future__ import annotations

import pytest
from flows import score
from shared_data import RAG24

from nuggetizer.formats import read_run
from nuggetizer.measures import answer_length, nugget_scores, word_count
from nuggetizer.scoring import leaderboard_tsv, per_topic_tsv
from nuggetizer.types import AssessedNugget, Assessment

RUNS = RAG24 / "runs"


def labels(vital: dict[str, int], okay: dict[str, int]) -> list[tuple[str, str]]:
    pairs = [("vital", a) for a, n in vital.items() for _ in range(n)]
    return pairs + [("okay", a) for a, n in okay.items() for _ in range(n)]


def rounded(scores: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in scores.items()}


def test_worked_example_automatic_nuggets() -> None:
    pairs = labels(
        {"support": 4, "partial_support": 3, "not_support": 2},
        {"support": 2, "partial_support": 4},
    )
    assert rounded(nugget_scores(pairs)) == {
        "V_strict": 0.4444, "V": 0.6111, "A_strict": 0.4000, "A": 0.6333,
        "W_strict": 0.4167, "W": 0.6250,
    }


def test_worked_example_post_edited_nuggets() -> None:
    pairs = labels({"support": 1, "not_support": 5}, {"support": 4, "not_support": 8})
    assert rounded(nugget_scores(pairs)) == {
        "V_strict": 0.1667, "V": 0.1667, "A_strict": 0.2778, "A": 0.2778,
        "W_strict": 0.2500, "W": 0.2500,
    }


def test_unjudged_nuggets_are_left_out_not_scored_as_not_support() -> None:
    with_unjudged = [("vital", "support"), ("vital", "unjudged"), ("okay", "not_support")]
    assert nugget_scores(with_unjudged) == nugget_scores(with_unjudged[::2])
    assert nugget_scores(with_unjudged)["V_strict"] == 1.0


def test_no_vital_nuggets_scores_zero_v() -> None:
    scores = nugget_scores([("okay", "support"), ("okay", "support")])
    assert scores["V"] == scores["V_strict"] == 0.0
    assert scores["A"] == scores["W"] == 1.0


def test_length_is_nfkc_words_after_the_400_word_trim() -> None:
    # NFKC: a ligature, an ideographic space and a no-break space
    assert word_count("ﬁve　words\u00a0here") == 3
    sentences = ["word " * 150, "word " * 200, "word " * 100]
    assert answer_length(sentences) == 350
    assert answer_length(["word " * 401]) == 0
    assert answer_length(["a b", "c"]) == 3


def assessment(run_id: str, qid: str, pairs: list[tuple[str, str]], length: int) -> Assessment:
    nuggets = [AssessedNugget(text=f"n{i}", importance=imp, assignment=asg)  # type: ignore[arg-type]
               for i, (imp, asg) in enumerate(pairs)]
    return Assessment(run_id=run_id, qid=qid, query="q", answer_text="", length=length,
                      nuggets=nuggets)


def test_a_topic_the_run_did_not_answer_scores_zero() -> None:
    table = score(
        [assessment("r1", "t1", [("vital", "support")], 10),
         assessment("r1", "t2", [("vital", "support")], 30),
         assessment("r2", "t1", [("vital", "support")], 50)],
        universe=["t1", "t2"],
    )
    assert table.means["r1"]["V_strict"] == 1.0
    assert table.means["r2"]["V_strict"] == 0.5
    assert table.means["r2"]["L"] == 50.0  # L is the mean over the topics the run answered
    assert table.missing == {"r1": 0, "r2": 1}
    assert leaderboard_tsv(table).splitlines() == [
        "run_id\tV_strict\tV\tW_strict\tW\tA_strict\tA\tL",
        "r1\t1.0000\t1.0000\t1.0000\t1.0000\t1.0000\t1.0000\t20.0000",
        "r2\t0.5000\t0.5000\t0.5000\t0.5000\t0.5000\t0.5000\t50.0000",
    ]
    rows = per_topic_tsv(table).splitlines()
    assert "r2\tt2\tV_strict\t0.0000" in rows
    assert "r2\tall\tL\t50.0000" in rows


@pytest.mark.parametrize(
    ("run", "mean_length", "over_400"),
    [
        ("baseline_rag24.test_command-r-plus_top20", 251.7508, 10),
        ("baseline_rag24.test_gpt-4o_top20", 300.9269, 30),
        ("baseline_rag24.test_l31_70b_instruct_top20", 196.7874, 4),
    ],
)
def test_length_of_the_real_trec_rag_2024_runs(run: str, mean_length: float, over_400: int) -> None:
    """Mean L over the 301 topics, as this project computes it (no other source exists)."""
    run_id, answers = read_run(RUNS / f"{run}.jsonl")
    assert run_id == run and len(answers) == 301
    lengths = [answer_length([s.text for s in a.sentences]) for a in answers.values()]
    raw = [sum(word_count(s.text) for s in a.sentences) for a in answers.values()]
    assert round(sum(lengths) / len(lengths), 4) == mean_length
    assert sum(1 for n in raw if n > 400) == over_400
    assert max(lengths) <= 400


def test_label_scores_told_nothing_is_unjudged_score_as_when_they_count() -> None:
    """`all_judged` (the score engine knows no assignment is unjudged) takes each group's
    not_support count as the rest of it: the same scores as counting, on every mix of labels,
    including keys with a nugget of unjudged importance and keys without a vital one."""
    import random

    from nuggetizer.measures.nuggets import importance_picks, label_scores

    rng = random.Random(7)
    for _ in range(2000):
        size = rng.randint(1, 25)
        importance = [rng.choice(("vital", "okay", "okay", "unjudged")) for _ in range(size)]
        assignment = [rng.choice(("support", "partial_support", "not_support"))
                      for _ in range(size)]
        picks = importance_picks(tuple(importance))
        assert label_scores(importance, assignment, picks, True) == \
            label_scores(importance, assignment, picks) == label_scores(importance, assignment)
