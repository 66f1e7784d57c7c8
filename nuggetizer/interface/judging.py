"""What a method reads and how it is judged and scored, said once: one frozen description the
flow asks (as inspect_ai's RetryDecision and ir_measures' measure declarations do), instead of
a switch on the method class for each question.

    judging = Judging.keyed(AnswerKey(needs={"qrels", "corpus"}, file="nuggets.jsonl"))
    judging = Judging.keyless(judgments_dir="support", citations=True)
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Literal

# what building a key may read: judged passages, retrieved passages, their texts, a reference
KEY_INPUTS = frozenset({"qrels", "docs_runs", "corpus", "reference"})
# how judgments become scores: each on its own, with every judgment of its topic, or all of a
# run's at once (the run measures come from one fit, e.g. Bradley-Terry over battles)
Scoring = Literal["each", "pool", "runs"]


@dataclass(frozen=True)
class AnswerKey:
    """What building a method's answer key reads and where the key goes: `needs` (required)
    and `reads` (optional) among KEY_INPUTS; `file`: its name inside an evaluate folder;
    `skip_without_documents`: a topic with no passage to build from gets no key."""

    needs: Set[str] = frozenset()
    reads: Set[str] = frozenset()
    file: str = "key.jsonl"
    skip_without_documents: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "needs", frozenset(self.needs))  # hashable, as it is frozen
        object.__setattr__(self, "reads", frozenset(self.reads))
        unknown = sorted((self.needs | self.reads) - KEY_INPUTS)
        if unknown:
            raise ValueError(f"an answer key reads {', '.join(sorted(KEY_INPUTS))}, not "
                             f"{', '.join(unknown)}")

    def wants(self, name: str) -> bool:
        """Whether building the key reads `name` (required or optional)."""
        return name in self.needs or name in self.reads


@dataclass(frozen=True)
class Judging:
    """A method's reading and judging: its answer key (None: it judges without one, nothing
    to build), whether answers come with the texts of the passages they cite (`citations`),
    the folder its judgments go to inside an evaluate folder, how they are scored
    (`scoring`), and whether scoring reads the key (`scored_with_key`; False: the judgments
    carry all that scoring reads, so `score` runs without --key)."""

    key: AnswerKey | None = AnswerKey()
    citations: bool = False
    judgments_dir: str = "judgments"
    scoring: Scoring = "each"
    scored_with_key: bool = True

    @classmethod
    def keyed(cls, key: AnswerKey, *, judgments_dir: str = "judgments",
              scoring: Scoring = "each", scored_with_key: bool = True) -> Judging:
        """A method that builds an answer key per topic (what `key` says it reads) and judges
        against it."""
        return cls(key, False, judgments_dir, scoring, scored_with_key)

    @classmethod
    def keyless(cls, *, judgments_dir: str = "judgments", citations: bool = False,
                scoring: Scoring = "each") -> Judging:
        """A method that judges with no answer key (its judgments are all scoring reads)."""
        return cls(None, citations, judgments_dir, scoring, scored_with_key=False)

    @property
    def needs_key(self) -> bool:
        """Whether it judges against an answer key (which `nuggetize` builds)."""
        return self.key is not None

    @property
    def needs(self) -> frozenset[str]:
        """What building its key requires (nothing without a key)."""
        return frozenset(self.key.needs) if self.key is not None else frozenset()

    @property
    def reads(self) -> frozenset[str]:
        """What building its key reads when given (required or optional)."""
        return frozenset(self.key.needs | self.key.reads) if self.key is not None else frozenset()

    @property
    def optional(self) -> frozenset[str]:
        """What building its key reads when given but does not require."""
        return frozenset(self.key.reads) if self.key is not None else frozenset()

    @property
    def skip_without_documents(self) -> bool:
        """Whether a topic with no passage to build from gets no key."""
        return self.key is not None and self.key.skip_without_documents

    @property
    def key_file(self) -> str:
        """The key's file name inside an evaluate folder."""
        return self.key.file if self.key is not None else AnswerKey.file
