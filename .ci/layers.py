"""Check the layer rules of setup.cfg's [importlinter] contracts: `python .ci/layers.py`
(`make layers`, in `make test`).

import-linter reads the package from the files, and the editable install maps
`nuggetizer.assessors` (and the other `package_dir` folders) through an import hook it cannot
follow; so it runs over the installed layout as links, the tree .ci/typecheck.py builds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typecheck import ROOT, link_tree  # noqa: E402

TREE = ROOT / "build" / "layers"


def main() -> int:
    link_tree(TREE)
    lint = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(TREE)}
    command = [str(lint), str(ROOT / "setup.cfg"), "--no-cache"]
    return subprocess.run(command, cwd=TREE, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
