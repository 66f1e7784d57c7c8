"""What a command costs before it does anything: `nuggetizer --version`, `--help` and every
command's `--help`, in CPU seconds (user + system, which other work on the machine affects
less than the wall clock), beside `python -c pass` and `python -c "import click, pydantic"`
(the floor the issue 41 target is set against: 1.5 times it).

    python benchmarks/bench_startup.py [--repeat 15] [--checkout PATH ...] [--commands all]

Each is run `--repeat` times in fresh processes, the targets (the Python running this, or each
`--checkout`: a checkout with its own .venv, or a Python) alternating; the minimum and the
median CPU of each are printed, and the ratio of the median to the floor's. The commands run as
the console script runs them (`from nuggetizer.cli import main`), with `-P`: the installed
package, never the source folder. `--commands all` times every command's `--help` (else
`--version`, `--help`, `score --help` and `assign --help`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402
from sidebyside import Target, target_of  # noqa: E402

MAIN = "import sys; sys.argv[0] = 'nuggetizer'; from nuggetizer.cli import main; main()"
FLOORS = {"python -c pass": ["-c", "pass"],
          'python -c "import click, pydantic"': ["-c", "import click, pydantic"]}
FLOOR = 'python -c "import click, pydantic"'
TARGET = 1.5  # issue 41: within 1.5 times the CPU of the floor


def cpu_of(command: list[str]) -> float:
    """The CPU seconds (user + system) of one run of `command`, its output discarded."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed")
    return usage.ru_utime + usage.ru_stime


def commands_of(target: Target) -> list[str]:
    """Every command the target's nuggetizer has, and each group's subcommands."""
    code = ("from nuggetizer.cli import cli\n"
            "for n in sorted(cli.commands):\n"
            "    c = cli.commands[n]\n"
            "    print(n)\n"
            "    for s in sorted(getattr(c, 'commands', {})):\n"
            "        print(n, s)")
    done = subprocess.run([target.python, "-P", "-c", code], capture_output=True, text=True,
                          check=True)
    return [line for line in done.stdout.splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout with its own .venv, or a Python (repeatable) "
                             "[default: the Python running this benchmark]")
    parser.add_argument("--commands", choices=["some", "all"], default="some")
    args = parser.parse_args()
    targets = [target_of(c) for c in args.checkout] or [
        Target(f"this Python ({sys.executable})", sys.executable)]
    print(machine())
    for target in targets:
        print(f"{target.label}: {target.where()}")
    named = ["--version", "--help", "score --help", "assign --help"]
    if args.commands == "all":
        named = ["--version", "--help", *(f"{c} --help" for c in commands_of(targets[0]))]
    runs: dict[tuple[int, str], list[float]] = {}
    for round_ in range(args.repeat):
        order = list(enumerate(targets))
        if round_ % 2:
            order.reverse()
        for index, target in order:
            for what, argv in FLOORS.items():
                runs.setdefault((index, what), []).append(cpu_of([target.python, *argv]))
            for what in named:
                command = [target.python, "-P", "-c", MAIN, *what.split()]
                runs.setdefault((index, f"nuggetizer {what}"), []).append(cpu_of(command))
    print(f"CPU seconds (user + system) of {args.repeat} fresh processes each: min, median; "
          f"the median against the floor's ({FLOOR}); the target is {TARGET} x")
    for index, target in enumerate(targets):
        floor = statistics.median(runs[(index, FLOOR)])
        print(f"{target.label}:")
        for (at, what), cpus in runs.items():
            if at != index:
                continue
            median = statistics.median(cpus)
            ratio = median / floor
            flag = "" if what in FLOORS else ("  ok" if ratio <= TARGET else "  OVER")
            print(f"  {what:<42} min {min(cpus):.3f}  median {median:.3f}  "
                  f"{ratio:4.2f} x{flag}")


if __name__ == "__main__":
    main()
