"""Embedding clients over HTTP: Ollama's `/api/embed` and OpenAI-compatible `/v1/embeddings`,
and the check of what they answer (as many vectors as texts, one dimension, float32 numbers).

Apart from the chat clients (memory.backends.chat) because embeddings are a different contract:
vectors
stored as float32, one request at a time shared by the turn and the indexer. The protocol the
engine takes, `Embedder`, stays in memory.backends.chat beside `ChatBackend`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from memory.backends.http import post_json
from memory.backends.redact import NO_SECRETS, Secrets, redact
from memory.errors import BackendResponseError

# The largest embeddings answer read: the indexer's batch of 32 texts at 4,096 dimensions (the
# widest common models) is 2.9 MB of JSON (measured: 22.5 bytes a float32 as JSON); 32 MB is 11x it.
MAX_EMBED_BODY = 32 * 1024 * 1024
# Dimensions of one embedding: 4x the widest common model (4,096: Qwen3-Embedding-8B, NV-Embed-v2).
MAX_EMBEDDING_DIM = 16_384
# Vectors are stored as float32: a larger magnitude would be stored as infinity.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


# A server that does not pool its model's token vectors answers a list of vectors per text (seen
# with llama-cpp-python's server serving a chat model at /v1/embeddings).
PER_TOKEN = (
    "the server answers one vector per token, not one per text (its model is not pooled):"
    " set [llm] embedding_base_url to a server of an embedding model, or start this one with"
    " pooling (llama.cpp's llama-server: --pooling mean)"
)


def _vectors(data: Any, key: str, count: int, url: str) -> list[list[float]]:
    vectors = data.get(key) if isinstance(data, dict) else None
    if not isinstance(vectors, list) or len(vectors) != count:
        raise BackendResponseError(redact(f"{url}: expected {count} embeddings"))
    out: list[list[float]] = []
    for vector in vectors:
        if isinstance(vector, dict):  # OpenAI: {"embedding": [...], "index": i}
            vector = vector.get("embedding")
        if isinstance(vector, list) and vector and isinstance(vector[0], list):
            raise BackendResponseError(redact(f"{url}: {PER_TOKEN}"))
        if not isinstance(vector, list) or not vector or len(vector) > MAX_EMBEDDING_DIM:
            raise BackendResponseError(redact(f"{url}: an embedding is not a list of numbers"))
        floats = [_float32(x) for x in vector]
        if any(x is None for x in floats):
            raise BackendResponseError(
                redact(f"{url}: an embedding holds something else than float32 numbers")
            )
        out.append([x for x in floats if x is not None])
    if len({len(v) for v in out}) > 1:
        raise BackendResponseError(redact(f"{url}: embeddings of different dimensions"))
    return out


def _float32(value: object) -> float | None:
    """The value as a float that float32 holds (finite), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -_FLOAT32_MAX <= value <= _FLOAT32_MAX:
        return None  # compared as integers: float() of a 400-digit one raises OverflowError
    number = float(value)
    return number if -_FLOAT32_MAX <= number <= _FLOAT32_MAX else None  # NaN fails both


class _HttpEmbedder:
    """Embeddings over HTTP, one request at a time: the turn and the indexer queue on `lock`,
    which is why the turn bounds its whole wait (lock included) with asyncio.wait_for."""

    path = ""
    vectors_key = ""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.url = base_url.rstrip("/") + self.path
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # The key it sends is one even when the configuration's were not given.
        self.secrets = secrets.including(api_key)
        self.lock = asyncio.Lock()

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        async with self.lock:
            data = await post_json(
                self.http,
                self.url,
                {"model": self.model, "input": list(texts)},
                deadline=deadline,
                cap=MAX_EMBED_BODY,
                headers=self.headers,
                secrets=self.secrets,
            )
        return _vectors(data, self.vectors_key, len(texts), self.url)


class OllamaEmbedder(_HttpEmbedder):
    """Embeddings from Ollama's `/api/embed`."""

    path = "/api/embed"
    vectors_key = "embeddings"


class OpenAIEmbedder(_HttpEmbedder):
    """Embeddings from an OpenAI-compatible `/v1/embeddings` (llama.cpp, vLLM, LM Studio)."""

    path = "/v1/embeddings"
    vectors_key = "data"
