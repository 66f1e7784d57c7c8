"""Nugget creation mapped to given sub-narratives (TREC RAG 2026): after creation and
importance, each nugget is labelled with the number of the one sub-narrative of its topic it
answers (0: none), in batches of `label_batch`, with the prompt `nuggets_subnarrative` (our own
wording). The chosen sub-narrative's text becomes the nugget's `mapped_sub_narrative`; a nugget
labelled 0, or of a batch that never parsed (recorded as unparsed, counted), keeps none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nuggetizer.assessors.base import Assessor
from nuggetizer.methods.nuggets.labelling import Unparsed, label_batches
from nuggetizer.templates import load_prompt
from nuggetizer.types import Nugget

if TYPE_CHECKING:
    from nuggetizer.methods.nuggets.steps import NuggetConfig

PROMPT = "nuggets_subnarrative"


async def map_sub_narratives(assessor: Assessor, query: str, nuggets: list[Nugget],
                             sub_narratives: Sequence[str], config: NuggetConfig
                             ) -> list[Unparsed]:
    """Set each nugget's `mapped_sub_narrative` in place from the LLM's numbered choice."""
    results = await label_batches(
        assessor,
        load_prompt(PROMPT),
        {"query": query, "sub_narratives": [config.untrusted(s) for s in sub_narratives],
         "render": config.render},
        [n.text for n in nuggets],
        [str(k) for k in range(len(sub_narratives) + 1)],
        config.label_batch,
        config.reasks,
    )
    unparsed = []
    for index, (labels, raw, error) in enumerate(results):
        if labels is None:
            unparsed.append(Unparsed("sub_narrative", index, raw, error))
            continue
        for offset, label in enumerate(labels):
            if label != "0":
                nuggets[index * config.label_batch + offset].mapped_sub_narrative = \
                    sub_narratives[int(label) - 1]
    return unparsed
