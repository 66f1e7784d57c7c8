"""Timing one `nuggetizer` command in fresh processes, side by side across installs.

What is timed is a Python and the nuggetizer installed in it, editable or not: by default the
Python running the benchmark; `--checkout PATH` (repeatable) a checkout with its own `.venv`
(this one, or a `git worktree` of another commit), or a Python interpreter. Each run starts
that Python with `-P` (nothing of the working directory on its path), so it imports its own
installed package, never the source folder it happens to run in. Runs alternate between the
targets (A B A B ...), so that the load of other work on the machine falls on both alike; each
reports its time and peak memory, and the outputs of every target are compared byte for byte
(dates taken out).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import machine

# Run in the fresh process: the CLI, timed after its imports (wall clock, and the CPU time of
# the process and of the children it waited for: steadier where other work shares the cores),
# and the peak memory (max RSS of the process plus that of its largest child, e.g. the report's
# figure worker: an upper bound, the pages a forked child shares being counted twice). The
# imports are the CLI's and, where a command imports its work in its body (issue 41), the
# modules its body names, so that both sides are timed from the same point: the command about
# to run with everything it imports loaded.
TIMER = r"""
import ast, importlib, inspect, json, resource, sys, textwrap, time
def cpu():
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))
started, cpu_started = time.perf_counter(), cpu()
from nuggetizer.cli import cli
command = cli.commands.get(sys.argv[1]) if len(sys.argv) > 1 else None
try:
    body = ast.parse(textwrap.dedent(inspect.getsource(command.callback)))
except (AttributeError, OSError, TypeError):
    body = ast.parse("")
for node in ast.walk(body):
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        importlib.import_module(node.module)
imported, cpu_imported = time.perf_counter(), cpu()
try:
    cli(sys.argv[1:], prog_name="nuggetizer", standalone_mode=False)
finally:
    done, cpu_done = time.perf_counter(), cpu()
    rss = sum(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF,
                                                        resource.RUSAGE_CHILDREN)) / 1024
    print(json.dumps({"import_s": imported - started, "run_s": done - imported,
                      "cpu_s": cpu_done - cpu_imported, "cpu_total_s": cpu_done - cpu_started,
                      "max_rss_mib": rss}),
          file=sys.stderr)
"""

# The parse floor of a command's inputs, run in a fresh process: every line of every JSONL
# file read (1 MiB buffers) and decoded by orjson, nothing else; the CPU time after imports.
FLOOR = r"""
import resource, sys
from pathlib import Path
import orjson
def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime
started = cpu()
lines = 0
for arg in sys.argv[1:]:
    path = Path(arg)
    for file in (sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]):
        with file.open("rb", buffering=1 << 20) as f:
            for line in f:
                if line.strip():
                    orjson.loads(line)
                    lines += 1
print(cpu() - started, lines, file=sys.stderr)
"""

# What differs between two runs of the same command on the same inputs: the dates; and,
# between versions, the digest a sidecar gives each input (sha256 before issue 41, blake3).
DATES = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?")
INPUT_DIGEST = re.compile(rb'"(?:sha256|blake3)": "[0-9a-f]{64}"')


@dataclass(frozen=True)
class Target:
    """A Python to time and the nuggetizer it imports (installed in it, editable or not)."""

    label: str
    python: str

    def where(self) -> str:
        """Which nuggetizer this Python imports: its version and folder."""
        found = subprocess.run([self.python, "-P", "-c", WHERE], capture_output=True,
                               text=True, check=True).stdout.split("\n")
        return f"nuggetizer {found[0]} from {found[1]}"


WHERE = ("import os, nuggetizer, nuggetizer.assessors as a\n"
         "print(nuggetizer.__version__)\n"
         "print(os.path.dirname(nuggetizer.__file__))\n"
         "print(os.path.dirname(a.__file__))")


@dataclass
class Timings:
    """The runs of one target."""

    checkout: Target
    runs: list[dict] = field(default_factory=list)

    floors: list[float] = field(default_factory=list)  # CPU s of the parse floor, per round

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs)

    def floor_line(self, what: str, pooled: Sequence[float] = ()) -> str:
        """The parse floor beside the command's CPU time (imports left out of both).
        `pooled`: the floors of every target (the same files parsed: one floor, more
        rounds, steadier where other work shares the machine), else this target's own."""
        floors = list(pooled) or self.floors
        floor = statistics.median(floors)
        cpus = ", ".join(f"{f:.2f}" for f in floors)
        whose = "of every target's rounds" if pooled else "of its rounds"
        return (f"{what} {self.checkout.label}: parse floor median {floor:.2f} s CPU {whose} "
                f"({cpus}); {what} median {self.median('cpu_s'):.2f} s CPU = "
                f"{self.median('cpu_s') / floor:.2f} x the floor (the whole process, its "
                f"imports included: {self.median('cpu_total_s'):.2f} s CPU)")

    def line(self, what: str) -> str:
        times = ", ".join(f"{r['run_s']:.2f}" for r in self.runs)
        cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in self.runs)
        peaks = ", ".join(f"{r['max_rss_mib']:.0f}" for r in self.runs)
        pss = ", ".join(f"{r['pss_mib']:.0f}" for r in self.runs)
        return (f"{what} {self.checkout.label}: median {self.median('run_s'):.2f} s ({times}); CPU "
                f"median {self.median('cpu_s'):.2f} s ({cpus}); peak memory median "
                f"{self.median('max_rss_mib'):.0f} MiB ({peaks}); peak PSS of the process tree "
                f"median {self.median('pss_mib'):.0f} MiB ({pss}); plus "
                f"{self.median('import_s'):.2f} s of imports")


def arguments(doc: str, topics: int, runs: int = 150,
              more: Callable[[argparse.ArgumentParser], None] | None = None
              ) -> argparse.Namespace:
    """The options of a side-by-side benchmark (`checkouts`: the targets, else the Python
    running it; `more` adds a benchmark's own); prints the machine and which nuggetizer each
    target imports."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    if more is not None:
        more(parser)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--topics", type=int, default=topics)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each target")
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout with its own .venv, or a Python interpreter, to time "
                             "(repeatable) [default: the Python running this benchmark]")
    args = parser.parse_args()
    args.checkouts = [target_of(c) for c in args.checkout] or [
        Target(f"this Python ({sys.executable})", sys.executable)]
    print(machine())
    for target in args.checkouts:
        print(f"{target.label}: {target.where()}")
    return args


def target_of(path: Path) -> Target:
    """The Python that `--checkout PATH` names: PATH/.venv/bin/python, or PATH itself when
    it is an interpreter."""
    path = path.absolute()
    own = path / ".venv" / "bin" / "python"
    if own.exists():
        return Target(str(path), str(own))
    if path.is_file() and os.access(path, os.X_OK):
        return Target(str(path), str(path))
    raise SystemExit(f"--checkout {path}: neither a checkout with a .venv nor a Python")


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


def timed(target: Target, args: Sequence[str]) -> dict:
    """Run `nuggetizer ARGS` with the target's Python in a fresh process; its figures, with
    the peak PSS of its process tree sampled every 20 ms (where /proc has smaps_rollup)."""
    command = [target.python, "-P", "-c", TIMER, *map(str, args)]
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, text=True)
        peak = 0.0
        while process.poll() is None:
            peak = max(peak, tree_pss_mib(process.pid))
            time.sleep(0.02)
        err.seek(0)
        stderr = err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{target.python} ... {' '.join(map(str, args))} failed "
                           f"({target.label}):\n{stderr[-3000:]}")
    return {**json.loads(stderr.strip().splitlines()[-1]), "pss_mib": peak}


def compiled(target: Target) -> None:
    """Byte-compile the package the target imports once before it is timed: under
    PYTHONDONTWRITEBYTECODE (set on some machines) every run would compile each module it
    imports again, which costs a package of more modules more, and is no part of the work. A
    folder that cannot be written (a system install) is left as it is."""
    folders = subprocess.run([target.python, "-P", "-c", WHERE], capture_output=True,
                             text=True, check=True).stdout.split("\n")[1:]
    subprocess.run([target.python, "-P", "-m", "compileall", "-q",
                    *[f for f in folders if f]], check=False, capture_output=True)


def parse_floor(target: Target, inputs: Sequence[Path]) -> tuple[float, int]:
    """The CPU seconds of a bare parse of the JSONL `inputs` (files, or folders of them) in a
    fresh process of the target's Python, and the lines it decoded."""
    done = subprocess.run([target.python, "-P", "-c", FLOOR, *map(str, inputs)],
                          capture_output=True, text=True, check=True)
    seconds, lines = done.stderr.split()
    return float(seconds), int(lines)


def alternate(checkouts: Sequence[Target], repeat: int, out: Path,
              args_for: Callable[[Path], Sequence[str]],
              floor: Sequence[Path] = ()) -> list[Timings]:
    """`repeat` rounds, each running every target once in turn; `args_for(folder)` gives the
    command's arguments writing into `folder` (out/checkoutINDEX/roundR). `floor`: the
    command's JSONL inputs, whose bare parse is timed just before each run (the floor)."""
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
            if floor:
                timings[index].floors.append(parse_floor(checkout, floor)[0])
            timings[index].runs.append(timed(checkout, args_for(folder)))
    return timings


def _comparable(path: Path) -> bytes:
    """A file's bytes with its dates and its inputs' digests taken out."""
    return INPUT_DIGEST.sub(b'"DIGEST"', DATES.sub(b"DATE", path.read_bytes()))


def differences(first: Path, other: Path) -> list[str]:
    """Files under two output folders that differ (dates and input digests aside) or exist in
    one only."""
    names = sorted({p.relative_to(first) for p in first.rglob("*") if p.is_file()}
                   | {p.relative_to(other) for p in other.rglob("*") if p.is_file()})
    found = []
    for name in names:
        a, b = first / name, other / name
        if not (a.is_file() and b.is_file()):
            found.append(f"{name} (only in one)")
        elif _comparable(a) != _comparable(b):
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
        verdict = "identical (dates and input digests aside)" if not counted else \
            f"DIFFER: {', '.join(counted)}"
        if others:
            verdict += f"; bytes differ in {', '.join(others)}"
        lines.append(f"outputs of checkout {index} against checkout 0: {verdict}")
    return lines
