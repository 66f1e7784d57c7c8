"""The label menus, in one place: what the LLM may answer, what files may hold, and the credit
each label earns (the AutoNuggetizer's nuggets, and support assessment)."""

from __future__ import annotations

from typing import Final, Literal

from nuggetizer.parsing import normalise_label

Importance = Literal["vital", "okay", "unjudged"]
Assignment = Literal["support", "partial_support", "not_support", "unjudged"]

UNJUDGED: Final = "unjudged"  # a label nobody could give: counted, never scored as a real label
IMPORTANCE_LABELS: tuple[str, ...] = ("vital", "okay")  # the LLM's menu
ASSIGNMENT_LABELS: tuple[str, ...] = ("support", "partial_support", "not_support")
IMPORTANCE_VALUES: tuple[str, ...] = (*IMPORTANCE_LABELS, UNJUDGED)  # what files may hold
ASSIGNMENT_VALUES: tuple[str, ...] = (*ASSIGNMENT_LABELS, UNJUDGED)
# castorini's assignment when its LLM call failed (RAGDoll also reads a legacy "fail"): unjudged
CASTORINI_FAILED = ("failed", "fail")

CREDIT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}  # V, W, A
STRICT_CREDIT = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}  # the _strict ones
SUPPORTED = ("support", "partial_support")  # some support, for "nuggets no run supported"
IMPORTANCE_ORDER = {"vital": 0, "okay": 1, UNJUDGED: 2}  # vital first when trimming

# Support assessment (a cited passage for an answer sentence) and the weight of each label.
SUPPORT_LABELS: tuple[str, ...] = ("full_support", "partial_support", "no_support")
SUPPORT_WEIGHTS: dict[str, float] = {"full_support": 1.0, "partial_support": 0.5,
                                     "no_support": 0.0}
SUPPORT_SHORT: dict[str, str] = {"fs": "full_support", "ps": "partial_support",
                                 "ns": "no_support"}


_IMPORTANCE: dict[str, Importance] = {"vital": "vital", "okay": "okay", UNJUDGED: "unjudged"}
_ASSIGNMENT: dict[str, Assignment] = {"support": "support", "partial_support": "partial_support",
                                      "not_support": "not_support", UNJUDGED: "unjudged"}


def importance_of(label: str | None) -> Importance:
    """`label` (already checked against IMPORTANCE_VALUES) as an Importance; None, or a label
    off the menu, is unjudged."""
    return _IMPORTANCE.get(label or UNJUDGED, "unjudged")


def assignment_of(label: str | None) -> Assignment:
    """`label` (already checked against ASSIGNMENT_VALUES) as an Assignment; None, or a label
    off the menu, is unjudged."""
    return _ASSIGNMENT.get(label or UNJUDGED, "unjudged")


def support_label(text: str) -> str | None:
    """A support label from a sheet cell or an answer: its spelling in any case and with any
    separator, or FS / PS / NS; None when it is none of them."""
    key = normalise_label(text)
    if key in SUPPORT_WEIGHTS:
        return key
    return SUPPORT_SHORT.get(key)
