"""Merge pip constraints files, the first file's pin of a package winning over the later ones':
`python .ci/constraints.py constraints-min.txt constraints.txt constraints-tools.txt` prints the
constraints of the lowest-versions run (the package's lower bounds, everything else as pinned)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def name(line: str) -> str:
    """The normalised project name of a `name==version` line."""
    return re.sub(r"[-_.]+", "-", re.split(r"[=<>!~\[ ;]", line, maxsplit=1)[0]).lower()


def merged(paths: list[str]) -> list[str]:
    pins: dict[str, str] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                pins.setdefault(name(line), line)
    return sorted(pins.values(), key=name)


if __name__ == "__main__":
    print("\n".join(merged(sys.argv[1:])))
