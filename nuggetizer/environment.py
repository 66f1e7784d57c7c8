"""Every environment variable the toolkit reads, declared once: its name, what it sets, its
default and the option it stands beside (if any). The CLI's help shows each beside its option,
`nuggetizer doctor` prints the ones set, and the guide's reference page is generated from this
list; a test checks that every `NUGGETIZER_*` name in the code is declared here.

The modules that read a variable still read it themselves (os.environ at the point of use).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    """An environment variable: what it sets, its default, and the CLI option it stands for."""

    name: str
    help: str
    default: str
    option: str | None = None
    topic: str = "assessor"


VARIABLES: tuple[Variable, ...] = (
    Variable("NUGGETIZER_ASSESSOR", "the assessor spec(s) when --assessor is not given "
             "(several: separated by spaces)", "local", "--assessor"),
    Variable("OPENAI_BASE_URL", "the OpenAI-compatible server of an openai: assessor",
             "OpenAI's API", "--base-url"),
    Variable("OPENAI_API_KEY", "the API key of an openai: assessor", "none", "--api-key"),
    Variable("NUGGETIZER_STRUCTURED", "structured-output mode of an openai: server "
             "(json_schema, json_object, none)", "json_schema", "--structured"),
    Variable("NUGGETIZER_TIMEOUT", "seconds an openai: request may take", "120"),
    Variable("NUGGETIZER_REASONING_EFFORT", "reasoning_effort sent to an openai: reasoning "
             "model", "not sent", "--reasoning-effort"),
    Variable("NUGGETIZER_TOKEN_FIELD", "the request field of the token budget (max_tokens or "
             "max_completion_tokens)", "max_tokens, else what the server's 400 says",
             "--token-field"),
    Variable("NUGGETIZER_REASONING_TOKENS", "reasoning tokens a reasoning model is expected to "
             "spend per call", "by --reasoning-effort: 64, 512, 2048, 8192",
             "--reasoning-tokens"),
    Variable("NUGGETIZER_MAX_TOKENS_CAP", "largest token budget an answer emptied by reasoning "
             "is raised to", "32768", "--max-tokens-cap"),
    Variable("NUGGETIZER_MAX_RETRIES", "tries of a failing LLM call", "6", topic="faults"),
    Variable("NUGGETIZER_RETRY_WAIT", "seconds of the first backoff", "1", topic="faults"),
    Variable("NUGGETIZER_RETRY_MAX_WAIT", "longest backoff, in seconds", "60", topic="faults"),
    Variable("NUGGETIZER_RETRY_BUDGET", "seconds one call may take, all its tries together",
             "600", topic="faults"),
    Variable("NUGGETIZER_VLLM_GPU_MEMORY", "vllm: gpu_memory_utilization", "0.9"),
    Variable("NUGGETIZER_VLLM_TP", "vllm: tensor_parallel_size", "1"),
    Variable("NUGGETIZER_VLLM_DTYPE", "vllm: dtype", "auto"),
    Variable("NUGGETIZER_CACHE", "the LLM call cache (SQLite)",
             "$XDG_CACHE_HOME/nuggetizer/llm-cache.sqlite, else ~/.cache/nuggetizer/...",
             "--cache", topic="run"),
    Variable("NUGGETIZER_PROGRESS_INTERVAL", "seconds between progress lines (0: none)", "5",
             topic="run"),
    Variable("NUGGETIZER_USAGE_CHECKPOINT", "seconds between checkpoints of the spend journal",
             "30", topic="run"),
    Variable("NUGGETIZER_INTERRUPT_WAIT", "seconds Ctrl-C waits for the calls in flight", "10",
             topic="run"),
    Variable("NUGGETIZER_KILL_AT", "tests only: SIGKILL the process at a named point "
             "(nuggetizer/testing/killpoints.py), NAME or NAME:N", "unset", topic="run"),
    Variable("NUGGETIZER_METHODS", "modules of methods of your own to import (comma-separated)",
             "none", topic="run"),
    Variable("NUGGETIZER_SERVE_TOKEN", "serve: the bearer token every request but /healthz and "
             "the docs must carry (required beyond 127.0.0.1)", "none", "--token",
             topic="serve"),
    Variable("NUGGETIZER_SERVE_SCRATCH", "serve: where each request's throw-away folder goes",
             "/dev/shm, else the state folder", topic="serve"),
    Variable("NUGGETIZER_WORKBENCH_DB", "workbench: its database (a SQLite file or a "
             "postgresql:// URL)", "workbench.sqlite", "--db", topic="serve"),
    Variable("NUGGETIZER_BLIND_SECRET", "export-sheets --blind: the secret of a new "
             "pseudonym mapping", "a random one, kept in the mapping file", "--secret",
             topic="run"),
)

TOPICS = {"assessor": "Choosing and tuning the assessor", "faults": "Retries and faults",
          "run": "Runs, caches and plugins", "serve": "The server and the workbench"}


def by_option() -> dict[str, Variable]:
    """{option flag: its variable}, for the variables that stand beside an option."""
    return {v.option: v for v in VARIABLES if v.option}
