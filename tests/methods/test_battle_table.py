"""Battles as `score` reads them (methods/battles/table.py): one table of arrays, read in
blocks whose checks run at once. Every kind of line the full reader takes gives the battle
the full reader gives; every line it refuses is refused with its message, file and line;
what is read keeps the file's order across blocks."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.errors import InputError
from nuggetizer.methods.battles import BattlesMethod
from nuggetizer.methods.battles import table as battle_table
from nuggetizer.scoring import read_judged, score_judged

RUNS = ["alpha", "beta", "gamma", "delta"]
VERDICTS = ["A", "B", "tie", "unjudged"]
STYLE = {"words": 120, "headers": 1, "list_items": 3, "bold": 0, "citations": 2}


def mt_bench(record: dict[str, Any]) -> tuple[str, bool | None, int]:
    """The battle's result for run A, its flip and its unjudged orders, by MT-Bench's rule
    written out here (the side shown first won on "A")."""
    own = {"A": "first", "B": "second", "tie": "tie"}
    for_a = []
    for order in record["orders"]:
        said = own.get(order["verdict"])
        if said is None:
            for_a.append(None)
        elif said == "tie":
            for_a.append("tie")
        else:
            shown_first_is_a = order["first"] == record["run_a"]
            won_first = said == "first"
            for_a.append("a" if won_first == shown_first_is_a else "b")
    unjudged = sum(o["verdict"] == "unjudged" for o in record["orders"])
    if None in for_a:
        return "unjudged", None, unjudged
    if len(for_a) == 1:
        return for_a[0], None, unjudged
    return (for_a[0] if for_a[0] == for_a[1] else "tie"), for_a[0] != for_a[1], unjudged


def battle(rng: random.Random, qid: str, a: str, b: str) -> dict[str, Any]:
    """A battle line in any shape the step writes: one order or two, in either order, any
    verdict, style or none."""
    if rng.random() < 0.3:
        orders = [{"first": rng.choice([a, b]), "verdict": rng.choice(VERDICTS)}]
    else:
        firsts = [a, b] if rng.random() < 0.5 else [b, a]
        orders = [{"first": f, "verdict": rng.choice(VERDICTS)} for f in firsts]
    record: dict[str, Any] = {"qid": qid, "run_a": a, "run_b": b, "narrative": "n",
                              "orders": orders, "result": "tie", "flipped": False,
                              "unjudged": 0, "provenance": {"model": "m"}}
    if rng.random() < 0.8:
        record["style"] = {"a": dict(STYLE), "b": {**STYLE, "words": rng.randint(0, 900)}}
    return record


def write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records))
    return path


def journal(tmp_path: Path, seed: int = 0, topics: int = 30) -> tuple[Path, list[dict]]:
    rng = random.Random(seed)
    records = [battle(rng, f"q{t}", a, b) for t in range(topics)
               for i, a in enumerate(RUNS) for b in RUNS[i + 1:]]
    return write(tmp_path / "battles.jsonl", records), records


@pytest.mark.parametrize("chunk", [50, 7 * 300, 1 << 23])  # lines longer than a chunk, many
def test_every_shape_reads_as_the_full_reader_and_mt_bench_rule_give_it(tmp_path, monkeypatch,
                                                                        chunk):
    monkeypatch.setattr(battle_table, "CHUNK", chunk)
    path, records = journal(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the last line without its newline
    method = BattlesMethod()
    table = method.read_table([path])
    read = list(table)
    assert len(read) == len(records)
    full = [j.record for j in method.read_judged(path)]
    for k, (got, written, checked) in enumerate(zip(read, records, full)):
        assert (got.path, got.line) == (path, k + 1)
        record = got.record
        assert (record["qid"], record["run_a"], record["run_b"]) == \
            (written["qid"], written["run_a"], written["run_b"])
        assert record["orders"] == [{"first": o["first"], "verdict": o["verdict"]}
                                    for o in written["orders"]]
        result, flip, unjudged = mt_bench(written)
        assert (record["result"], record["unjudged"]) == (result, unjudged) == \
            (checked["result"], checked["unjudged"])
        if flip is not None:
            assert record["flipped"] == flip == checked["flipped"]
    styled = [("style" in r) for r in records]
    assert table.styled.tolist() == styled
    words = [r["style"]["b"]["words"] if "style" in r else 0 for r in records]
    assert table.style[:, len(STYLE)].tolist() == words  # B's words, after A's five counts


def test_ids_that_are_numbers_are_read_as_text_like_the_full_reader(tmp_path):
    record = {"qid": 1001, "run_a": 7, "run_b": "alpha",
              "orders": [{"first": 7, "verdict": "A"}, {"first": "alpha", "verdict": "B"}]}
    path = write(tmp_path / "b.jsonl", [record] * 1 + [
        {**record, "qid": "1002"}])
    table = BattlesMethod().read_table([path])
    assert table.topics == ["1001", "1002"] and table.runs == ["7", "alpha"]
    assert [j.record["result"] for j in table] == ["a", "a"]


@pytest.mark.parametrize("line, says", [
    ('{"qid": "q1", "run_a": "alpha", "run_b": "beta"', "invalid JSON"),
    ({"qid": "q1", "run_a": "alpha", "run_b": "alpha",
      "orders": [{"first": "alpha", "verdict": "A"}]}, "battles itself"),
    ({"qid": "q1", "run_a": "alpha", "run_b": "beta",
      "orders": [{"first": "gamma", "verdict": "A"}]}, "run_a or run_b"),
    ({"qid": "q1", "run_a": "alpha", "run_b": "beta",
      "orders": [{"first": "alpha", "verdict": "A"}, {"first": "alpha", "verdict": "B"}]},
     "one with each run"),
    ({"qid": "q1", "run_a": "alpha", "run_b": "beta",
      "orders": [{"first": "alpha", "verdict": "maybe"}]}, "--lenient"),
    ({"qid": "q1", "run_a": "alpha", "run_b": "beta", "orders": []}, "orders"),
    ({"qid": ["q1"], "run_a": "alpha", "run_b": "beta",
      "orders": [{"first": "alpha", "verdict": "A"}]}, "qid"),
])
def test_a_bad_line_is_refused_naming_its_file_and_line(tmp_path, monkeypatch, line, says):
    monkeypatch.setattr(battle_table, "CHUNK", 4 * 300)
    path, records = journal(tmp_path, topics=2)
    lines: list[Any] = list(records)
    lines.insert(5, line)
    write(path, lines)
    with pytest.raises(InputError) as raised:
        BattlesMethod().read_table([path])
    assert raised.value.path == str(path) and raised.value.line == 6
    assert says in str(raised.value)


def test_lenient_reads_an_off_menu_verdict_as_unjudged_in_its_place(tmp_path, monkeypatch):
    monkeypatch.setattr(battle_table, "CHUNK", 4 * 300)
    path, records = journal(tmp_path, topics=2)
    odd = {"qid": "q9", "run_a": "alpha", "run_b": "beta",
           "orders": [{"first": "alpha", "verdict": "maybe"},
                      {"first": "beta", "verdict": "B"}]}
    write(path, [*records[:5], odd, "", *records[5:]])  # and a blank line after it
    table = BattlesMethod().read_table([path], lenient=True)
    read = list(table)
    assert [j.line for j in read] == [1, 2, 3, 4, 5, 6, *range(8, len(records) + 3)]
    assert read[5].record["result"] == "unjudged" and read[5].record["unjudged"] == 1


def test_style_that_is_not_counts_is_refused_or_with_lenient_left_out(tmp_path):
    """A negative word count (or a fraction, or a style that is no pair of counts) is an
    error naming the line and the field; --lenient scores that battle without style."""
    base = {"qid": "q1", "run_a": "alpha", "run_b": "beta",
            "orders": [{"first": "alpha", "verdict": "A"}]}
    path = write(tmp_path / "b.jsonl", [
        {**base, "style": {"a": STYLE, "b": STYLE}},
        {**base, "qid": "q2", "style": {"a": STYLE, "b": {**STYLE, "words": -3}}},
        {**base, "qid": "q3", "style": {"a": STYLE, "b": {**STYLE, "bold": 1.5}}},
        {**base, "qid": "q4", "style": {"a": STYLE, "b": {"words": 10}}},  # others 0
        {**base, "qid": "q5", "style": "long"},
    ])
    with pytest.raises(InputError) as raised:
        BattlesMethod().read_table([path])
    assert (raised.value.path, raised.value.line) == (str(path), 2)
    assert raised.value.message.startswith("style.b.words is -3, not a count (a whole number "
                                           "from 0) (--lenient scores the battle without style")
    for broken, says in ((3, "style.b.bold is 1.5"), (5, "'style' must give both answers'")):
        one = write(tmp_path / f"{broken}.jsonl", [base, json.loads(
            path.read_text().splitlines()[broken - 1])])
        with pytest.raises(InputError, match=re.escape(says)):
            BattlesMethod().read_table([one])
    table = BattlesMethod().read_table([path], lenient=True)
    assert table.styled.tolist() == [True, False, False, True, False]
    assert table.style[3].tolist() == [120, 1, 3, 0, 2, 10, 0, 0, 0, 0]
    assert not table.style[[1, 2, 4]].any()


def test_a_battle_judged_twice_across_files_names_both_places(tmp_path):
    (tmp_path / "one").mkdir()
    first, records = journal(tmp_path / "one", topics=3)
    second = write(tmp_path / "two.jsonl", [records[4]])
    with pytest.raises(InputError) as raised:
        read_judged(BattlesMethod(), [first, second], scoring=True)
    assert raised.value.path == str(second) and raised.value.line == 1
    assert f"also at {first}:5" in str(raised.value)


def test_a_file_of_blank_lines_is_an_empty_table(tmp_path):
    table = BattlesMethod().read_table([write(tmp_path / "b.jsonl", ["", "  "])])
    assert len(table) == 0 and table.runs == [] and list(table) == []


def test_score_keeps_to_the_topics_asked_and_counts_the_rest(tmp_path):
    """`score --only-topics` scores the chosen topics' battles only; `--topics` makes a
    topics file the universe: battles of other topics are counted outside, and a topic of
    the file no battle drew is a cell not drawn for every run, never a 0."""
    path, records = journal(tmp_path, topics=4)
    run = CliRunner()
    only = run.invoke(cli, ["score", "--method", "battles", str(path), "--only-topics",
                            "q1,q2", "-o", str(tmp_path / "only.tsv"), "--per-topic",
                            str(tmp_path / "only.pt.tsv")])
    assert only.exit_code == 0, only.output
    topics = {line.split("\t")[1] for line in
              (tmp_path / "only.pt.tsv").read_text().splitlines()[1:]} - {"all"}
    assert topics == {"q1", "q2"}
    listed = tmp_path / "topics.tsv"
    listed.write_text("q0\tfirst\nq1\tsecond\nq9\tnever battled\n")
    universe = run.invoke(cli, ["score", "--method", "battles", str(path), "--topics",
                                str(listed), "-o", str(tmp_path / "all.tsv")])
    assert universe.exit_code == 0, universe.output
    outside = sum(r["qid"] in ("q2", "q3") for r in records)
    assert f"{outside} outside" in universe.output
    assert f"{len(RUNS)} (run, topic) cells not drawn" in universe.output


def test_no_battles_given_one_by_one_is_an_empty_score_table():
    table = score_judged(BattlesMethod(), [])
    assert table.means == {} and table.per_topic == {} and not table.judged_nothing


@pytest.mark.parametrize("count", ["true", "1.0", "18446744073709551616", "4294967296"])
def test_counts_the_quick_path_does_not_take_are_read_as_one_by_one(tmp_path, count):
    """A style count that is not a JSON integer of 64 bits (true, 1.0, 2^64) leaves the
    quick path for the full reader, and one out of range (2^32) is found on the block: the
    table is the one the file gives read line by line (each alone in its own file)."""
    base = {"qid": "q1", "run_a": "alpha", "run_b": "beta",
            "orders": [{"first": "alpha", "verdict": "A"}]}
    lines = [json.dumps({**base, "style": {"a": STYLE, "b": STYLE}}),
             json.dumps({**base, "qid": "q2", "style": {"a": STYLE, "b": STYLE}}
                        ).replace('"words": 120', f'"words": {count}', 1)]
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n")
    alone = tmp_path / "alone.jsonl"
    alone.write_text(lines[1] + "\n")
    for lenient in (False, True):
        try:
            table = BattlesMethod().read_table([path], lenient=lenient)
        except InputError as error:
            with pytest.raises(InputError) as again:
                BattlesMethod().read_table([alone], lenient=lenient)
            assert again.value.message == error.message and error.line == 2
            continue
        one = BattlesMethod().read_table([alone], lenient=lenient)
        assert table.styled.tolist()[1:] == one.styled.tolist()
        assert table.style[1:].tolist() == one.style.tolist()
