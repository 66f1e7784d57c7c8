"""`nuggetize --map-sub-narratives`: the prompt lists a topic's sub-narratives (from the real
2026 dev nuggets) and each nugget keeps the one the (scripted) model names, or none for 0; a
batch that never parses is counted and leaves its nuggets unmapped; a topic without
sub-narratives, or the flag alone, is a one-line error."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from scripted import SCRIPTS
from shared_data import RAG26_DEV

from nuggetizer.cli import cli

NUGGETS = RAG26_DEV / "rag25-dev-nuggets.jsonl"
TOPICS = RAG26_DEV / "rag25-topics-dev.tsv"
QIDS = ("58", "14")
CREATED = ["first nugget", "second nugget", "third nugget"]
PROMPTS: list[str] = []


def mapper(prompt: str) -> str:
    """Three nuggets, all vital; sub-narrative 2, none, 1 (topic 58), unreadable (topic 14)."""
    PROMPTS.append(prompt)
    if "Updated Nugget List:" in prompt:
        return json.dumps(CREATED)
    if "sub-narrative it best answers" in prompt:
        return '["2", "0", "1"]' if "nuclear" in prompt.lower() else "no idea"
    return '["vital", "vital", "vital"]'


SCRIPTS["map-sub-narratives"] = lambda request: mapper(request.messages[-1][1])


def sub_narratives(qid: str) -> list[str]:
    """The distinct mapped_sub_narrative of a topic, quotes dropped, read here on its own."""
    for line in NUGGETS.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["qid"] == qid:
            found = [n["mapped_sub_narrative"].strip().strip('"') for n in obj["nuggets"]]
            return list(dict.fromkeys(found))
    raise AssertionError(qid)


def inputs(tmp: Path) -> list[str]:
    topics = tmp / "topics.tsv"
    topics.write_text("".join(line + "\n" for line in TOPICS.read_text().splitlines()
                              if line.split("\t")[0] in QIDS), encoding="utf-8")
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"docid": f"d{q}", "text": f"passage on {q}"}) + "\n"
                              for q in QIDS), encoding="utf-8")
    qrels = tmp / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n" for q in QIDS), encoding="utf-8")
    return ["nuggetize", "--topics", str(topics), "--corpus", str(corpus), "--qrels",
            str(qrels), "--assessor", "scripted:map-sub-narratives", "--no-cache"]


def test_nuggets_are_mapped_to_the_sub_narratives_named(tmp_path: Path) -> None:
    out = tmp_path / "nuggets.jsonl"
    PROMPTS.clear()
    done = CliRunner().invoke(cli, [*inputs(tmp_path), "-o", str(out), "--map-sub-narratives",
                                    "--sub-narratives-from", str(NUGGETS)])
    assert done.exit_code == 0, done.output
    keys = {k["qid"]: k for k in map(json.loads, out.read_text().splitlines())}
    subs = sub_narratives("58")
    listed = next(p for p in PROMPTS if "sub-narrative it best answers" in p and subs[0] in p)
    assert re.findall(r"^(\d+)\. (.*)$", listed, re.M) == [
        (str(k), s) for k, s in enumerate(subs, 1)]
    assert [n.get("mapped_sub_narrative") for n in keys["58"]["nuggets"]] == [
        subs[1], None, subs[0]]
    assert all("mapped_sub_narrative" not in n for n in keys["14"]["nuggets"])
    assert [u["step"] for u in keys["14"]["unparsed"]] == ["sub_narrative"]
    provenance = keys["58"]["provenance"]
    assert "nuggets_subnarrative" in provenance["templates"]
    assert provenance["config"]["sub_narratives"]["path"] == str(NUGGETS)


def test_without_mapping_nothing_changes_and_bad_uses_are_errors(tmp_path: Path) -> None:
    out = tmp_path / "plain.jsonl"
    done = CliRunner().invoke(cli, [*inputs(tmp_path), "-o", str(out)])
    assert done.exit_code == 0, done.output
    key = json.loads(out.read_text().splitlines()[0])
    assert "nuggets_subnarrative" not in key["provenance"]["templates"]
    assert "sub_narratives" not in key["provenance"]["config"]
    assert all(set(n) == {"text", "importance"} for n in key["nuggets"])
    alone = CliRunner().invoke(cli, [*inputs(tmp_path), "-o", str(out), "--map-sub-narratives"])
    assert alone.exit_code == 2 and "--sub-narratives-from NUGGETS" in alone.output
    narratives = tmp_path / "narratives.jsonl"
    narratives.write_text(json.dumps({"qid": "58", "sub_narratives": ["a", "b"]}) + "\n")
    lacking = CliRunner().invoke(cli, [*inputs(tmp_path), "-o", str(out),
                                       "--map-sub-narratives", "--narratives", str(narratives)])
    assert lacking.exit_code == 2 and "no sub-narratives for 1 topics" in lacking.output
    assert "Traceback" not in lacking.output


def test_a_dry_run_counts_the_mapping_calls(tmp_path: Path) -> None:
    def not_rendered(*extra: str) -> int:
        done = CliRunner().invoke(cli, [*inputs(tmp_path), "-o", str(tmp_path / "k.jsonl"),
                                        "--dry-run", *extra])
        assert done.exit_code == 0, done.output
        found = re.search(r"about (\d+) more calls not rendered", done.output)
        assert found is not None, done.output
        return int(found[1])

    plain = not_rendered()
    # 2 topics x 30 nuggets at most / 10 a call: 6 importance calls, and 6 mapping calls more
    assert plain == 6
    assert not_rendered("--map-sub-narratives", "--sub-narratives-from", str(NUGGETS)) == 12
