"""The TREC RAG 2026 answer run (`rag_output_trec_rag_2026.jsonl`) and its rules, each named
in what it reports (`[rag26 RULE]`), with where it comes from.

Shape: `{"metadata": {"team_id", "narrative_id", "narrative", "run_id", "run_desc"},
"references": [ClimbMix doc ids], "answer": [{"text", "citations"}]}`, one object per
narrative; a citation is a zero-based position into `references` or a doc id listed there (the
reader in formats/runs.py turns either into the position, once, as it reads the line).

Sources:
- TREC-RAG/trec-rag-skills skills/trec-rag-2026-track-guidelines/references/rag-task.md
  ("Output Format: RAG Output", "Answer Rules", "Validation Rules"): the required metadata, one
  object per input topic, at most three citations per answer object, at most 1024 words per
  topic, the narrative copied exactly from `trec_rag_2026_queries.tsv`; it also asks for no
  extra metadata keys and every reference cited, both warnings here since this project's
  METHODS.md section 8 allows extra metadata and uncited references.
- Repeated citations: the guidelines (rag-task.md at f281e88) have no rule on them. Their
  Answer Rules read "Use zero to three citations per answer object" and "For sentences with
  multiple citations, order the citations from strongest to weakest support". A reference
  named twice in one answer object (`[2, 2]`, or a position and the doc id at it) is a warning
  here (`citation-repeated`): the run is read and judged, the support method judges such a
  passage once, a method that reads no citations never notices, and `validate --fix` drops
  the repeat. (An earlier wording, "Cite no more than three references per sentence", made it
  an error here; it is superseded.)
- The same repository's skills/validate-trec-rag-2026-submissions/scripts/validate_submission.py
  (`CLIMBMIX_DOCUMENT_ID = shard_\\d+_\\d+`), and METHODS.md section 8 for citations by doc id,
  empty citation lists, opaque (Markdown) text and words as `str.split()` summed over objects.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import StrictStr

from nuggetizer.formats.findings import Finding
from nuggetizer.formats.records import Record, Text, problems
from nuggetizer.formats.topics import read_topics

CLIMBMIX_ID = re.compile(r"^shard_\d+_\d+$")
FORMAT = "a TREC RAG 2026 run"
NAME = "rag26"
MAX_CITATIONS = 3
WORD_LIMIT = 1024
METADATA = ("team_id", "narrative_id", "narrative", "run_id", "run_desc")
NOT_FIXED = ("not fixed by --fix: which citations to drop is the run's choice, and dropping "
             "them changes what the answer claims")


class Metadata(Record):
    """The required metadata of a 2026 line, each a non-empty string."""

    team_id: Text
    narrative_id: Text
    narrative: Text
    run_id: Text
    run_desc: Text


class Head(Record):
    """A 2026 line: its metadata, references and answer objects (each checked on its own)."""

    metadata: Metadata
    references: list[Any]
    answer: list[Any]


class AnswerObject(Record):
    """An answer object: its text and (possibly no) citations."""

    text: StrictStr
    citations: list[Any] = []


def listed(obj: dict[str, Any], key: str) -> list[Any]:
    """`obj[key]` when it is a list, else an empty one (its type is a problem said elsewhere)."""
    value = obj.get(key)
    return value if isinstance(value, list) else []


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """The line's `metadata` when it is an object, else an empty one."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def is_rag26(obj: dict[str, Any]) -> bool:
    """Whether an answer line is a TREC RAG 2026 run's: the `metadata` + `answer` shape with a
    ClimbMix doc id among its references (or cited ids), or a `rag2026-` narrative id."""
    meta = obj.get("metadata")
    if "answer" not in obj or not isinstance(meta, dict):
        return False
    if str(meta.get("narrative_id", "")).startswith("rag2026-"):
        return True
    ids = list(listed(obj, "references"))
    for item in listed(obj, "answer"):
        if isinstance(item, dict) and isinstance(item.get("citations"), list):
            ids += item["citations"]
    return any(isinstance(i, str) and CLIMBMIX_ID.match(i) for i in ids)


def found(rule: str, fld: str, text: str, severity: str = "error") -> Finding:
    """One breach of rule `rule`, its message ending in the rule's name."""
    name = f"{NAME} {rule}"
    return Finding(fld, f"{text} [{name}]", severity, name)


def words(obj: dict[str, Any]) -> int:
    """The answer's length as the track counts it: `str.split()` words summed over objects."""
    return sum(len(i["text"].split()) for i in listed(obj, "answer")
               if isinstance(i, dict) and isinstance(i.get("text"), str))


def _types(obj: dict[str, Any]) -> list[Finding]:
    """The fields of the wrong type (the records' words), each under the rule of its part:
    metadata, references, answer, citation; and extra metadata keys (a warning)."""
    out = [found(fld.split(".")[0].split("[")[0], fld, message)
           for fld, message in problems(Head, obj)]
    for k, item in enumerate(listed(obj, "answer")):
        out += [found("citation" if ".citations" in fld else "answer", fld, message)
                for fld, message in problems(AnswerObject, item, ("answer", k))]
    extra = [k for k in metadata(obj) if k not in METADATA]
    if extra:
        out.append(found("metadata-extra", "metadata", f"extra keys {', '.join(extra)}: the "
                         "guidelines ask for none (put them in run_desc)", "warning"))
    return out


def position(cite: Any, refs: list[Any]) -> int | None:
    """The position into `refs` a citation names (itself, or the place of the doc id it
    gives), or None when it names none."""
    if isinstance(cite, str) and cite in refs:
        return refs.index(cite)
    if isinstance(cite, int) and not isinstance(cite, bool) and 0 <= cite < len(refs):
        return cite
    return None


def repeated(cite: Any, at: int, first: int, refs: list[Any]) -> str:
    """The message of a citation naming a reference its answer object already cites."""
    return (f"{cite!r} cites references[{at}] ({refs[at]!r}) again, already cited as "
            f"citations[{first}]: its passage is judged once (--fix drops the repeat)")


def _citations(obj: dict[str, Any], refs: list[Any]) -> tuple[list[Finding], set[int]]:
    """What the citation rules find, and the positions cited."""
    out: list[Finding] = []
    cited: set[int] = set()
    for k, item in enumerate(listed(obj, "answer")):
        cites = item.get("citations") if isinstance(item, dict) else None
        where = f"answer[{k}].citations"
        if not isinstance(cites, list):  # a problem of its type (_types)
            continue
        if len(cites) > MAX_CITATIONS:
            out.append(found("citations-per-object", where, f"{len(cites)} citations, over the "
                             f"limit of {MAX_CITATIONS} per answer object ({NOT_FIXED})"))
        first: dict[int, int] = {}  # position -> the citation that first named it
        for j, cite in enumerate(cites):
            at = position(cite, refs)
            if at is None:
                span = f"0..{len(refs) - 1}" if refs else "none: references is empty"
                out.append(found("citation", f"{where}[{j}]", f"{cite!r} is neither a position "
                                 f"into references ({span}) nor a doc id listed there"))
            elif at in first:
                out.append(found("citation-repeated", f"{where}[{j}]",
                                 repeated(cite, at, first[at], refs), "warning"))
            else:
                first[at] = j
                cited.add(at)
    return out, cited


def check(obj: dict[str, Any]) -> list[Finding]:
    """What the 2026 rules find in one answer line, needing no narratives file: metadata,
    ClimbMix doc ids, citations (0 to 3 per object, each resolving), the 1,024-word limit."""
    out = _types(obj)
    refs = listed(obj, "references")
    for k, ref in enumerate(refs):
        if not isinstance(ref, str) or not CLIMBMIX_ID.match(ref):
            out.append(found("doc-id", f"references[{k}]", f"{ref!r} is not a ClimbMix doc "
                             "id (shard_NNNNN_N, e.g. shard_00459_61697)"))
    cites, cited = _citations(obj, refs)
    out += cites
    uncited = [r for k, r in enumerate(refs) if k not in cited]
    if uncited:
        out.append(found("references-cited", "references", f"{len(uncited)} references no "
                         f"answer object cites, e.g. {uncited[0]!r}", "warning"))
    size = words(obj)
    if size > WORD_LIMIT:
        out.append(found("length", "answer", f"{size} words (str.split(), summed over the "
                         f"answer objects), over the limit of {WORD_LIMIT} (not fixed by --fix: "
                         "cutting the answer is the run's choice)"))
    return out


def first_difference(given: str, expected: str) -> str:
    """Where `given` first differs from `expected`: the character and both texts from there."""
    at = next((i for i, (a, b) in enumerate(zip(given, expected)) if a != b),
              min(len(given), len(expected)))
    return (f"differs from the narratives file at character {at + 1}: "
            f"{given[at:at + 30]!r} instead of {expected[at:at + 30]!r}")


def narratives(path: str | Path) -> dict[str, str]:
    """The narratives of a topics file (`narrative_id<TAB>narrative`), by id, in file order."""
    return {tid: topic.text for tid, topic in read_topics(path).items()}


def check_narrative(meta: dict[str, Any], known: dict[str, str]) -> list[Finding]:
    """The narratives-file rule for one line of a known id: its narrative copied exactly (an
    unknown id, a duplicate, a narrative with no line: the checker's topic checks)."""
    nid = meta.get("narrative_id")
    if not isinstance(nid, str) or nid not in known:
        return []
    text = meta.get("narrative")
    if isinstance(text, str) and text != known[nid]:
        return [found("narrative-copied", "metadata.narrative", first_difference(
            text, known[nid]) + " (--fix copies it from the narratives file)")]
    return []
