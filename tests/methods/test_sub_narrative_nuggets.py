"""TREC RAG 2026 nuggets per sub-narrative, on the real dev nuggets: `mapped_sub_narrative` and
`source` kept through reading and writing keys, post-editing sheets and assignment (the mock
backend); the per-sub-narrative coverage the score gives equals a count made here from the
assessment labels; a key without sub-narratives gets no such column."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import pytest
from browser import drawn_dom
from click.testing import CliRunner
from shared_data import RAG26_DEV
from test_rag26 import write_run

from nuggetizer.cli import cli
from nuggetizer.formats import nuggets_record, read_nuggets
from nuggetizer.report.drill import file_names

NUGGETS = RAG26_DEV / "rag25-dev-nuggets.jsonl"
TOPICS = RAG26_DEV / "rag25-topics-dev.tsv"
FIELDS = ("text", "importance", "mapped_sub_narrative", "source")
QIDS = 3  # topics the test run answers


def invoke(*args: str | Path) -> Any:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def dev_lines() -> list[dict[str, Any]]:
    return [json.loads(x) for x in NUGGETS.read_text(encoding="utf-8").splitlines() if x]


@pytest.fixture()
def key(tmp_path: Path) -> Path:
    """The dev nuggets with each topic's query from the dev topics (the file has none)."""
    queries = dict(line.split("\t", 1) for line in
                   TOPICS.read_text(encoding="utf-8").splitlines() if line.strip())
    path = tmp_path / "dev-nuggets.jsonl"
    path.write_text("".join(json.dumps({**obj, "query": queries[obj["qid"]].strip()}) + "\n"
                            for obj in dev_lines()), encoding="utf-8")
    return path


def nugget_fields(path: Path) -> dict[str, list[dict[str, str]]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return {o["qid"]: [{f: n[f] for f in FIELDS} for n in o["nuggets"]] for o in lines}


def test_dev_nuggets_round_trip_through_key_and_post_editing_sheet(key: Path,
                                                                    tmp_path: Path) -> None:
    original = {o["qid"]: o["nuggets"] for o in dev_lines()}
    assert any(n["source"] == "post-edit" for ns in original.values() for n in ns)
    written = tmp_path / "written.jsonl"
    written.write_text("".join(json.dumps(nuggets_record(nl)) + "\n"
                               for nl in read_nuggets(key).values()), encoding="utf-8")
    assert nugget_fields(written) == original
    sheet = tmp_path / "nuggets.tsv"
    invoke("export-nuggets", key, "-o", sheet)
    header = [line for line in sheet.read_text(encoding="utf-8").splitlines()
              if not line.startswith("#")][0]
    assert header.split("\t")[-2:] == ["mapped_sub_narrative", "source"]
    imported = tmp_path / "imported.jsonl"
    invoke("import-nuggets", sheet, "-o", imported)
    assert nugget_fields(imported) == original


def hand_coverage(nuggets: list[dict[str, Any]]) -> dict[str, float]:
    """Mean over sub-narratives of the share of their judged nuggets labelled support."""
    result = {}
    for measure, wanted in (("SN_cov_vital", ("vital",)), ("SN_cov_all", ("vital", "okay"))):
        groups: dict[str, list[int]] = {}
        for n in nuggets:
            if n["importance"] in wanted and n["assignment"] != "unjudged":
                groups.setdefault(n["mapped_sub_narrative"], []).append(
                    n["assignment"] == "support")
        shares = [sum(g) / len(g) for g in groups.values()]
        result[measure] = sum(shares) / len(shares) if shares else 0.0
    return result


def per_topic(path: Path) -> dict[tuple[str, str], float]:
    rows = [x.split("\t") for x in path.read_text(encoding="utf-8").splitlines()[1:]]
    return {(r[1], r[2]): float(r[3]) for r in rows}


def test_assignment_keeps_the_fields_and_score_gives_coverage(key: Path,
                                                              tmp_path: Path) -> None:
    qids = [o["qid"] for o in dev_lines()][:QIDS]

    def on_dev_topics(lines: list[dict[str, Any]]) -> None:
        del lines[QIDS:]
        for line, qid in zip(lines, qids, strict=True):
            line["metadata"]["narrative_id"] = qid

    run = write_run(tmp_path / "run.jsonl", on_dev_topics)
    out = tmp_path / "assigned"
    invoke("assign", "--run", run, "--nuggets", key, "-o", out, "--assessor", "mock",
           "--no-cache")
    records = [json.loads(x) for x in (out / "run-x.jsonl").read_text().splitlines()]
    assert [r["qid"] for r in records] == qids
    original = {o["qid"]: o["nuggets"] for o in dev_lines()}
    for record in records:
        kept = [{f: n[f] for f in FIELDS} for n in record["nuggets"]]
        assert kept == original[record["qid"]]
    labels = {n["assignment"] for r in records for n in r["nuggets"]}
    assert {"support", "not_support"} <= labels  # the hand count below is not trivial
    table = tmp_path / "pt.tsv"
    invoke("score", "--nuggets", key, out, "-o", tmp_path / "lb.tsv", "--per-topic", table)
    got = per_topic(table)
    for record in records:
        for measure, value in hand_coverage(record["nuggets"]).items():
            assert got[(record["qid"], measure)] == pytest.approx(value, abs=5e-5)
    assert got[(next(q for q in original if q not in qids), "SN_cov_all")] == 0.0
    assert "SN_cov_vital" in (tmp_path / "lb.tsv").read_text().splitlines()[0]
    invoke("export-sheets", "--assessments", out, "-o", tmp_path / "sheets")
    invoke("import-sheets", tmp_path / "sheets", "--nuggets", key, "-o", tmp_path / "manual")
    manual = [json.loads(x) for x in (tmp_path / "manual" / "run-x.jsonl").read_text()
              .splitlines()]
    def fields(rs: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
        return {r["qid"]: [{f: n[f] for f in (*FIELDS, "assignment")} for n in r["nuggets"]]
                for r in rs}

    assert fields(manual) == fields(records)
    html = tmp_path / "html"
    invoke("report", out, "--nuggets", key, "-o", html, "--measure", "SN_cov_vital")
    page = (html / "index.html").read_text(encoding="utf-8")
    assert "<th>SN_cov_all</th>" in page and "mean over its sub-narratives" in page
    # the topic's page gives its key with each nugget's sub-narrative
    first = records[0]
    shown = drawn_dom(html / "topics" / file_names([first["qid"]])[first["qid"]])
    for nugget in first["nuggets"]:
        row = (f"<td class=\"text\">{escape(nugget['text'], quote=False)}</td>"
               f"<td class=\"text\">{nugget['importance']}</td><td class=\"text\">"
               f"{escape(nugget['mapped_sub_narrative'] or '-', quote=False)}</td>")
        assert row in shown, row


def test_a_key_without_sub_narratives_has_no_coverage_column(key: Path,
                                                              tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({**o, "nuggets": [
        {"text": n["text"], "importance": n["importance"]} for n in o["nuggets"]]}) + "\n"
        for o in map(json.loads, key.read_text().splitlines())), encoding="utf-8")
    qid = dev_lines()[0]["qid"]
    run = write_run(tmp_path / "run.jsonl", lambda lines: (
        lines.__delitem__(slice(1, None)), lines[0]["metadata"].update(narrative_id=qid)))
    out = tmp_path / "assigned"
    invoke("assign", "--run", run, "--nuggets", plain, "-o", out, "--assessor", "mock",
           "--no-cache")
    invoke("score", "--nuggets", plain, out, "-o", tmp_path / "lb.tsv", "--per-topic",
           tmp_path / "pt.tsv")
    assert (tmp_path / "lb.tsv").read_text().splitlines()[0].split("\t") == [
        "run_id", "V_strict", "V", "W_strict", "W", "A_strict", "A", "L"]
    assert "SN_cov" not in (tmp_path / "pt.tsv").read_text()
