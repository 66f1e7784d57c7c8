"""Type-check the package as it is installed: `python .ci/typecheck.py` (`make typecheck`).

setup.cfg maps `nuggetizer.assessors` to `assessors/` (and so on, `package_dir`), which the
editable install serves through an import hook that type checkers cannot follow. This builds
the installed layout as links under build/typecheck/ (setup.cfg is read, so the two cannot
drift apart) and runs mypy there on `-p nuggetizer` with setup.cfg's [mypy] settings; errors
name the installed paths (`nuggetizer/assessors/base.py` is `assessors/base.py`).
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"


def package_dirs(setup_cfg: Path) -> dict[str, Path]:
    """setup.cfg's `package_dir`: sub-package name -> its source folder."""
    parser = configparser.ConfigParser()
    parser.read(setup_cfg, encoding="utf-8")
    mapping = {}
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        if "=" in line:
            name, folder = (part.strip() for part in line.split("=", 1))
            mapping[name] = ROOT / folder
    return mapping


def link_tree(tree: Path) -> None:
    """`tree`/nuggetizer: a link per entry of nuggetizer/, and one per mapped sub-package."""
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / "nuggetizer"
    package.mkdir(parents=True)
    for entry in (ROOT / "nuggetizer").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in package_dirs(ROOT / "setup.cfg").items():
        parent, _, leaf = name.rpartition(".")
        if parent != "nuggetizer":
            raise SystemExit(f"setup.cfg: package_dir maps {name}, not a nuggetizer.X package")
        (package / leaf).symlink_to(folder)


def main() -> int:
    link_tree(TREE)
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "setup.cfg"),
               "--cache-dir", str(TREE.parent / "mypy-cache"), "-p", "nuggetizer"]
    env = {**os.environ, "MYPYPATH": ""}
    return subprocess.run(command, cwd=TREE, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
