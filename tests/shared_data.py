"""Where the real evaluation data lives: ../shared/data beside the project (never copied in).

A clone without it still runs every test that does not read it: the tests that do are found
by the names they use (below) and skipped, with the reason. In CI ($CI set) the data must be
there: a missing folder fails the run at once, so the data tests can never be skipped there.
"""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
SHARED_DATA = SHARED / "data"
RAG24 = SHARED_DATA / "trec-rag-2024"
RAG24_HUMAN = SHARED_DATA / "trec-rag-2024-human"  # NIST's nugget assignments, a sample
CRUX_DUC = SHARED_DATA / "crux-duc"
UDCG_SAMPLE = SHARED_DATA / "udcg-sample"
SPOT_CHECK = SHARED_DATA / "autojudge-spot-check"
RAG26_DEV = SHARED_DATA / "trec-rag-2026-dev"
METHODS_MD = SHARED / "METHODS.md"  # the methods' description, whose prompts tests compare

TESTS = Path(__file__).resolve().parent
MISSING = None if RAG24.is_dir() else f"the shared evaluation data is missing: {SHARED_DATA}"


def check_present() -> None:
    """In CI the data tests must run: fail loudly when the data is missing."""
    if MISSING is not None and os.environ.get("CI", "").strip().lower() not in ("", "0",
                                                                                 "false"):
        raise pytest.UsageError(f"{MISSING} (CI runs every data test: put it there)")


def _refs(node: ast.AST) -> set[str]:
    """The names a statement (decorators included) reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _imports_data(node: ast.AST) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == "shared_data"
               for n in ast.walk(node))


def _bound(node: ast.stmt) -> set[str]:
    """The module-level names a statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


@cache
def data_names(path: Path) -> frozenset[str]:
    """The names of the test module (or helper) at `path` that reach the data: imported from
    shared_data (or from a helper module that reaches it), or a constant, function, class or
    method (`Class.method`) that reads one of those; to a fixed point."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            helper = TESTS / f"{node.module}.py"
            reaching = data_names(helper) if node.module != "shared_data" and \
                helper.is_file() else None
            for alias in node.names:
                if reaching is None and node.module == "shared_data" or \
                        reaching is not None and alias.name in reaching:
                    found.add(alias.asname or alias.name)
    rest = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)]
    methods = [(f"{c.name}.{m.name}", m) for c in rest if isinstance(c, ast.ClassDef)
               for m in c.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
    changed = True
    while changed:
        before = len(found)
        for node in rest:
            if _refs(node) & found or _imports_data(node):
                found |= _bound(node)
        for name, method in methods:
            if _refs(method) & found or _imports_data(method):
                found.add(name)
        changed = len(found) != before
    return frozenset(found)


def missing_data(exc: BaseException) -> str | None:
    """Why a test stopped by `exc` is to be skipped rather than failed: outside CI, with the
    data missing, a file under it not found (a test that reaches the data through code the
    names above do not show, e.g. a benchmark's data generator); None otherwise."""
    if MISSING is None or not isinstance(exc, FileNotFoundError) or exc.filename is None:
        return None
    path = Path(os.path.abspath(exc.filename))
    return MISSING if path.is_relative_to(Path(os.path.abspath(SHARED))) else None


def _reaches_data(function: object) -> bool:
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    path = Path(code.co_filename)
    if path.parent != TESTS or not path.is_file():
        return False
    return getattr(function, "__qualname__", "") in data_names(path)


def skip_data_tests(items: list[pytest.Item]) -> None:
    """Without the data (outside CI): skip each test whose function, or one of its fixtures,
    reaches it, saying why."""
    if MISSING is None:
        return
    skip = pytest.mark.skip(reason=f"{MISSING} (only the tests that read it are skipped)")
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        fixtures = [defs[-1].func for defs in info.name2fixturedefs.values()] if info else []
        if any(_reaches_data(f) for f in [getattr(item, "function", None), *fixtures]):
            item.add_marker(skip)
