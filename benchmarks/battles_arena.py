"""Conformance with arena-rank (LMArena's package) on synthetic battles: the same battles,
written in arena's form by `export-arena-battles`' writer, ranked by this toolkit and by
arena-rank's BradleyTerry (its sandwich intervals) and ContextualBradleyTerry (style control,
with the same covariates, not reweighted, not normalised, its L2 on the coefficients set to
match ours). arena-rank pulls in jax: install it in a virtual environment of its own and give
its Python:

    python3 -m venv /tmp/arena && /tmp/arena/bin/pip install arena-rank pandas
    .venv/bin/python benchmarks/battles_arena.py --arena-python /tmp/arena/bin/python
        [--runs 83] [--battles 200000] [--seed 0]

Prints the largest difference of the scores and of the interval bounds, in Elo points, and
both tools' times (arena-rank's includes its jax start).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.measures.bradley_terry import (  # noqa: E402
    RIDGE,
    Verdict,
    fit_model,
    sandwich_intervals,
)
from nuggetizer.measures.style import FEATURES, fit_style  # noqa: E402
from nuggetizer.methods.battles.arena import arena_rows, write_arena  # noqa: E402

ARENA_SCRIPT = r"""
import json, sys, time
import numpy as np, pandas as pd
start = time.perf_counter()
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import PairDataset, ContextualPairDataset
df = pd.read_csv(sys.argv[1])
features = json.loads(sys.argv[2])
reg = float(sys.argv[3])
ds = PairDataset.from_pandas(df, reweighted=False)
bt = BradleyTerry(n_competitors=len(ds.competitors))
plain = bt.compute_ratings_and_cis(ds, significance_level=0.05, ci_method="sandwich")
cds = ContextualPairDataset.from_pandas(df, feature_cols=features, reweighted=False,
                                        normalize_features=False)
cbt = ContextualBradleyTerry(n_competitors=len(cds.competitors), n_features=len(features),
                             reg=reg)
styled = cbt.compute_ratings_and_cis(cds, significance_level=0.05, ci_method="sandwich")
out = {"competitors": list(ds.competitors),
       "plain": {k: np.asarray(plain[k]).tolist() for k in ("ratings", "rating_lower",
                                                            "rating_upper")},
       "styled_competitors": list(cds.competitors),
       "styled": {k: np.asarray(styled[k]).tolist() for k in ("ratings", "rating_lower",
                                                              "rating_upper", "coeffs")},
       "seconds": time.perf_counter() - start}
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arena-python", required=True)
    parser.add_argument("--runs", type=int, default=83)
    parser.add_argument("--battles", type=int, default=200000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(machine())
    rng = np.random.default_rng(args.seed)
    runs = [f"run{k:03d}" for k in range(args.runs)]
    theta = rng.normal(0, 0.8, args.runs)
    a = rng.integers(0, args.runs, args.battles)
    b = (a + rng.integers(1, args.runs, args.battles)) % args.runs
    x = rng.uniform(-1, 1, (args.battles, len(FEATURES))) * rng.random(len(FEATURES))
    logit = theta[a] - theta[b] + x @ np.array([0.8, 0.2, 0.0, 0.3, -0.1])
    p = 1 / (1 + np.exp(-logit))
    u = rng.random(args.battles)
    result = np.where(u < 0.1, "tie", np.where(rng.random(args.battles) < p, "a", "b"))
    # arena's rows keep the drawn sides (model_a need not sort first)
    records = [{"qid": f"g{k}", "run_a": runs[i], "run_b": runs[j], "result": str(r)}
               for k, (i, j, r) in enumerate(zip(a, b, result))]
    rows: list[dict[str, object]] = list(arena_rows(records))
    for row, xs in zip(rows, x):
        row.update({f: float(v) for f, v in zip(FEATURES, xs)})
    # ours
    start = time.perf_counter()
    verdicts = [Verdict(r["qid"], r["run_a"], r["run_b"], r["result"]) for r in records]
    fit = fit_model(verdicts)
    sandwich = sandwich_intervals(verdicts)
    ours_plain = time.perf_counter() - start
    start = time.perf_counter()
    outcome = np.where(result == "a", 1.0, np.where(result == "b", 0.0, 0.5))
    styled = fit_style(runs, a, b, outcome, x)
    ours_styled = time.perf_counter() - start
    # arena-rank (arena's loss is a mean over battles: its reg is ours over the battles)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "battles.csv"
        write_arena(arena_rows(records[:3]), path)  # the writer's header is arena's
        assert path.read_text().split("\n")[0].startswith("model_a,model_b,winner")
        path.write_text(csv_with_covariates(rows))
        proc = subprocess.run([args.arena_python, "-c", ARENA_SCRIPT, str(path),
                               json.dumps(list(FEATURES)), str(RIDGE / args.battles)],
                              capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"arena-rank failed: {proc.stderr.strip().splitlines()[-1:]}")
    arena = json.loads(proc.stdout.strip().splitlines()[-1])
    order = arena["competitors"]
    plain = arena["plain"]
    diff_score = max(abs(fit.scores[r] - s) for r, s in zip(order, plain["ratings"]))
    diff_low = max(abs(sandwich[r][0] - s) for r, s in zip(order, plain["rating_lower"]))
    diff_high = max(abs(sandwich[r][1] - s) for r, s in zip(order, plain["rating_upper"]))
    print(f"{args.runs} runs, {args.battles} battles (10% ties)")
    print(f"Bradley-Terry: largest difference {diff_score:.4f} points (scores), "
          f"{max(diff_low, diff_high):.4f} points (sandwich bounds)")
    sorder, st = arena["styled_competitors"], arena["styled"]
    mean = float(np.mean(st["ratings"]))  # arena's contextual ratings are not centred
    diff_s = max(abs(styled.scores[r] - (s - mean + 1000)) for r, s in zip(sorder, st["ratings"]))
    width = max(abs((styled.intervals[r][1] - styled.intervals[r][0]) - (hi - lo))
                for r, lo, hi in zip(sorder, st["rating_lower"], st["rating_upper"]))
    coef = max(abs(styled.coefficients[f][0] - 400 / np.log(10) * c)
               for f, c in zip(FEATURES, st["coeffs"]))
    print(f"style control: largest difference {diff_s:.4f} points (scores, both centred at "
          f"1000), {width:.4f} points (interval widths), {coef:.4f} points (coefficients)")
    print(f"time: ours {ours_plain:.2f} s (fit + sandwich, from verdicts), {ours_styled:.2f} s "
          f"(style fit + sandwich); arena-rank {arena['seconds']:.2f} s (both, with imports)")


def csv_with_covariates(rows: list[dict[str, object]]) -> str:
    """The rows with their covariate columns as CSV."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


if __name__ == "__main__":
    main()
