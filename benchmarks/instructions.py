"""The instructions a `nuggetizer` command executes, warm, beside its parse floor's: the
figure that the load of a shared machine does not move (valgrind's callgrind counts them).

    .venv/bin/python benchmarks/instructions.py [--checkout PATH ...] [--floor PATH ...]
        -- ARGS...

Each target runs `nuggetizer ARGS` once, then twice, in one process under callgrind; the
difference is one warm run (imports and first calls left out, as `sidebyside.py` leaves the
imports out of its CPU time). The digests a reader made are forgotten between runs, so each
run reads and hashes its inputs as a fresh process does. The floor: every line of the
`--floor` JSONL files (or folders of them) decoded by orjson, counted the same way (a second
pass less the first). Slow: each count runs the command about 50 times slower than it runs.

Threads that spin while they wait (OpenBLAS's, after a product) execute instructions for as
long as they spin, which depends on the load: a command whose count moves between sittings has
such a thread (the battles' fits run on one BLAS thread for that reason).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402
from sidebyside import FLOOR, Target, target_of  # noqa: E402

# `nuggetizer ARGS` run N times in one process (the digests of the last run forgotten first)
COMMAND = r"""
import contextlib, io, sys
from nuggetizer.cli import cli
try:
    from nuggetizer.formats.digests import _READ as read
except ImportError:  # a version before issue 41: no digest kept between runs
    read = {}
times, args = int(sys.argv[1]), sys.argv[2:]
for _ in range(times):
    read.clear()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli(args, prog_name="nuggetizer", standalone_mode=False)
"""

# sidebyside.py's parse floor, run N times in one process (one definition of the floor)
FLOOR_TIMES = f"""
import sys
times = int(sys.argv.pop(1))
for _ in range(times):
    exec({FLOOR!r}, {{}})
"""

COLLECTED = re.compile(r"Collected : (\d+)")


def counted(python: str, code: str, times: int, args: list[str]) -> int:
    """The instructions of `code` run with `times` and `args` under callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           python, "-P", "-c", code, str(times), *args],
                          capture_output=True, text=True)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{python}: the count failed (exit {done.returncode}):\n"
                         f"{done.stderr[-3000:]}")
    return int(found.group(1))


def warm(python: str, code: str, args: list[str]) -> int:
    """The instructions of one warm run: two runs less one."""
    return counted(python, code, 2, args) - counted(python, code, 1, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout with its own .venv, or a Python interpreter "
                             "(repeatable) [default: the Python running this benchmark]")
    parser.add_argument("--floor", type=Path, action="append", default=[],
                        help="a JSONL file or folder the command reads (repeatable)")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="-- then the command's arguments, as after `nuggetizer`")
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    if not args:
        parser.error("give the command's arguments after --")
    try:
        subprocess.run(["valgrind", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("valgrind is not installed: apt-get install valgrind") from None
    targets = [target_of(c) for c in options.checkout] or [
        Target(f"this Python ({sys.executable})", sys.executable)]
    print(machine())
    print(f"command: nuggetizer {' '.join(args)}")
    floor = None
    if options.floor:
        floor = warm(targets[0].python, FLOOR_TIMES, [str(p) for p in options.floor])
        print(f"parse floor: {floor / 1e6:,.0f} M instructions")
    for target in targets:
        count = warm(target.python, COMMAND, args)
        ratio = f" = {count / floor:.2f} x the floor" if floor else ""
        print(f"{target.label} ({target.where()}): {count / 1e6:,.0f} M instructions{ratio}")


if __name__ == "__main__":
    main()
