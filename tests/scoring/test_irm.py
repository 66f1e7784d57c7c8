"""ir_measures and ir_datasets interoperability."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from flows import score
from shared_data import RAG24

from nuggetizer.cli import cli
from nuggetizer.formats import read_nuggets, read_qrels, read_topics
from nuggetizer.scoring import per_topic_tsv
from nuggetizer.types import AssessedNugget, Assessment

ir_measures = pytest.importorskip("ir_measures")
irm = pytest.importorskip("nuggetizer.scoring.irm")

LABELS = ("support", "partial_support", "not_support")


@pytest.fixture(scope="module")
def assessments() -> list[Assessment]:
    """Three runs on eight real topics of the real nuggets, labels drawn with a fixed seed."""
    keys = read_nuggets(RAG24 / "nuggets.mistral.jsonl", lenient=True)
    rng = random.Random(11)
    qids = [q for q in keys if all(n.importance != "unjudged" for n in keys[q].nuggets)][:8]
    return [
        Assessment(run_id=run, qid=q, query=keys[q].query, answer_text="a", length=5,
                   nuggets=[AssessedNugget(text=n.text, importance=n.importance,
                                           assignment=rng.choice(LABELS))
                            for n in keys[q].nuggets])
        for run in ("r1", "r2", "r3") for q in qids
    ]


def test_runtime_measures_match_score(assessments):
    table = score(assessments)
    via_irm = irm.aggregate(assessments)
    for run, means in via_irm.items():
        for name in irm.NUGGET_MEASURE_NAMES:
            assert means[name] == pytest.approx(table.means[run][name])
    # per query, through ir_measures' own iter_calc
    measure = irm.measures()["V_strict"]
    qrels = irm.nugget_qrels(assessments)
    for metric in ir_measures.iter_calc([measure], qrels, irm.nugget_run(assessments, "r2")):
        assert metric.value == pytest.approx(table.per_topic["r2"][metric.query_id]["V_strict"])
    assert str(measure) == "V_strict"


def test_per_topic_tsv_reads_as_ir_measures_results(assessments, tmp_path):
    table = score(assessments)
    path = tmp_path / "per_topic.tsv"
    path.write_text(per_topic_tsv(table))
    results = irm.read_per_topic(path)
    assert set(results) == {"r1", "r2", "r3"}
    for run, metrics in results.items():
        assert all(isinstance(m, ir_measures.Metric) for m in metrics)
        by_key = {(m.query_id, str(m.measure)): m.value for m in metrics}
        for qid, row in table.per_topic[run].items():
            assert by_key[(qid, "V_strict")] == pytest.approx(row["V_strict"], abs=5e-5)
            assert by_key[(qid, "L")] == 5
        assert by_key[("all", "A")] == pytest.approx(table.means[run]["A"], abs=5e-5)
        v_strict = [m for m in metrics if str(m.measure) == "V_strict"]
        assert v_strict[0].measure is irm.measures()["V_strict"]
    path.write_text("run_id\ttopic_id\tmeasure\tvalue\nr1\tq\tV\tx\n")
    with pytest.raises(Exception, match=r"per_topic.tsv:2: value 'x' is not a number"):
        irm.read_per_topic(path)


@pytest.fixture
def offline_dataset(tmp_path, monkeypatch) -> str:
    """A dataset made offline from local files and registered with ir_datasets."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "queries.tsv").write_text("q1\twhat is a nugget\nq2\twho wrote the paper\n")
    (folder / "docs.tsv").write_text("d1\tA nugget is an atomic fact.\nd2\tUnrelated text.\n"
                                     "d3\tThe paper was written by Ann and Bo.\n")
    (folder / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    name = f"nuggetizer-test/{tmp_path.name}"
    ir_datasets.registry.register(name, Dataset(
        TsvDocs(LocalDownload(folder / "docs.tsv")),
        TsvQueries(LocalDownload(folder / "queries.tsv")),
        TrecQrels(LocalDownload(folder / "qrels.txt"), {0: "no", 1: "yes", 2: "very"})))
    return name


def test_ir_datasets_export_feeds_nuggetize_inputs(offline_dataset, tmp_path):
    out = tmp_path / "track"
    result = CliRunner().invoke(cli, ["irds-export", offline_dataset, "-o", str(out)])
    assert result.exit_code == 0, result.output
    topics = read_topics(out / "topics.tsv")
    assert {t: v.text for t, v in topics.items()} == {"q1": "what is a nugget",
                                                      "q2": "who wrote the paper"}
    assert [(q.qid, q.docid, q.grade) for q in read_qrels(out / "qrels.txt")] == [
        ("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
    corpus = (out / "corpus.jsonl").read_text().splitlines()
    assert len(corpus) == 2 and "atomic fact" in corpus[0] and "d2" not in "".join(corpus)
    from nuggetizer.formats import read_corpus

    segments = read_corpus(Path(out / "corpus.jsonl"), {"d1", "d3"})
    assert segments["d3"].text == "The paper was written by Ann and Bo."
    result = CliRunner().invoke(cli, ["irds-export", "no-such/dataset", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no dataset 'no-such/dataset'" in result.stderr
