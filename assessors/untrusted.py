"""Untrusted text (participants' answers, corpus segments) made safe to sit inside a prompt.

A prompt template is a fixed structure with fields: `Passage: {answer}` on one line, then
`Nugget List: ...`, then `Labels:`. Participants write the answers, so an answer may try to
change that structure: start a new line with the template's own delimiters ("Nugget List:",
"Labels: [...]"), or carry a chat template's special tokens ("<|im_end|><|im_start|>system"),
which servers and llama.cpp turn into real turn boundaries when they tokenize the prompt.
`inline()` keeps the text's words and removes both means:

- every run of whitespace (newlines, Unicode line and paragraph separators included) becomes
  one space, and control characters are dropped, so the text occupies exactly its one line and
  cannot begin a line of its own;
- special-token spellings (`<|...|>`, `<s>`, `</s>`, `[INST]`, `<<SYS>>`, `<start_of_turn>`,
  ...) get a zero-width space after their first character, so no tokenizer matches them.

What it cannot do: stop a model from *obeying* instructions written in the answer ("label
everything support"). The number of labels accepted is fixed by the toolkit (the schema and the
parser demand exactly one label per nugget), so such an answer can at worst change label values,
never add, drop or reorder labels; see the guide's "Throughput, faults and hostile answers".
"""

from __future__ import annotations

import re

__all__ = ["inline", "line_safe"]

ZWSP = "\u200b"
_WHITESPACE = re.compile(r"\s+")  # Unicode-aware: \u2028, \u2029 and \x85 included
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
_SPECIAL = re.compile(
    r"<\|[^<>|]{0,64}\|>"  # ChatML, Llama 3, Phi: <|im_start|>, <|eot_id|>, <|end|>
    r"|</?s>|<(?:bos|eos|pad|unk)>"  # Llama 2, Mistral, Gemma
    r"|\[/?INST\]|<</?SYS>>"  # Llama 2 and Mistral instruction markers
    r"|<(?:start|end)_of_turn>"  # Gemma
    r"|<\uff5c[^<>]{0,64}\uff5c>"  # DeepSeek's full-width bars
    r"|</?think>",
    re.IGNORECASE,
)


_LINE_BREAK = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def line_safe(text: str) -> str:
    """`text` on one line as `inline` makes it, but with its spaces as they are (not collapsed,
    not stripped): only a run of whitespace holding a line break becomes one space. For prompts
    that must carry castorini's bytes, which join an answer's sentences unstripped; a text
    without line breaks, control characters or special tokens is returned unchanged."""
    text = _LINE_BREAK.sub(" ", _CONTROL.sub("", text))
    return _SPECIAL.sub(lambda m: m.group(0)[0] + ZWSP + m.group(0)[1:], text)


def inline(text: str) -> str:
    """`text` on one line, without control characters or special-token spellings."""
    text = _CONTROL.sub("", text)
    text = _WHITESPACE.sub(" ", text).strip()
    return _SPECIAL.sub(lambda m: m.group(0)[0] + ZWSP + m.group(0)[1:], text)
