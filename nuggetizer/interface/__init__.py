"""The method interface: what every answer-key method implements (base), declares (declare),
adds to the report (report_part), reads as one table when it is scored per run (table); the
registry of methods and their descriptions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target
    from nuggetizer.interface.declare import setting, settings_of
    from nuggetizer.interface.registry import (
        REGISTRY,
        make_method,
        method_class,
        method_holding,
        method_names,
        register,
    )
    from nuggetizer.interface.report_part import ReportPart
    from nuggetizer.interface.table import Judged, JudgedTable, Twice


__getattr__ = lazy_face(__name__)


__all__ = [
    "AnswerKeyMethod", "Judged", "JudgedTable", "KeyInput", "Outcome", "REGISTRY", "ReportPart",
    "Target", "Twice", "make_method", "method_class", "method_holding", "method_names",
    "register", "setting", "settings_of",
]
