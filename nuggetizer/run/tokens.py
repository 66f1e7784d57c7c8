"""Counting prompt tokens offline, for `--dry-run`.

`--tokenizer` picks how:

    chars          the characters of the messages' contents / 4, rounded down per call: an
                   ESTIMATE (English text runs near 4 characters a token for GPT-style BPEs);
                   always available, and what the emulator (benchmarks/emulator.py) reports
    tiktoken[:ENC] OpenAI's tokenizer (default encoding o200k_base), when tiktoken and its
                   encoding files are installed (offline it needs them already cached)
    gguf[:PATH]    the tokenizer of a GGUF model, loaded vocabulary-only through llama_cpp
                   (default: the embedded SmolLM2 model): a real tokenizer, though of that model
    auto           tiktoken if it loads, else chars  [default]

Every way counts the messages' contents only, not the few tokens a chat template adds around
each message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nuggetizer.assessors.llamacpp import default_gguf_path
from nuggetizer.errors import ConfigError

CHARS_PER_TOKEN = 4


@dataclass
class Tokenizer:
    """`count(messages)`: the prompt tokens of one call; `name` says which tokenizer, and
    `estimate` whether it is the characters estimate rather than a real tokenizer."""

    name: str
    encode_len: Callable[[str], int] | None = None

    @property
    def estimate(self) -> bool:
        return self.encode_len is None

    def count(self, messages: Sequence[tuple[str, str]]) -> int:
        if self.encode_len is None:
            return sum(len(content) for _, content in messages) // CHARS_PER_TOKEN
        return sum(self.encode_len(content) for _, content in messages)


def _tiktoken(encoding: str) -> Tokenizer:
    try:
        import tiktoken

        enc = tiktoken.get_encoding(encoding)
    except Exception as exc:  # not installed, or its encoding files cannot be fetched offline
        raise ConfigError(f"--tokenizer tiktoken:{encoding}: not available ({exc})") from exc
    return Tokenizer(f"tiktoken:{encoding}",
                     lambda text: len(enc.encode(text, disallowed_special=())))


def _gguf(path: str | None) -> Tokenizer:
    try:
        from llama_cpp import Llama


        model = Llama(model_path=path or str(default_gguf_path()), vocab_only=True,
                      verbose=False)
    except Exception as exc:
        raise ConfigError(f"--tokenizer gguf: cannot load the vocabulary ({exc})") from exc
    name = "gguf:" + (path or "embedded")
    return Tokenizer(name, lambda text: len(model.tokenize(text.encode("utf-8"),
                                                           add_bos=False, special=False)))


def make_tokenizer(spec: str = "auto") -> Tokenizer:
    """The tokenizer `spec` names (see the module's doc)."""
    kind, _, arg = spec.partition(":")
    if kind == "chars":
        return Tokenizer(f"estimate: characters / {CHARS_PER_TOKEN}")
    if kind == "tiktoken":
        return _tiktoken(arg or "o200k_base")
    if kind == "gguf":
        return _gguf(arg or None)
    if kind == "auto":
        try:
            return _tiktoken(arg or "o200k_base")
        except ConfigError:
            return make_tokenizer("chars")
    raise ConfigError(f"--tokenizer {spec!r}: use auto, chars, tiktoken[:ENCODING] or "
                      "gguf[:PATH]")
