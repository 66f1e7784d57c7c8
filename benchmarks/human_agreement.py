"""`nuggetizer human-agreement` on NIST's nugget assignments (the shared sample, or the full
file when given): what it prints with the mock assessor and with the emulated LLM, and how fast.

    .venv/bin/python benchmarks/human_agreement.py [--file nugget_assignment.20241218.jsonl]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import SHARED_DATA, emulator, machine

BIN = Path(sys.executable).parent / "nuggetizer"
SAMPLE = SHARED_DATA / "trec-rag-2024-human" / "nugget_assignment.20241218.sample.jsonl"


def run(*args: str) -> None:
    started = time.monotonic()
    done = subprocess.run([str(BIN), "human-agreement", *args], capture_output=True, text=True,
                          timeout=3600)
    print(done.stdout + done.stderr)
    print(f"(exit {done.returncode}, {time.monotonic() - started:.1f} s with the start)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=SAMPLE)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print("== mock assessor ==")
        run(str(args.file), "--assessor", "mock", "--no-cache", "-o", str(tmp / "mock"))
        print("== the emulated LLM ==")
        with emulator(tmp / "emulator.log", "--seed", "1") as url:
            run(str(args.file), "--assessor", "openai:emulated", "--base-url", url,
                "--no-cache", "-o", str(tmp / "emulated"))


if __name__ == "__main__":
    main()
