"""A real HTTP server on loopback that speaks the OpenAI-compatible API, scripted by each test,
and refuses structured output the way real servers do.

Endpoints: /v1/chat/completions, /v1/embeddings, /v1/models, /props, /extras/tokenize/count.
Every request is recorded;
`modes_sent()` says which structured-output mode each chat request used. `refuses` maps a mode
to the answer the server gives it; the profiles below are the answers real servers gave:

LLAMA_CPP_PYTHON  llama-cpp-python 0.3: json_schema is not a response_format type it knows; its
                  FastAPI route answers HTTP 500 with the pydantic error (observed verbatim).
LLAMA_SERVER      llama.cpp's llama-server (and the gguf-server fork) on a schema its grammar
                  compiler cannot build: HTTP 400 "failed to parse grammar".
NO_JSON_MODE      a server without any JSON mode: HTTP 400 naming response_format.

`refuse_limits` makes json_schema and json_object_schema refused like llama-server refuses a
schema with big maxLength/maxItems.

`context` gives the server a context, in the fake's tokens (`fake_tokens`): a prompt that does
not fit is refused in the words of `context_words` (llama_cpp_python_words, llama_server_words,
vllm_words, each as the real server words it), a streamed one by llama-cpp-python with a 200
whose connection closes before its first event (observed against 0.3.36). `says_context` is
where the server says it: "props" (llama.cpp's GET /props), "models" (vLLM's `max_model_len` in
/v1/models) or None (llama-cpp-python says it nowhere). `stream_usage` False: a stream that
reports no usage and starts with the role alone (llama-cpp-python's, whatever `stream_options`
asks); `counts`: POST /extras/tokenize/count answers (llama-cpp-python's).

`delay` holds every chat answer that many seconds. A request with "stream": true is answered in
one block unless `stream` (a StreamScript) says to stream it, as server-sent events at its pace.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import serve
from tests.fakes.ollama import fake_vector
from tests.fakes.streams import STREAM_REFUSAL, StreamScript

Refusal = tuple[int, dict[str, Any]]
# What a too long prompt is refused with, from the server's context and the prompt's tokens.
ContextWords = Callable[[int, int, int], dict[str, Any]]


def fake_tokens(text: str) -> int:
    """The fake's tokenizer: one token a word or a sign (Écho's estimate counts no fewer)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def prompt_tokens(payload: Mapping[str, Any]) -> int:
    """A chat request's prompt in the fake's tokens: 4 a message for its template."""
    return sum(fake_tokens(str(m.get("content", ""))) + 4 for m in payload.get("messages", []))


def llama_cpp_python_words(context: int, prompt: int, completion: int) -> dict[str, Any]:
    # Observed verbatim from llama-cpp-python 0.3.36 started with --n_ctx 512.
    return {
        "error": {
            "message": f"This model's maximum context length is {context} tokens. However, you "
            f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} in "
            "the completion). Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def llama_server_words(context: int, prompt: int, completion: int) -> dict[str, Any]:
    # llama.cpp's server (tools/server), as its users quote it.
    return {
        "error": {
            "code": 400,
            "message": f"request ({prompt} tokens) exceeds the available context size "
            f"({context} tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": context,
        }
    }


def vllm_words(context: int, prompt: int, completion: int) -> dict[str, Any]:
    # vLLM's OpenAI server, as its users quote it.
    return {
        "error": {
            "message": f"This model's maximum context length is {context} tokens. However, your "
            f"request has {prompt} input tokens. Please reduce the length of the input messages.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }


LLAMA_CPP_PYTHON_REFUSAL: Refusal = (
    500,
    {
        "error": {
            "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
            "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
            "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
            '  File "/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in '
            "create_chat_completion\n    POST /v1/chat/completions",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
)
GRAMMAR_REFUSAL: Refusal = (
    400,
    {"error": {"code": 400, "message": "failed to parse grammar", "type": "invalid_request_error"}},
)
NO_JSON_MODE_REFUSAL: Refusal = (
    400,
    {
        "error": {
            "message": "Unsupported parameter: 'response_format' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "response_format",
            "code": "unsupported_parameter",
        }
    },
)

LLAMA_CPP_PYTHON: Mapping[str, Refusal] = {"json_schema": LLAMA_CPP_PYTHON_REFUSAL}
LLAMA_SERVER: Mapping[str, Refusal] = {
    "json_schema": GRAMMAR_REFUSAL,
    "json_object_schema": GRAMMAR_REFUSAL,
}
NO_JSON_MODE: Mapping[str, Refusal] = {
    mode: NO_JSON_MODE_REFUSAL for mode in ("json_schema", "json_object_schema", "json_object")
}

LIMIT_KEYS = frozenset({"maxLength", "minLength", "maxItems", "minItems"})


def mode_of(payload: Mapping[str, Any]) -> str:
    """The structured-output mode a chat request used."""
    fmt = payload.get("response_format")
    if not isinstance(fmt, dict):
        return "none"
    if fmt.get("type") == "json_schema":
        return "json_schema"
    if fmt.get("type") == "json_object":
        return "json_object_schema" if "schema" in fmt else "json_object"
    return str(fmt.get("type"))


def schema_of(payload: Mapping[str, Any]) -> Any:
    """The schema a chat request sent (None when it sent none)."""
    fmt = payload.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema")
    return fmt.get("schema")


def keys_at_any_depth(node: Any) -> set[str]:
    """Every key of every object inside `node`."""
    if isinstance(node, dict):
        return set(node).union(*(keys_at_any_depth(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(keys_at_any_depth(v) for v in node))
    return set()


@dataclass
class FakeOpenAI:
    url: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    refuses: Mapping[str, Refusal] = field(default_factory=dict)
    refuse_limits: bool = False
    delay: float = 0.0
    chat_reply: Callable[[dict[str, Any]], str] = lambda payload: "D'accord."
    models: list[str] = field(default_factory=lambda: ["/models/SmolLM2-135M-Instruct.gguf"])
    # How a streamed request is answered (by default: in one block, as a server that cannot).
    stream: StreamScript = field(default_factory=StreamScript)
    context: int | None = None
    context_words: ContextWords = llama_cpp_python_words
    says_context: str | None = None
    stream_usage: bool = True
    counts: bool = False
    # The prompt tokens of each chat request, and of those the server answered.
    prompts: list[int] = field(default_factory=list)

    def chats(self) -> list[dict[str, Any]]:
        return [p for path, p in self.calls if path == "/v1/chat/completions"]

    def modes_sent(self) -> list[str]:
        return [mode_of(p) for p in self.chats()]

    async def chat(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/v1/chat/completions", payload))
        await asyncio.sleep(self.delay)
        tokens = prompt_tokens(payload)
        self.prompts.append(tokens)
        if self.context is not None and tokens >= self.context:
            if payload.get("stream") is True and self.stream.on:
                # llama-cpp-python: the event stream's headers, then the connection closed.
                response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await response.prepare(request)
                assert request.transport is not None
                request.transport.close()
                return response
            words = self.context_words(self.context, tokens, int(payload.get("max_tokens") or 0))
            return web.json_response(words, status=400)
        mode = mode_of(payload)
        refusal = self.refuses.get(mode)
        limited = keys_at_any_depth(schema_of(payload)) & LIMIT_KEYS
        if refusal is None and self.refuse_limits and limited:
            refusal = GRAMMAR_REFUSAL
        if refusal is not None:
            status, body = refusal
            return web.json_response(body, status=status)
        if payload.get("stream") is True and self.stream.refuse:
            return web.json_response(STREAM_REFUSAL, status=400)
        content = self.chat_reply(payload)
        if payload.get("stream") is True and self.stream.on:
            return await self._streamed(request, payload, content)
        return web.json_response(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": payload.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": len(content) // 4},
            }
        )

    async def _streamed(
        self, request: web.Request, payload: dict[str, Any], content: str
    ) -> web.StreamResponse:
        def event(body: dict[str, Any]) -> bytes:
            return b"data: " + json.dumps(body).encode() + b"\n\n"

        def chunk(text: str, finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
            return event({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                          "choices": [choice]})  # fmt: skip

        usage = {"prompt_tokens": 10, "completion_tokens": len(content) // 4}
        last = [chunk("", "stop"), event({"choices": [], "usage": usage}), b"data: [DONE]\n\n"]
        lines = [chunk(piece) for piece in self.stream.pieces(content)]
        if not self.stream_usage:
            role = {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}
            lines = [event({"object": "chat.completion.chunk", "choices": [role]}), *lines]
            last = [chunk("", "stop"), b"data: [DONE]\n\n"]
        return await self.stream.send(request, "text/event-stream", lines, last, chunk)

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/v1/embeddings", payload))
        texts = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                for i, t in enumerate(texts)]  # fmt: skip
        return web.json_response({"object": "list", "data": data, "model": payload.get("model")})

    async def list_models(self, request: web.Request) -> web.StreamResponse:
        data: list[dict[str, Any]] = [
            {"id": m, "object": "model", "owned_by": "me"} for m in self.models
        ]
        self.calls.append(("/v1/models", {}))
        if self.says_context == "models":
            data = [{**m, "max_model_len": self.context} for m in data]
        return web.json_response({"object": "list", "data": data})

    async def props(self, request: web.Request) -> web.StreamResponse:
        self.calls.append(("/props", {}))
        if self.says_context != "props":
            return web.json_response({"detail": "Not Found"}, status=404)
        settings = {"id": 0, "n_ctx": self.context, "params": {"n_predict": -1}}
        return web.json_response({"default_generation_settings": settings, "total_slots": 1})

    async def count(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/extras/tokenize/count", payload))
        if not self.counts:
            return web.json_response({"detail": "Not Found"}, status=404)
        return web.json_response({"count": fake_tokens(str(payload.get("input", "")))})


def reflection_when_asked(reflection: Mapping[str, Any]) -> Callable[[dict[str, Any]], str]:
    """A chat_reply: `reflection` as JSON to a structured request (a response_format, or the
    schema written in the prompt), "D'accord." to a turn."""
    text = json.dumps(reflection)

    def reply(payload: dict[str, Any]) -> str:
        prompt = " ".join(str(m.get("content", "")) for m in payload.get("messages", []))
        asked = "response_format" in payload or "JSON schema" in prompt
        return text if asked else "D'accord."

    return reply


@asynccontextmanager
async def serve_fake_openai(
    refuses: Mapping[str, Refusal] | None = None,
) -> AsyncIterator[FakeOpenAI]:
    """Start the fake server on 127.0.0.1 (a free port) in the running loop."""
    fake = FakeOpenAI(refuses=dict(refuses or {}))
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.chat)
    app.router.add_post("/v1/embeddings", fake.embeddings)
    app.router.add_get("/v1/models", fake.list_models)
    app.router.add_get("/props", fake.props)
    app.router.add_post("/extras/tokenize/count", fake.count)
    async with serve(app) as fake.url:
        yield fake
