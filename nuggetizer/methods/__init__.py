"""The answer-key methods: one package per method with several modules (nuggets, battles,
support, rubrics), one module for a method that needs one (crux, kpr, udcg). The interface
they implement is in nuggetizer/interface/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.methods.crux import (
        RATING_SCHEMA,
        CruxConfig,
        CruxMethod,
        parse_questions,
        parse_rating,
        questions_schema,
    )
    from nuggetizer.methods.kpr import (
        ENTAIL_SCHEMA,
        EXTRACT_SCHEMA_ITEM,
        KprConfig,
        KprMethod,
        check_dedup,
        dumps_points,
        parse_dedup,
        parse_entailment,
        parse_points,
    )
    from nuggetizer.methods.udcg import (
        RELEVANCE_SCHEMA,
        UdcgConfig,
        UdcgMethod,
        parse_relevance,
        utilities,
    )


__getattr__ = lazy_face(__name__)


__all__ = [
    "CruxConfig", "CruxMethod", "ENTAIL_SCHEMA", "EXTRACT_SCHEMA_ITEM", "KprConfig", "KprMethod",
    "RATING_SCHEMA", "RELEVANCE_SCHEMA", "UdcgConfig", "UdcgMethod", "check_dedup", "dumps_points",
    "parse_dedup", "parse_entailment", "parse_points", "parse_questions", "parse_rating",
    "parse_relevance", "questions_schema", "utilities",
]
