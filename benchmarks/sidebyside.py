"""Timing one `nuggetizer` command in fresh processes, side by side across checkouts.

A checkout is a folder holding the project (this one, or a `git worktree` of another commit)
with its own `.venv`; each run starts that checkout's Python in the checkout, so it imports
that checkout's code. Runs alternate between the checkouts (A B A B ...), so that the load of
other work on the machine falls on both alike; each reports its time and peak memory, and the
outputs of every checkout are compared byte for byte (dates taken out).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import ROOT, machine

# Run in the fresh process: the CLI, timed after its imports (wall clock, and the CPU time of
# the process and of the children it waited for: steadier where other work shares the cores),
# and the peak memory (max RSS of the process plus that of its largest child, e.g. the report's
# figure worker: an upper bound, the pages a forked child shares being counted twice).
TIMER = r"""
import json, resource, sys, time
def cpu():
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))
started = time.perf_counter()
from nuggetizer.cli import cli
imported, cpu_imported = time.perf_counter(), cpu()
try:
    cli(sys.argv[1:], prog_name="nuggetizer", standalone_mode=False)
finally:
    done, cpu_done = time.perf_counter(), cpu()
    rss = sum(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF,
                                                        resource.RUSAGE_CHILDREN)) / 1024
    print(json.dumps({"import_s": imported - started, "run_s": done - imported,
                      "cpu_s": cpu_done - cpu_imported, "max_rss_mib": rss}),
          file=sys.stderr)
"""

# What differs between two runs of the same command on the same inputs: the dates.
DATES = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?")


@dataclass
class Timings:
    """The runs of one checkout."""

    checkout: Path
    runs: list[dict] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs)

    def line(self, what: str) -> str:
        times = ", ".join(f"{r['run_s']:.2f}" for r in self.runs)
        cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in self.runs)
        peaks = ", ".join(f"{r['max_rss_mib']:.0f}" for r in self.runs)
        pss = ", ".join(f"{r['pss_mib']:.0f}" for r in self.runs)
        return (f"{what} {self.checkout}: median {self.median('run_s'):.2f} s ({times}); CPU "
                f"median {self.median('cpu_s'):.2f} s ({cpus}); peak memory median "
                f"{self.median('max_rss_mib'):.0f} MiB ({peaks}); peak PSS of the process tree "
                f"median {self.median('pss_mib'):.0f} MiB ({pss}); plus "
                f"{self.median('import_s'):.2f} s of imports")


def arguments(doc: str, topics: int) -> argparse.Namespace:
    """The options of a side-by-side benchmark (`checkouts`: resolved, else this one);
    prints the machine."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=topics)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each checkout")
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout to time (repeatable) [default: this one]")
    args = parser.parse_args()
    args.checkouts = [c.resolve() for c in args.checkout] or [ROOT]
    print(machine())
    return args


def python_of(checkout: Path) -> str:
    """The checkout's own interpreter (its .venv), else this one."""
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def tree_pss_mib(pid: int) -> float:
    """The proportional set size (a page shared by n processes counts 1/n to each) of a
    process and its descendants, summed: what they hold together. 0 once it is gone."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total / 1024


def timed(checkout: Path, args: Sequence[str]) -> dict:
    """Run `nuggetizer ARGS` with the checkout's code in a fresh process; its figures, with
    the peak PSS of its process tree sampled every 20 ms (where /proc has smaps_rollup)."""
    command = [python_of(checkout), "-c", TIMER, *map(str, args)]
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                   cwd=checkout)
        peak = 0.0
        while process.poll() is None:
            peak = max(peak, tree_pss_mib(process.pid))
            time.sleep(0.02)
        err.seek(0)
        stderr = err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])} ... {' '.join(map(str, args))} failed in "
                           f"{checkout}:\n{stderr[-3000:]}")
    return {**json.loads(stderr.strip().splitlines()[-1]), "pss_mib": peak}


def compiled(checkout: Path) -> None:
    """Byte-compile the checkout's sources once before it is timed: under
    PYTHONDONTWRITEBYTECODE (set on some machines) every run would compile each module it
    imports again, which costs a checkout of more modules more, and is no part of the work."""
    subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-m", "compileall", "-q",
                    "nuggetizer", "assessors"], cwd=checkout, check=True)


def alternate(checkouts: Sequence[Path], repeat: int, out: Path,
              args_for: Callable[[Path], Sequence[str]]) -> list[Timings]:
    """`repeat` rounds, each running every checkout once in turn; `args_for(folder)` gives the
    command's arguments writing into `folder` (out/CHECKOUT-INDEX/ROUND)."""
    timings = [Timings(c) for c in checkouts]
    for checkout in checkouts:  # every run reads compiled modules, as an installed package does
        compiled(checkout)
    for round_ in range(repeat):
        order = list(enumerate(checkouts))
        if round_ % 2:
            order.reverse()  # A B, B A, A B, ...: neither always goes first
        for index, checkout in order:
            folder = out / f"checkout{index}" / f"round{round_}"
            folder.mkdir(parents=True, exist_ok=True)
            timings[index].runs.append(timed(checkout, args_for(folder)))
    return timings


def differences(first: Path, other: Path) -> list[str]:
    """Files under two output folders that differ (dates aside) or exist in one only."""
    names = sorted({p.relative_to(first) for p in first.rglob("*") if p.is_file()}
                   | {p.relative_to(other) for p in other.rglob("*") if p.is_file()})
    found = []
    for name in names:
        a, b = first / name, other / name
        if not (a.is_file() and b.is_file()):
            found.append(f"{name} (only in one)")
        elif DATES.sub(b"DATE", a.read_bytes()) != DATES.sub(b"DATE", b.read_bytes()):
            found.append(str(name))
    return found


def compare(out: Path, count: int, strict: Callable[[Path], bool] = lambda p: True
            ) -> list[str]:
    """Lines saying whether each checkout's first outputs equal the first checkout's
    (`strict(name)`: whether a difference in that file counts, else it is listed apart)."""
    lines = []
    base = out / "checkout0" / "round0"
    for index in range(1, count):
        found = differences(base, out / f"checkout{index}" / "round0")
        counted = [f for f in found if strict(Path(f))]
        others = [f for f in found if not strict(Path(f))]
        verdict = "identical (dates aside)" if not counted else f"DIFFER: {', '.join(counted)}"
        if others:
            verdict += f"; bytes differ in {', '.join(others)}"
        lines.append(f"outputs of checkout {index} against checkout 0: {verdict}")
    return lines
