"""A local BM25 index of a corpus file (the `bm25s` library, extra `[search]`), kept on disk so
that it is built once: the index files of bm25s, the documents in index order (`docs.jsonl`)
and a manifest naming the corpus it was built from (its sha256, size and documents), the bm25s
version and the tokenizer. Opening an index whose manifest names another corpus (the file
changed) builds it again; a folder that is not such an index is refused, never overwritten.

Tokenizing is bm25s's own: lower case, English stop words removed, no stemming.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.cache import default_cache_path
from nuggetizer.errors import ConfigError
from nuggetizer.formats.corpus import read_corpus
from nuggetizer.search.base import Hit, passage_text
from nuggetizer.types import Segment

INDEX_FORMAT = 1
MANIFEST = "manifest.json"
DOCS = "docs.jsonl"
STOPWORDS = "en"


def _bm25s() -> Any:
    try:
        import bm25s  # noqa: PLC0415 - the optional extra, imported when an index is used
    except ImportError:
        raise ConfigError("a local BM25 index needs the bm25s library: pip install "
                          "'trec-nuggetizer[search]'") from None
    return bm25s


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_index_folder(corpus: Path, sha256: str) -> Path:
    """Where the index of a corpus is kept by default: beside the LLM cache, under the
    corpus's content hash (one index per corpus content, wherever the file lies)."""
    return default_cache_path().parent / "bm25" / f"{corpus.stem}-{sha256[:16]}"


@dataclass
class Built:
    """How an index was come by: built now (in seconds) or opened as it was."""

    built: bool
    seconds: float


class Bm25Index:
    """Search and read one corpus: `Bm25Index.open(corpus)` (building when needed)."""

    def __init__(self, folder: Path, retriever: Any, docs: list[Segment],
                 manifest: dict[str, Any], how: Built) -> None:
        self.folder = folder
        self.retriever = retriever
        self.docs = docs
        self.by_id = {d.id: d for d in docs}
        self.manifest = manifest
        self.how = how
        self.spec = f"bm25:{manifest['corpus']}"

    @classmethod
    def open(cls, corpus: str | Path | None, folder: str | Path | None = None) -> Bm25Index:
        """The index of `corpus` in `folder` (default: default_index_folder), built there
        first when it is missing or was built from another corpus content; `corpus` None: the
        index already in `folder`, whatever it was built from."""
        if corpus is None:
            if folder is None or _manifest(Path(folder)) is None:
                raise ConfigError(f"--index {folder}: no BM25 index there; build one from a "
                                  "corpus file first (give --corpus)")
            start = time.perf_counter()
            return cls._load(Path(folder), _manifest(Path(folder)) or {}, start, built=False)
        corpus = Path(corpus)
        if not corpus.is_file():
            raise ConfigError(f"--corpus {corpus}: no such file (the BM25 index is built from "
                              "a corpus JSONL or TSV)")
        sha = file_sha256(corpus)
        where = Path(folder) if folder is not None else default_index_folder(corpus, sha)
        manifest = _manifest(where)
        if manifest is not None and manifest.get("corpus_sha256") == sha and \
                manifest.get("format") == INDEX_FORMAT:
            start = time.perf_counter()
            return cls._load(where, manifest, start, built=False)
        start = time.perf_counter()
        build(corpus, where, sha)
        manifest = _manifest(where)
        assert manifest is not None
        return cls._load(where, manifest, start, built=True)

    @classmethod
    def _load(cls, folder: Path, manifest: dict[str, Any], start: float, built: bool
              ) -> Bm25Index:
        retriever = _bm25s().BM25.load(str(folder), mmap=True)
        docs = [Segment(**json.loads(line)) for line in
                (folder / DOCS).read_text(encoding="utf-8").splitlines() if line]
        return cls(folder, retriever, docs, manifest,
                   Built(built, time.perf_counter() - start))

    def search_now(self, query: str, k: int) -> list[Hit]:
        """The best `k` documents with a positive score, best first."""
        bm25s = _bm25s()
        tokens = bm25s.tokenize([query], stopwords=STOPWORDS, return_ids=False,
                                show_progress=False)
        k = min(k, len(self.docs))
        if k <= 0 or not tokens[0]:
            return []
        found, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        hits = []
        for index, score in zip(found[0], scores[0], strict=True):
            if float(score) <= 0:
                continue
            doc = self.docs[int(index)]
            hits.append(Hit(doc.id, round(float(score), 6), passage_text(doc), doc.title))
        return hits

    async def search(self, query: str, k: int) -> list[Hit]:
        return self.search_now(query, k)

    async def document(self, docid: str) -> Segment | None:
        return self.by_id.get(docid)

    def provenance(self) -> dict[str, Any]:
        keep = ("corpus", "corpus_sha256", "documents", "bm25s", "tokenizer")
        return {"backend": "bm25", "index": str(self.folder),
                **{k: self.manifest[k] for k in keep if k in self.manifest}}

    def size_bytes(self) -> int:
        """Bytes the index folder holds on disk."""
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())

    async def aclose(self) -> None:
        """Nothing to release."""


def _manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of an index folder; None when the folder does not exist; ConfigError when
    it exists and is not an index (it is never overwritten)."""
    if not folder.exists():
        return None
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("kind") != "nuggetizer-bm25":
        raise ConfigError(f"{folder}: exists and is not a BM25 index made by nuggetizer (no "
                          f"readable {MANIFEST}); give another --index folder, or remove it")
    return manifest


def build(corpus: Path, folder: Path, sha256: str | None = None) -> None:
    """Index every passage of `corpus` (title and text) into `folder`, replacing the index
    there, written whole into a temporary folder beside it and then moved into place."""
    bm25s = _bm25s()
    segments = list(read_corpus(corpus).values())
    if not segments:
        raise ConfigError(f"--corpus {corpus}: no passage to index")
    tokens = bm25s.tokenize([passage_text(s) for s in segments], stopwords=STOPWORDS,
                            show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bm25-", dir=folder.parent))
    try:
        retriever.save(str(staging))
        with (staging / DOCS).open("w", encoding="utf-8") as out:
            for s in segments:
                out.write(json.dumps({"id": s.id, "text": s.text, "title": s.title},
                                     ensure_ascii=False) + "\n")
        manifest = {"kind": "nuggetizer-bm25", "format": INDEX_FORMAT,
                    "corpus": str(corpus), "corpus_sha256": sha256 or file_sha256(corpus),
                    "corpus_bytes": corpus.stat().st_size, "documents": len(segments),
                    "bm25s": getattr(bm25s, "__version__", "unknown"),
                    "tokenizer": f"bm25s.tokenize(stopwords={STOPWORDS!r}, lower, no stemmer)"}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

