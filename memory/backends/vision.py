"""Pictures sent to a chat model, and whether the server's model sees them.

A message carries its pictures (memory.pictures.Picture) under PICTURES; each dialect writes them
its way: Ollama's `/api/chat` as the message's `images` (base64), an OpenAI-compatible server as
`image_url` content parts (a data: URL). Whether a server's model sees images is never assumed
from the backend's name. It is learned, per server and model, like the structured-output mode
(memory.backends.structured.Negotiator keeps it, the database keeps it across restarts):

    the server says it   Ollama's `/api/show` lists "vision" among the model's `capabilities`
                         (Ollama 0.6 and later); llama.cpp's llama-server says
                         `modalities.vision` in `GET /props` (with an --mmproj loaded)
    a refusal            a request with a picture refused in words that name images: Ollama's
                         "this model is missing data required for image input", llama-server's
                         "image input is not supported", OpenAI's "image_url is only supported by
                         certain models", vLLM's "is not a multimodal model"
    an answer            a request with a picture answered: the model took it

A refusal is learned once and raised as ImagesRefused: the turn asks again without the picture,
telling the model it was there (memory.turn.replying).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import httpx

from memory.backends.http import get_json, post_json
from memory.backends.redact import NO_SECRETS, Secrets
from memory.errors import BackendError, BackendRefused
from memory.pictures import Picture

# The key of a message's pictures, as the turn and the reflection hand them to a backend.
PICTURES = "pictures"
# A refusal about the pictures themselves, as the servers above word it.
_ABOUT_IMAGES = re.compile(r"(?i)image|vision|multimodal|mmproj|modalit")
# Seconds the server is given to say what the model takes (a local call, answered at once).
ASK_DEADLINE = 10.0
_MAX_ANSWER = 4 * 1024 * 1024


def pictures_of(messages: Sequence[Mapping[str, Any]]) -> tuple[Picture, ...]:
    """Every picture the messages carry that can be shown."""
    return tuple(p for m in messages for p in m.get(PICTURES, ()) if p.seen)


def without_pictures(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message as any server takes it: its pictures left out."""
    return {k: v for k, v in message.items() if k != PICTURES}


def ollama_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message as Ollama's /api/chat takes it: its pictures as base64 `images`."""
    out = without_pictures(message)
    shown = [p.base64() for p in message.get(PICTURES, ()) if p.seen]
    if shown:
        out["images"] = shown
    return out


def openai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message as an OpenAI-compatible server takes it: with pictures, its content is a
    list of parts, the text first, then each picture as a data: URL."""
    out = without_pictures(message)
    shown = [p for p in message.get(PICTURES, ()) if p.seen]
    if shown:
        parts: list[dict[str, Any]] = [{"type": "text", "text": out.get("content", "")}]
        parts += [
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{p.base64()}"}}
            for p in shown
        ]
        out["content"] = parts
    return out


def about_images(exc: BackendError) -> bool:
    """Whether an error answering a request with pictures is a refusal of the pictures."""
    text = exc.detail if isinstance(exc, BackendRefused) else str(exc)
    return bool(_ABOUT_IMAGES.search(text))


async def ask_vision(
    http: httpx.AsyncClient,
    backend: Literal["ollama", "openai"],
    base_url: str,
    model: str,
    *,
    headers: Mapping[str, str] | None = None,
    secrets: Secrets = NO_SECRETS,
    deadline: float = ASK_DEADLINE,
) -> bool | None:
    """Whether the server says its model sees images (None: it does not say). BackendError
    when it could not be asked."""
    base = base_url.rstrip("/")
    try:
        if backend == "ollama":
            shown = await post_json(
                http,
                base + "/api/show",
                {"model": model},
                deadline=deadline,
                cap=_MAX_ANSWER,
                secrets=secrets,
            )
            capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
            if isinstance(capabilities, list):
                return "vision" in capabilities
            return None
        props = await get_json(
            http,
            base + "/props",
            deadline=deadline,
            cap=_MAX_ANSWER,
            headers=headers,
            secrets=secrets,
        )
    except BackendRefused:
        return None  # an older Ollama, or a server without /props (vLLM, llama-cpp-python)
    modalities = props.get("modalities") if isinstance(props, dict) else None
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    return vision if isinstance(vision, bool) else None
