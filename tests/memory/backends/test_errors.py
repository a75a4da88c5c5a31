"""Error answers as real servers word them: a refused request is not an outage, and what is shown
is the server's own message, short, without what the request carried, never a credential."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.backends.chat import OpenAIChat
from memory.backends.error_words import MAX_DETAIL_CHARS, answered_error
from memory.backends.redact import Secrets
from memory.backends.structured import Mode, Negotiator
from memory.errors import BackendRefused, BackendResponseError, BackendUnavailable
from tests.fakes.openai import (
    GRAMMAR_REFUSAL,
    LLAMA_CPP_PYTHON_REFUSAL,
    NO_JSON_MODE_REFUSAL,
    serve_fake_openai,
)

URL = "http://127.0.0.1:8011/v1/chat/completions"


@pytest.mark.parametrize(
    ("status", "body", "kind", "detail"),
    [
        (*LLAMA_CPP_PYTHON_REFUSAL, BackendRefused,
         "response_format.type: Input should be 'text' or 'json_object'"),
        (*GRAMMAR_REFUSAL, BackendRefused, "failed to parse grammar"),
        (*NO_JSON_MODE_REFUSAL, BackendRefused,
         "Unsupported parameter: 'response_format' is not supported with this model."),
        # ik_llama.cpp words the same refusal as a 500 server_error.
        (500, {"error": {"code": 500, "type": "server_error", "message": "response_format type "
                         'must be one of "text" or "json_object", but got: json_schema'}},
         BackendRefused,
         'response_format type must be one of "text" or "json_object", but got: json_schema'),
        # llama.cpp's 501 for what it does not support.
        (501, {"error": {"code": 501, "message": "This server does not support embeddings.",
                         "type": "not_supported_error"}},
         BackendRefused, "This server does not support embeddings."),
        # FastAPI's own validation answer.
        (422, {"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required",
                           "input": {"model": "m"}}]}, BackendRefused, "messages: Field required"),
        # The server failing, not the request: retried later.
        (500, {"error": "model crashed"}, BackendUnavailable, "model crashed"),
        (503, {"error": {"message": "Loading model", "type": "unavailable_error"}},
         BackendUnavailable, "Loading model"),
        (429, {}, BackendUnavailable, "no detail"),
        (200, {"error": "in-band failure"}, BackendResponseError, "in-band failure"),
    ],
)  # fmt: skip
def test_each_answer_is_the_error_it_stands_for(
    status: int, body: dict[str, Any], kind: type[Exception], detail: str
) -> None:
    error = answered_error(URL, status, body)
    assert type(error) is kind
    assert str(error) == f"{URL}: HTTP {status}: {detail}"
    if isinstance(error, BackendRefused):
        assert (error.status, error.detail) == (status, detail)


def test_a_validation_error_never_shows_the_input_it_quotes() -> None:
    said = "my sister Léa is in hospital"
    pydantic = (
        "2 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'messages', 0, "
        f"'content'), 'msg': 'Input should be a valid string', 'input': {{'text': '{said}'}}}}\n"
        "  {'type': 'missing', 'loc': ('body', 'model'), 'msg': 'Field required', 'input': {}}"
    )
    own_str = (
        "1 validation error for Request\nmessages.0.content\n  Input should be a valid string "
        f"[type=string_type, input_value={{'text': '{said}'}}, input_type=dict]"
    )
    fastapi = {"detail": [{"loc": ["body", "messages", 0], "msg": "bad", "input": said}]}
    for status, body in ((500, {"error": {"message": pydantic}}), (500, {"error": own_str}),
                         (422, fastapi)):  # fmt: skip
        error = answered_error(URL, status, body)
        assert isinstance(error, BackendRefused) and "Léa" not in str(error)
    assert answered_error(URL, 500, {"error": {"message": pydantic}}).detail == (  # type: ignore[union-attr]
        "messages.0.content: Input should be a valid string; model: Field required"
    )


def test_a_long_message_is_shortened_and_a_credential_hidden() -> None:
    secret = "http://admin:hunter2@10.0.0.5:8080 refused Bearer sk-abcdef " + "x" * 1000
    error = answered_error("http://u:pw@host/v1", 400, {"error": {"message": secret}})
    assert isinstance(error, BackendRefused)
    assert "hunter2" not in str(error) and "sk-abcdef" not in str(error) and "pw" not in str(error)
    assert len(error.detail) == MAX_DETAIL_CHARS and error.detail.endswith("…")
    # Cut where a password would be cut before its "@": hidden all the same.
    cut = "x" * (MAX_DETAIL_CHARS - 20) + " http://admin:hunter2hunter2hunter2@10.0.0.5/"
    error = answered_error(URL, 400, {"error": cut})
    assert "hunter" not in str(error)


async def test_the_llama_cpp_python_refusal_over_http_is_a_refusal_not_an_outage() -> None:
    async with (
        serve_fake_openai({"json_schema": LLAMA_CPP_PYTHON_REFUSAL}) as server,
        httpx.AsyncClient() as http,
    ):
        chat = OpenAIChat(http, server.url, "m", modes=Negotiator(override=Mode.JSON_SCHEMA))
        with pytest.raises(BackendRefused) as caught:
            await chat.chat([], schema={"type": "object"}, deadline=5)
    assert caught.value.detail == "response_format.type: Input should be 'text' or 'json_object'"


def test_no_part_of_a_key_cut_in_two_is_shown() -> None:
    # The message was cut 4,000 characters plus the longest secret in, then its pydantic
    # "[type=...]" removed: what stood after the cut, the key's first 38 characters, came first.
    key = "sk-live-0123456789abcdefghijklmnopqrstuv"
    message = "[type=" + "a" * 3994 + "]" + key
    error = answered_error(URL, 401, {"error": {"message": message}}, Secrets.of(key))
    assert isinstance(error, BackendRefused)
    assert key[:8] not in str(error) and key[:8] not in error.detail
