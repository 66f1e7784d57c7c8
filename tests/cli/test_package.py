"""What `import nuggetizer` gives: the entry points, imported on first use only."""

from __future__ import annotations

import subprocess
import sys

import pytest

import nuggetizer


def test_import_loads_no_submodule() -> None:
    code = ("import sys, nuggetizer; "
            "print(sorted(m for m in sys.modules if m.startswith('nuggetizer')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['nuggetizer']"


def test_the_entry_points_work() -> None:
    assert set(nuggetizer.__all__) >= {"__version__", "make_assessor", "make_method"}
    assert nuggetizer.method_names()[0] == "nuggets"
    assert nuggetizer.make_method("nuggets").name == "nuggets"
    assessor = nuggetizer.make_assessor("mock:pkg", cache=None)
    assert assessor.spec == "mock:pkg"
    from nuggetizer import register_backend  # the import form resolves too

    assert callable(register_backend)


def test_an_unknown_name_is_an_attribute_error() -> None:
    name = "nothing_here"
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        getattr(nuggetizer, name)
