"""Readers and writers of the files users hold: strict, with file:line in every error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face
from nuggetizer.formats.answers import read_runs
from nuggetizer.formats.assessments import assessment_record, read_assessments
from nuggetizer.formats.corpus import read_corpus
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.nuggets import nuggets_record, read_nuggets
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.runs import read_run
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.writing import Journal, write_jsonl_atomic, write_text_atomic

__all__ = [
    "Journal", "assessment_record", "iter_jsonl", "nuggets_record", "read_assessments",
    "read_corpus", "read_nuggets", "read_qrels", "read_run", "read_runs", "read_topics",
    "write_jsonl_atomic", "write_text_atomic", "FORMATS", "JudgmentIds", "KeyIds", "LabelRow",
    "Limit", "bank_records", "field", "is_autojudge_leaderboard", "iter_label_rows",
    "iter_leaderboard", "leaderboard_text", "length", "nugget_sheet", "qrels_text",
    "read_answer_run", "read_assignment_sheet", "read_leaderboard_rows", "read_narratives",
    "read_nugget_sheet", "read_trec_run", "read_udcg_dataset", "sub_narratives_from_nuggets",
    "truncate", "validated", "write_leaderboard", "Demand", "Passages", "TrackInputs", "Wanted",
    "read_passages", "read_track_inputs",
]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.formats.answers import read_answer_run
    from nuggetizer.formats.autojudge import (
        bank_records,
        is_autojudge_leaderboard,
        iter_leaderboard,
        leaderboard_text,
    )
    from nuggetizer.formats.jsonl import field
    from nuggetizer.formats.keys import read_udcg_dataset
    from nuggetizer.formats.label_rows import LabelRow, iter_label_rows
    from nuggetizer.formats.leaderboards import FORMATS, read_leaderboard_rows, write_leaderboard
    from nuggetizer.formats.narratives import read_narratives, sub_narratives_from_nuggets
    from nuggetizer.formats.qrels import qrels_text
    from nuggetizer.formats.records import JudgmentIds, KeyIds, validated
    from nuggetizer.formats.sheets import nugget_sheet, read_assignment_sheet, read_nugget_sheet
    from nuggetizer.formats.track_inputs import (
        Demand,
        Passages,
        TrackInputs,
        Wanted,
        read_passages,
        read_track_inputs,
    )
    from nuggetizer.formats.track_rules import Limit, length, truncate
    from nuggetizer.formats.trec_run import read_trec_run


__getattr__ = lazy_face(__name__)
