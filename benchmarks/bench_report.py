"""The report at track scale: 150 runs x 300 topics x 20 nuggets of synthetic assessments.

    .venv/bin/python benchmarks/bench_report.py [--runs 150] [--topics 300] [--nuggets 20]
        [--repeat 3] [--checkout PATH ...]

Writes the assessment files as `bench_score.py` does (long run names, as the report's scale
test uses), then runs `nuggetizer report FOLDER -o OUT` in fresh processes and prints the
median time and peak memory (max RSS). With `--checkout` (repeatable: each a checkout with its
own .venv), the checkouts report on the same files in alternating runs, and their pages and
figures are compared: the HTML byte for byte (the date aside), each PNG byte for byte and, where
the bytes differ, pixel for pixel.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import synthesize  # noqa: E402
from common import ROOT, machine  # noqa: E402
from sidebyside import alternate, compare  # noqa: E402

NAME = "team{:03d}-bm25-monot5-rerank-gpt4o-listwise-citations-long-run-name"


def same_pixels(a: Path, b: Path) -> bool:
    """Whether two PNGs decode to the same pixels."""
    import numpy
    from PIL import Image

    with Image.open(a) as first, Image.open(b) as second:
        return first.size == second.size and bool(
            numpy.array_equal(numpy.asarray(first.convert("RGBA")),
                              numpy.asarray(second.convert("RGBA"))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each checkout")
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout to time (repeatable) [default: this one]")
    args = parser.parse_args()
    checkouts = [c.resolve() for c in args.checkout] or [ROOT]
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        synthesize(folder, args.runs, args.topics, args.nuggets, args.seed, name=NAME)
        files = sorted((folder / "assessments").glob("*.jsonl"))
        size = sum(f.stat().st_size for f in files) / 2**20
        print(f"input: {args.runs} runs x {args.topics} topics x {args.nuggets} nuggets in "
              f"{len(files)} files, {size:.0f} MiB")
        timings = alternate(checkouts, args.repeat, folder / "out",
                            lambda out: ["report", str(folder / "assessments"), "-o", str(out)])
        for t in timings:
            print(t.line("report"))
        for line in compare(folder / "out", len(checkouts), lambda p: p.suffix != ".png"):
            print(line)
        base = folder / "out" / "checkout0" / "round0"
        for index in range(1, len(checkouts)):
            other = folder / "out" / f"checkout{index}" / "round0"
            for png in sorted(base.glob("*.png")):
                twin = other / png.name
                if twin.is_file() and png.read_bytes() != twin.read_bytes():
                    verdict = "same pixels" if same_pixels(png, twin) else "PIXELS DIFFER"
                    print(f"{png.name} of checkout {index}: {verdict}")


if __name__ == "__main__":
    main()
