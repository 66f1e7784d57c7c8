"""The report at track scale: 150 runs x 300 topics x 20 nuggets of synthetic assessments.

    .venv/bin/python benchmarks/bench_report.py [--runs 150] [--topics 300] [--nuggets 20]
        [--repeat 3] [--checkout PATH ...] [--main-only]

Writes the assessment files as `bench_score.py` does (long run names, as the report's scale
test uses), then runs `nuggetizer report FOLDER -o OUT` in fresh processes and prints the
median time (wall and CPU) and peak memory (max RSS, and PSS of the process tree), and the size
and file count of the folder written. With `--checkout` (repeatable: each a checkout with its
own .venv, e.g. a `git worktree` of an older commit), the checkouts report on the same files
in alternating runs, and their pages and figures are compared: the HTML byte for byte (the
date aside), each PNG byte for byte and, where the bytes differ, pixel for pixel.
`--main-only`: every checkout writes the main page alone (`report --no-pages`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import prepare  # noqa: E402
from sidebyside import alternate, arguments, compare  # noqa: E402

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
    main_only = "--main-only" in sys.argv
    if main_only:
        sys.argv.remove("--main-only")
    args = arguments(__doc__, topics=300)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare(folder, args, name=NAME)

        def command(out: Path) -> list[str]:
            return ["report", str(folder / "assessments"), "-o", str(out),
                    *(["--no-pages"] if main_only else [])]

        timings = alternate(args.checkouts, args.repeat, folder / "out", command)
        for t in timings:
            print(t.line("report"))
        for index in range(len(args.checkouts)):
            written = folder / "out" / f"checkout{index}" / "round0"
            size = sum(p.stat().st_size for p in written.rglob("*") if p.is_file())
            page = (written / "index.html").stat().st_size
            print(f"checkout {index}: the written folder holds {size / 2**20:.1f} MiB in "
                  f"{sum(1 for p in written.rglob('*') if p.is_file())} files; index.html "
                  f"{page / 2**20:.2f} MiB")
        for line in compare(folder / "out", len(args.checkouts), lambda p: p.suffix != ".png"):
            only = line.count("(only in one)")  # the drill-down pages an older checkout lacks
            print(line if len(line) < 600 else f"{line[:600]} ... ({only} files in one only)")
        base = folder / "out" / "checkout0" / "round0"
        for index in range(1, len(args.checkouts)):
            other = folder / "out" / f"checkout{index}" / "round0"
            for png in sorted(base.glob("*.png")):
                twin = other / png.name
                if twin.is_file() and png.read_bytes() != twin.read_bytes():
                    verdict = "same pixels" if same_pixels(png, twin) else "PIXELS DIFFER"
                    print(f"{png.name} of checkout {index}: {verdict}")


if __name__ == "__main__":
    main()
