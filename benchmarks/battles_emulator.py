"""Pairwise battles at the emulator: the three TREC RAG 2024 baselines plus synthetic runs to
reach 80, on the first TOPICS topics; for each budget (battles per topic) the battles the
schedule gives, the dry run's call count against the calls the real run made, the time, and
the Bradley-Terry ranking with its bootstrap intervals.

    python benchmarks/battles_emulator.py [--runs 80] [--topics 20] [--per-topic 40,120,400]
        [--report FOLDER]  (per-topic 0: every pair; --report: the last budget's report)

The synthetic runs are derived from the baselines: run k keeps a share of a baseline's
sentences that grows with k (at least one), in an order shuffled from a seed. The emulator's
judge prefers the clearly longer answer (else a hash of the prompt decides: ties and flips),
so the fitted ranking should follow the share kept: the script reports Kendall's tau between
the Bradley-Terry scores and the runs' mean answer lengths as its check.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RAG24, emulator, machine

BIN = Path(sys.executable).parent / "nuggetizer"


def write_runs(folder: Path, runs: int, topics: int, seed: int = 0) -> list[Path]:
    """The baselines cut to their first `topics` common topics, and `runs - 3` derived runs."""
    base = sorted((RAG24 / "runs").glob("baseline_*.jsonl"))
    lines = {p: [json.loads(x) for x in p.read_text().splitlines()] for p in base}
    common = [r["topic_id"] for r in lines[base[0]]]
    for p in base[1:]:
        have = {r["topic_id"] for r in lines[p]}
        common = [q for q in common if q in have]
    chosen = set(common[:topics])
    rng = random.Random(seed)
    paths = []
    for p in base:
        kept = [r for r in lines[p] if r["topic_id"] in chosen]
        paths.append(folder / p.name)
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in kept))
    for k in range(runs - len(base)):
        source = base[k % len(base)]
        share = 0.15 + 0.85 * k / max(1, runs - len(base) - 1)
        run_id = f"synthetic-{k:02d}-keep{share:.2f}"
        out = []
        for r in lines[source]:
            if r["topic_id"] not in chosen:
                continue
            sentences = list(r["answer"])
            rng.shuffle(sentences)
            keep = sentences[:max(1, round(share * len(sentences)))]
            out.append({**r, "run_id": run_id, "answer": keep,
                        "response_length": sum(len(s["text"].split()) for s in keep)})
        paths.append(folder / f"{run_id}.jsonl")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in out))
    return paths


def nuggetizer(*args: str) -> tuple[str, float]:
    """Run the CLI; (stderr + stdout, wall seconds)."""
    started = time.monotonic()
    done = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"nuggetizer {' '.join(args[:2])} failed:\n{done.stderr}")
    return done.stderr + done.stdout, time.monotonic() - started


def kendall(x: list[float], y: list[float]) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--per-topic", default="40,120,400")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        paths = write_runs(tmp, args.runs, args.topics)
        length = {}
        for p in paths:
            rows = [json.loads(x) for x in p.read_text().splitlines()]
            length[rows[0]["run_id"]] = sum(sum(len(s["text"].split()) for s in r["answer"])
                                            for r in rows) / len(rows)
        runs = [x for p in paths for x in ("--run", str(p))]
        print(f"input: {len(paths)} runs ({len(paths) - 3} synthetic) x {args.topics} topics; "
              f"all pairs: {len(paths) * (len(paths) - 1) // 2 * args.topics} battles")
        with emulator(tmp / "emulator.log", "--seed", "1") as url:
            for n in (int(x) for x in args.per_topic.split(",")):
                out = tmp / f"out{n}"
                budget = ["--battles-per-topic", str(n)] if n else []
                common = [*runs, *budget, "--seed", "0", "-o", str(out),
                          "--no-cache", "--assessor", "openai:emulated", "--base-url", url,
                          "--concurrency", str(args.concurrency)]
                dry, dry_s = nuggetizer("battles", *common, "--dry-run")
                before = sum(1 for _ in open(tmp / "emulator.log")) \
                    if (tmp / "emulator.log").exists() else 0
                real, real_s = nuggetizer("battles", *common)
                calls = sum(1 for _ in open(tmp / "emulator.log")) - before
                battles = sum(1 for _ in open(out / "battles.jsonl"))
                dry_calls = int(dry.split(" calls to make")[0].rsplit(" ", 1)[-1])
                board = tmp / f"board{n}.tsv"
                _, score_s = nuggetizer("score", "--method", "battles", str(out), "-o",
                                        str(board), "--set", "rounds=200")
                rows = [r.split("\t") for r in board.read_text().splitlines()]
                head = rows[0]
                table = {r[0]: dict(zip(head[1:], map(float, r[1:]))) for r in rows[1:]}
                ranked = [r[0] for r in rows[1:]]
                tau = kendall([table[r]["bt_score"] for r in ranked], [length[r] for r in ranked])
                width = sum(table[r]["bt_high"] - table[r]["bt_low"] for r in ranked) / len(ranked)
                flips = sum(table[r].get("flip_rate", 0.0) for r in ranked) / len(ranked)
                print(f"\n--battles-per-topic {n or 'all'}: {battles} battles, dry run "
                      f"{dry_calls} calls "
                      f"({dry_s:.1f} s), real run {calls} calls in {real_s:.1f} s "
                      f"({calls / real_s:.0f} calls/s), score with 200 bootstrap rounds "
                      f"{score_s:.1f} s; mean interval width {width:.0f}, mean flip rate "
                      f"{flips:.3f}; Kendall tau(BT score, mean answer length) = {tau:.3f}")
                assert dry_calls == calls, (dry_calls, calls)
                moved = [abs(table[r].get("sc_moved", 0.0)) for r in ranked]
                style = board.with_name(f"{board.stem}.style.tsv").read_text().splitlines()
                tau_sc = kendall([table[r]["sc_score"] for r in ranked],
                                 [length[r] for r in ranked]) if "sc_score" in head else None
                print(f"  style control: runs moved {sum(m > 0 for m in moved)} of "
                      f"{len(ranked)}, mean {sum(moved) / len(moved):.1f} places, at most "
                      f"{max(moved):.0f}; Kendall tau(style-controlled score, mean answer "
                      f"length) = {tau_sc if tau_sc is None else round(tau_sc, 3)}; "
                      "coefficients (Elo points per unit of the normalised difference, 95% "
                      "sandwich interval):")
                for line in style[1:]:
                    print("    " + "  ".join(line.split("\t")[:4]))
                if args.report is not None:
                    nuggetizer("report", str(out), "-o", str(args.report))
                for rank, run in enumerate(ranked, 1):
                    if rank <= 5 or rank > len(ranked) - 3 or run.startswith("baseline"):
                        m = table[run]
                        print(f"  {rank:2d}. {run:45s} {m['bt_score']:7.1f} "
                              f"[{m['bt_low']:7.1f}, {m['bt_high']:7.1f}] style-controlled "
                              f"{m.get('sc_score', float('nan')):7.1f} (moved "
                              f"{m.get('sc_moved', 0):+.0f}) win "
                              f"{m['win_rate']:.3f} ({int(m['battles'])} battles, "
                              f"{length[run]:.0f} words)")


if __name__ == "__main__":
    main()
