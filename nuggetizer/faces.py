"""The public faces of the packages (PEP 562): a package names what its modules define for its
users once, as the imports of its `if TYPE_CHECKING:` block (which type checkers read), and a
name of those is imported from its module when first asked for, so that importing a package
costs nothing and the modules behind a face can move without breaking its callers.

    if TYPE_CHECKING:
        from nuggetizer.scoring.engine import ScoreTable

    __getattr__ = lazy_face(__name__)
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any


@cache
def face_of(package: str) -> dict[str, str]:
    """{name: module} of the imports in the `if TYPE_CHECKING:` blocks of `package`."""
    source = sys.modules[package].__file__
    assert source is not None, f"{package} has no source file"
    tree = ast.parse(Path(source).read_text(encoding="utf-8"))
    face: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    face.update({a.asname or a.name: statement.module for a in statement.names})
    return face


def lazy_face(package: str) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: a name of its face imported from its module on
    first use and kept in the package; AttributeError for any other."""

    def attribute(name: str) -> Any:
        module = None if name.startswith("__") else face_of(package).get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
