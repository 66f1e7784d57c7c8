"""`nuggetizer report`: the static HTML page of one evaluation (page), its figures (figures,
drawn partly in a child process: figure_worker), HTML parts (html) and what the inputs record
about how they were made (sources)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.report.figures import (
        DPI,
        LABEL_PT,
        IndexColours,
        distributions_png,
        draw_all,
        heatmap_geometry,
        heatmap_png,
        length_png,
    )
    from nuggetizer.report.html import usage_fields
    from nuggetizer.report.page import write_report


__getattr__ = lazy_face(__name__)


__all__ = [
    "DPI", "IndexColours", "LABEL_PT", "distributions_png", "draw_all", "heatmap_geometry",
    "heatmap_png", "length_png", "usage_fields", "write_report",
]
