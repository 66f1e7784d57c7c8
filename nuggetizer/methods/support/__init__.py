"""Support (attribution) of answer sentences by the passages they cite: the method (method),
its records (records) and sheets for manual assessment (sheets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face
from nuggetizer.methods.support.method import SupportConfig, SupportMethod

__all__ = ["SupportConfig", "SupportMethod", "SCHEMA", "parse_support"]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.methods.support.method import SCHEMA, parse_support


__getattr__ = lazy_face(__name__)
