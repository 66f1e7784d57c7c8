"""`vllm:<model>`: vLLM in-process; every prompt of a step goes to the GPU as one batch.

The Assessor calls `complete()` once per request, concurrently. This backend does not run them
one by one: requests are queued, and when no new one has arrived for `window` seconds (the
pipeline renders every prompt of a step at once, so that is the end of the step's burst) the
whole queue is handed to `LLM.chat` in one call, in a worker thread, with per-request sampling
parameters and structured outputs (the JSON schema of the answer). Requests that arrive while a
batch runs form the next batch (re-asks, the next window of nugget creation).

One bad prompt (e.g. longer than the context) makes vLLM refuse the whole call; the batch is
then split in halves until the culprit alone gets a PermanentError and the rest are answered.

Settings from the environment: NUGGETIZER_VLLM_GPU_MEMORY (gpu_memory_utilization, 0.9),
NUGGETIZER_VLLM_TP (tensor_parallel_size, 1), NUGGETIZER_VLLM_DTYPE ("auto").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from nuggetizer.errors import ConfigError

from .protocol import Completion, PermanentError, Request
from .reasoning import split_reasoning

__all__ = ["VLLMBackend", "make_backend", "sampling_params"]

INSTALL_HINT = (
    "vllm backend not installed: pip install 'trec-nuggetizer[vllm]' (needs a GPU), or serve the "
    "model with vLLM's server and use openai:<model> --base-url ..."
)


def sampling_params(request: Request) -> Any:
    """vLLM SamplingParams for `request`, its schema as structured outputs (vLLM >= 0.11
    spells it `structured_outputs`, older ones `guided_decoding`)."""
    from vllm import SamplingParams

    extra: dict[str, Any] = {}
    if request.schema is not None:
        try:
            from vllm.sampling_params import StructuredOutputsParams

            extra["structured_outputs"] = StructuredOutputsParams(json=request.schema)
        except ImportError:
            from vllm.sampling_params import GuidedDecodingParams

            extra["guided_decoding"] = GuidedDecodingParams(json=request.schema)
    return SamplingParams(
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        seed=request.seed,
        logprobs=request.top_logprobs or None,
        **extra,
    )


def _first_token_table(output: Any) -> dict[str, float] | None:
    logprobs = getattr(output, "logprobs", None)
    if not logprobs:
        return None
    table = {}
    for token_id, entry in logprobs[0].items():
        token = getattr(entry, "decoded_token", None) or str(token_id)
        table[token] = float(entry.logprob)
    return table


class VLLMBackend:
    """Batches concurrent requests into `engine.chat` calls (see the module docstring)."""

    def __init__(
        self,
        engine: Any,
        model: str,
        *,
        window: float = 0.02,
        max_wait: float = 2.0,
        make_params: Callable[[Request], Any] = sampling_params,
    ) -> None:
        self.engine = engine
        self.spec = f"vllm:{model}"
        self.model = model
        self.max_concurrency = 1_000_000  # every prompt of a step at once
        self.options = {"structured": "vllm"}
        self.endpoint = f"vllm in-process ({model})"
        self.window = window
        self.max_wait = max_wait
        self.make_params = make_params
        self.batches: list[int] = []  # sizes of the batches sent, for reports
        self._queue: list[tuple[Request, asyncio.Future[Completion]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._gpu = asyncio.Lock()

    async def complete(self, request: Request) -> Completion:
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        """Wait for the burst to end, then run the queue as one batch (repeat while queued)."""
        while self._queue:
            waited = 0.0
            while waited < self.max_wait:
                before = len(self._queue)
                await asyncio.sleep(self.window)
                waited += self.window
                if len(self._queue) == before:
                    break
            async with self._gpu:
                batch, self._queue = self._queue, []
                self.batches.append(len(batch))
                await self._run([r for r, _ in batch], [f for _, f in batch])

    async def _run(self, requests: Sequence[Request],
                   futures: Sequence[asyncio.Future[Completion]]) -> None:
        try:
            completions = await asyncio.to_thread(self._generate, requests)
        except Exception as exc:  # noqa: BLE001 - vLLM refuses whole calls for one bad prompt
            if len(requests) == 1:
                if not futures[0].done():
                    futures[0].set_exception(PermanentError(f"vLLM refused the request: {exc}"))
                return
            half = len(requests) // 2
            await self._run(requests[:half], futures[:half])
            await self._run(requests[half:], futures[half:])
            return
        for future, completion in zip(futures, completions, strict=True):
            if not future.done():
                future.set_result(completion)

    def _generate(self, requests: Sequence[Request]) -> list[Completion]:
        conversations = [
            [{"role": role, "content": content} for role, content in r.messages] for r in requests
        ]
        params = [self.make_params(r) for r in requests]
        outputs = self.engine.chat(conversations, sampling_params=params, use_tqdm=False)
        completions = []
        for request, result in zip(requests, outputs, strict=True):
            output = result.outputs[0]
            text, reasoning = split_reasoning({"content": output.text})  # a <think> block
            completions.append(Completion(
                text=text,
                reasoning=reasoning,
                model=self.model,
                prompt_tokens=len(getattr(result, "prompt_token_ids", None) or ()),
                completion_tokens=len(getattr(output, "token_ids", None) or ()),
                finish_reason=getattr(output, "finish_reason", None),
                first_token_logprobs=_first_token_table(output) if request.top_logprobs else None,
            ))
        return completions

    async def aclose(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await self._flusher

    def __repr__(self) -> str:
        return f"VLLMBackend({self.model!r})"


def make_backend(model: str, *, n_ctx: int) -> VLLMBackend:
    """A vLLM engine on `model` (a Hugging Face id or a local folder) with `n_ctx` context."""
    try:
        import vllm
    except ModuleNotFoundError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    try:
        engine = vllm.LLM(
            model=model,
            max_model_len=n_ctx,
            gpu_memory_utilization=float(os.environ.get("NUGGETIZER_VLLM_GPU_MEMORY", "0.9")),
            tensor_parallel_size=int(os.environ.get("NUGGETIZER_VLLM_TP", "1")),
            dtype=os.environ.get("NUGGETIZER_VLLM_DTYPE", "auto"),
        )
    except (OSError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"vllm could not load {model!r}: {exc}") from exc
    return VLLMBackend(engine, model)
