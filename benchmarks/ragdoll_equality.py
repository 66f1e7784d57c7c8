"""The `ragdoll` scoring profile against castorini RAGDoll's own metric code, on the TREC RAG 2026
development data (issue 40): per measure, the (run, topic) cells and run means equal under the
profile, and per run the largest difference between the two profiles.

    python benchmarks/ragdoll_equality.py [--assessor mock | --emulator] \\
        [--ragdoll-python /tmp/ragdoll-venv/bin/python] [--keep FOLDER]

Inputs, assembled in a temporary folder from ../shared/data/trec-rag-2026-dev: the 22
narratives with their nuggets (rag25-dev-nuggets.jsonl, the topics' text from
rag25-topics-dev.tsv), five runs in the 2026 format written here (one cites thoroughly, one
sparsely, one repeats a reference in some objects, one leaves three narratives unanswered,
one answers off topic), their references the documents the development qrels grade >= 2 and
the texts of those documents made up here from the topic's nuggets (the ClimbMix texts are
not in the data: mock and emulator labels are hashes of the prompt, so any text serves); and
the 30 ResearchRubrics prompts with five runs answering them. Judged by the assessor (the
emulator with 10% faulty answers and no re-asks, so that judge failures occur), scored by
`score` under both profiles, exported with `export-ragdoll`, and, with --ragdoll-python (an
interpreter where RAGDoll is installed, never this project's), scored by RAGDoll's own
functions. RAGDoll's code is run, not copied: nothing of it is in this repository.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import SHARED_DATA, emulator, machine

from nuggetizer.interface import make_method
from nuggetizer.scoring import score_paths

DEV = SHARED_DATA / "trec-rag-2026-dev"
QRELS = DEV / "qrels" / "rag25-climbmix-umbrela-codex-gpt5.5-medium-reasoning-v1.qrels"
BIN = Path(sys.executable).parent / "nuggetizer"
RUNS = ("thorough", "sparse", "repeats", "partial", "offtopic")
TOL = 1e-9

# run by --ragdoll-python: RAGDoll's metric functions on the exported files, as JSON
RAGDOLL = r"""
import json, math, sys
from ragdoll.support.metrics import support_metric
from ragdoll.nuggetizer.metrics import cell_metric
from ragdoll.rubric.metrics import cell_score
from ragdoll.arena.metrics import leaderboard_rows, system_counts
folder = sys.argv[1]
rows = lambda name: [json.loads(x) for x in open(f"{folder}/{name}") if x.strip()]
out = {"support": {}, "nuggets": {}, "rubrics": {}, "battles": {}}
for row in rows("support_all.jsonl"):
    m = support_metric(row)
    out["support"][f"{m.run_id}\t{m.topic_id}"] = [
        m.weighted_precision_all_judged_citations, m.weighted_recall_all_judged_citations]
for row in rows("support_first.jsonl"):
    m = support_metric(row)
    out["support"][f"{m.run_id}\t{m.topic_id}"] += [
        m.weighted_precision_first_citation, m.weighted_recall_first_citation]
for row in rows("nuggets.jsonl"):
    c = cell_metric(row)
    out["nuggets"][f"{c.run_id}\t{c.qid}"] = [c.strict_vital_score, c.vital_score,
                                              c.strict_all_score, c.all_score]
for row in rows("rubrics.jsonl"):
    c = cell_score(row)
    out["rubrics"][f"{c.run_id}\t{c.qid}"] = [
        None if math.isnan(c.ternary_score) else c.ternary_score,
        None if math.isnan(c.binary_score) else c.binary_score]
battles = rows("battles.jsonl")
runs = sorted({r for b in battles for r in b["pair"]})
board = leaderboard_rows(battles, runs)
out["battles"] = {r["run_id"]: [r["arena_score"], r["wins"], r["losses"], r["ties"]]
                  for r in board}
print(json.dumps(out))
"""


def nuggetizer(*args: Any) -> None:
    done = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"nuggetizer {' '.join(map(str, args[:3]))} failed:\n{done.stderr}")


def jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def topics(path: Path) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines())


def inputs(folder: Path) -> dict[str, Any]:
    """The 2026 runs, corpus and rubric runs (module docstring), written into `folder`."""
    rng = random.Random(40)
    narratives = topics(DEV / "rag25-topics-dev.tsv")
    nuggets = {str(r["qid"]): [n["text"] for n in r["nuggets"]] for r in map(
        json.loads, (DEV / "rag25-dev-nuggets.jsonl").read_text().splitlines())}
    graded: dict[str, list[tuple[int, str]]] = {}
    for line in QRELS.read_text().splitlines():
        qid, _, doc, grade = line.split()
        if int(grade) >= 2:
            graded.setdefault(qid, []).append((-int(grade), doc))
    refs = {q: [d for _, d in sorted(g)[:12]] for q, g in graded.items()}
    corpus = [{"docid": d, "text": " ".join(rng.sample(nuggets[q], 3))}
              for q in refs for d in refs[q]]
    qids = sorted(narratives, key=int)
    paths = []
    for k, name in enumerate(RUNS):
        lines = []
        for n, qid in enumerate(qids):
            if name == "partial" and n % 7 == 3:
                continue
            source = qids[(n + 5) % len(qids)] if name == "offtopic" else qid
            texts = nuggets[source][: 8 if name != "sparse" else 4]
            answer = []
            for j, text in enumerate(texts):
                cites: list[Any] = rng.sample(range(len(refs[qid])), rng.randint(1, 3))
                if name == "sparse" and j % 2:
                    cites = []
                if name == "repeats" and j % 3 == 0:
                    cites = [cites[0], refs[qid][cites[0]]]  # a position, then its doc id
                answer.append({"text": text, "citations": cites})
            lines.append({"metadata": {"team_id": "i40", "narrative_id": qid,
                                       "narrative": narratives[qid], "run_id": f"dev-{name}",
                                       "run_desc": f"written for issue 40 ({name})"},
                          "references": refs[qid], "answer": answer})
        paths.append(jsonl(folder / f"run{k}-{name}.jsonl", lines))
    prompts = topics(DEV / "research-rubrics-topics-dev.tsv")
    rubric_runs = []
    for k in range(5):
        lines = [{"run_id": f"rr-{k}", "topic_id": qid, "topic": text,
                  "answer": [{"text": s, "citations": []}
                             for s in text.split(". ")[: 2 + k]]}
                 for qid, text in prompts.items()]
        rubric_runs.append(jsonl(folder / f"rr{k}.jsonl", lines))
    return {"runs": paths, "corpus": jsonl(folder / "corpus.jsonl", corpus),
            "rubric_runs": rubric_runs}


def judge(folder: Path, made: dict[str, Any], assessor: list[str]) -> dict[str, Path]:
    """Every method's judgments of the inputs (and the battles under both profiles)."""
    runs = [a for p in made["runs"] for a in ("--run", p)]
    out = {name: folder / name for name in ("nuggets", "support_all", "support_first",
                                             "rubrics", "battles", "battles_both")}
    nuggetizer("assign", "--method", "nuggets", *runs, "--nuggets",
               DEV / "rag25-dev-nuggets.jsonl", "--topics", DEV / "rag25-topics-dev.tsv",
               "-o", out["nuggets"], *assessor)
    for citations in ("all", "first"):
        nuggetizer("assign", "--method", "support", "--set", f"citations={citations}", *runs,
                   "--corpus", made["corpus"], "-o", out[f"support_{citations}"], *assessor)
    nuggetizer("assign", "--method", "rubrics", "--set", "grading=ternary",
               *[a for p in made["rubric_runs"] for a in ("--run", p)], "--key",
               DEV / "research-rubrics-dev-rubrics.jsonl", "-o", out["rubrics"], *assessor)
    nuggetizer("battles", *runs, "--topics", DEV / "rag25-topics-dev.tsv", "--profile",
               "ragdoll", "-o", out["battles"], *assessor)
    nuggetizer("battles", *runs, "--topics", DEV / "rag25-topics-dev.tsv", "-o",
               out["battles_both"], *assessor)
    return out


SCORED = {  # what is compared with RAGDoll: (name, method, settings, key, measures)
    "support all": ("support_all", "support", {"citations": "all"}, None,
                    ("support_precision", "support_recall")),
    "support first": ("support_first", "support", {"citations": "first"}, None,
                      ("support_precision", "support_recall")),
    "nuggets": ("nuggets", "nuggets", {}, DEV / "rag25-dev-nuggets.jsonl",
                ("V_strict", "V", "A_strict", "A")),
    "rubrics ternary": ("rubrics", "rubrics", {"grading": "ternary"},
                        DEV / "research-rubrics-dev-rubrics.jsonl", ("compliance",)),
    "rubrics binary": ("rubrics", "rubrics", {"grading": "binary"},
                       DEV / "research-rubrics-dev-rubrics.jsonl", ("compliance",)),
}


def tables(judged: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Each case scored under both profiles: {case: {profile: ScoreTable}}."""
    out: dict[str, dict[str, Any]] = {}
    for case, (name, method, settings, key, _) in SCORED.items():
        out[case] = {}
        for profile in ("guideline", "ragdoll"):
            chosen = make_method(method, settings, profile)
            keys = chosen.read_keys(key) if key is not None else None
            out[case][profile] = score_paths(chosen, [judged[name]], keys)
    for case, name in (("battles (one order)", "battles"), ("battles (both orders)",
                                                             "battles_both")):
        out[case] = {p: score_paths(make_method("battles", None, p), [judged[name]])
                     for p in ("guideline", "ragdoll")}
    return out


def ragdoll_scores(folder: Path, judged: dict[str, Path], python: str) -> dict[str, Any]:
    """RAGDoll's metric functions on our judgments written in its shapes."""
    for name, method, settings in (("support_all", "support", "citations=all"),
                                   ("support_first", "support", "citations=first"),
                                   ("nuggets", "nuggets", None), ("rubrics", "rubrics", None),
                                   ("battles", "battles", None)):
        nuggetizer("export-ragdoll", "--method", method,
                   *(["--set", settings] if settings else []), judged[name], "-o",
                   folder / f"{name}.jsonl")
    done = subprocess.run([python, "-c", RAGDOLL, str(folder)], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"RAGDoll's metric code failed:\n{done.stderr}")
    return json.loads(done.stdout)


def equal(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None
                                         and abs(a - b) <= TOL)


def compare(ours: dict[str, dict[str, Any]], theirs: dict[str, Any]) -> Iterator[str]:
    """Per measure: cells and run means equal to RAGDoll's."""
    columns = {"support all": ("support", 0), "support first": ("support", 2),
               "nuggets": ("nuggets", 0), "rubrics ternary": ("rubrics", 0),
               "rubrics binary": ("rubrics", 1)}
    for case, (kind, offset) in columns.items():
        table = ours[case]["ragdoll"]
        for k, measure in enumerate(SCORED[case][4]):
            cells = {tuple(key.split("\t")): v[offset + k] for key, v in theirs[kind].items()}
            same = sum(equal(table.per_topic.get(r, {}).get(q, {}).get(measure), v)
                       for (r, q), v in cells.items())
            means: dict[str, list[float]] = {}
            for (r, _), v in cells.items():
                if v is not None:
                    means.setdefault(r, []).append(v)
            same_means = sum(equal(table.means[r].get(measure), sum(v) / len(v))
                             for r, v in means.items())
            yield (f"{case:16} {measure:18} cells {same}/{len(cells)} equal, run means "
                   f"{same_means}/{len(means)}")
    table = ours["battles (one order)"]["ragdoll"]
    board = theirs["battles"]
    counts = sum(table.means[r]["battles"] == w + lo + t and equal(
        table.means[r]["win_rate"], (w + t / 2) / (w + lo + t)) for r, (_, w, lo, t)
        in board.items())
    gap = max(abs(table.means[r]["bt_score"] - score) for r, (score, *_) in board.items())
    same = sorted(board, key=lambda r: -board[r][0]) == table.ranking()
    lopsided = [r for r, (_, w, lo, _) in board.items() if not w or not lo]
    yield (f"battles          counts, win rate   runs {counts}/{len(board)} equal; "
           f"Bradley-Terry: largest |bt_score - arena_score| {gap:.5f}, same ranking: {same}"
           + (f" (no win or no loss, the fit unbounded: {', '.join(lopsided)})"
              if lopsided else ""))


def differences(ours: dict[str, dict[str, Any]]) -> Iterator[str]:
    """Per run, the largest difference of a run mean between the two profiles."""
    runs = sorted({r for case in ours.values() for r in case["guideline"].means})
    for run in runs:
        worst = (0.0, "-")
        for case, profiles in ours.items():
            a, b = profiles["guideline"].means.get(run), profiles["ragdoll"].means.get(run)
            if a is None or b is None:
                continue
            for measure in set(a) & set(b):
                if measure.startswith(("bt_", "sw_", "sc_")):
                    continue  # the fit's scale (Elo-like), not a share
                gap = abs(a[measure] - b[measure])
                if gap > worst[0]:
                    worst = (gap, f"{case}: {measure} {a[measure]:.4f} vs {b[measure]:.4f}")
        yield f"{run:16} largest difference {worst[0]:.4f} ({worst[1]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assessor", default="mock")
    parser.add_argument("--emulator", action="store_true",
                        help="judge at the emulator (10%% faulty answers, no re-asks)")
    parser.add_argument("--ragdoll-python", default=None,
                        help="an interpreter where castorini's RAGDoll is installed")
    parser.add_argument("--keep", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    print(machine())
    with contextlib.ExitStack() as stack:
        folder = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        folder.mkdir(parents=True, exist_ok=True)
        assessor = ["--assessor", args.assessor, "--no-cache"]
        if args.emulator:
            url = stack.enter_context(emulator(folder / "emulator.log", "--fault-rate", "0.1"))
            assessor = ["--assessor", "openai:emulated", "--base-url", url, "--no-cache",
                        "--set", "reasks=0"]
        made = inputs(folder)
        judged = judge(folder, made, assessor)
        ours = tables(judged)
        print(f"assessor: {'the emulator' if args.emulator else args.assessor}")
        if args.ragdoll_python:
            for line in compare(ours, ragdoll_scores(folder, judged, args.ragdoll_python)):
                print(line)
        for line in differences(ours):
            print(line)


if __name__ == "__main__":
    main()
