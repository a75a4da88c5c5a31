"""What a backend's error answer says: the server's own words, shortened, and whether the
request itself was refused (BackendRefused: sending it again will not help) or the server
failed (BackendUnavailable: retry later).

The words are kept short and without what the request carried: a validation error quotes its
input, which may be what a person said. Every text is redacted (it reaches /stats and the log).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory.backends.redact import NO_SECRETS, Secrets
from memory.errors import BackendError, BackendRefused, BackendResponseError, BackendUnavailable

# The server's own words in an error text: enough for "response_format.type: Input should be
# 'text' or 'json_object'" or "failed to parse grammar", short enough for one /stats line.
MAX_DETAIL_CHARS = 200
# A 5xx whose body says the request itself was refused, not the server failing: llama-cpp-python
# answers 500 to a validation error, llama.cpp 501 ("not_supported_error") to what it lacks.
_REFUSED = re.compile(
    r"(?i)validation error|input should be|invalid.request|not.supported|unsupported|"
    r"response_format|json_schema|grammar|extra (?:inputs|fields)|unknown (?:field|parameter)"
)
# One error of a pydantic validation as llama-cpp-python prints it (a dict repr per error); its
# 'input' (which may quote what a person said) is left out.
_PYDANTIC_ERROR = re.compile(r"'loc': \(([^)]{0,300})\), 'msg': (\"[^\"]{0,300}\"|'[^']{0,300}')")


def answered_error(
    url: str, status: int, data: Any, secrets: Secrets = NO_SECRETS
) -> BackendError | None:
    """The error an answer stands for (None when it is not one): 429 and a 5xx are the
    server's failure, unless the body says the request was refused; a 4xx is a refusal; an
    error in a 200 answer is a response error. Its text holds none of `secrets`."""
    if status < 400 and not (isinstance(data, dict) and data.get("error")):
        return None
    detail, kind = server_message(data, secrets)
    text = secrets.redact(f"{url}: HTTP {status}: {detail}")
    if status == 429 or (status >= 500 and not _REFUSED.search(f"{detail} {kind}")):
        return BackendUnavailable(text)
    if status >= 400:
        return BackendRefused(text, status=status, detail=secrets.redact(detail))
    return BackendResponseError(text)


def server_message(data: Any, secrets: Secrets = NO_SECRETS) -> tuple[str, str]:
    """The server's own words about an error, shortened, and the error's type if it gives one.

    Shapes: {"error": "..."} (Ollama), {"error": {"message", "type"}} (OpenAI, llama.cpp,
    llama-cpp-python), {"detail": "..." or [{"loc", "msg"}]} (FastAPI)."""
    error = data.get("error") if isinstance(data, dict) else None
    kind = ""
    if isinstance(error, dict):
        kind = error["type"] if isinstance(error.get("type"), str) else ""
        error = error.get("message")
    if not error and isinstance(data, dict):
        error = data.get("detail")
    kind = _head(kind, 60, secrets)[:60]
    if isinstance(error, list):
        error = "; ".join(_field_error(e) for e in error[:3] if isinstance(e, dict))
    # Only a string is quoted: str() of an arbitrary value could be huge or nested too deeply.
    if not isinstance(error, str) or not error.strip():
        return "no detail", kind
    # Redacted before it is cut: a password cut before its "@" would no longer look like one,
    # nor a key cut in two like a configured value.
    return _shorten(secrets.redact(_condensed(_head(error, 4000, secrets)))), kind


def _head(text: str, size: int, secrets: Secrets) -> str:
    """About the first `size` characters of `text`, redacted, without the part of a secret a
    cut leaves: the cut is made `secrets.longest` further, and that much is dropped after
    redacting (`_condensed` may pull the end of a text to its start: a long "[type=...]")."""
    if len(text) <= size + secrets.longest:
        return secrets.redact(text)
    return secrets.redact(text[: size + secrets.longest])[: -secrets.longest or None]


def _condensed(text: str) -> str:
    """A validation error as `field: what is wrong`, without the input it quotes."""
    errors = _PYDANTIC_ERROR.findall(text)
    if errors:
        return "; ".join(f"{_location(loc.split(','))}: {msg[1:-1]}" for loc, msg in errors[:3])
    text = re.sub(r"\s*\[type=[^\]]*\]", "", text)  # pydantic's own "[type=..., input_value=...]"
    return text.split("\n  File ")[0]  # a traceback after the message


def _field_error(error: Mapping[str, Any]) -> str:
    loc, msg = error.get("loc"), error.get("msg")
    where = _location([str(p) for p in loc[:8]]) if isinstance(loc, list) else ""
    what = msg if isinstance(msg, str) else "invalid"
    return f"{where}: {what}" if where else what


def _location(parts: Sequence[str]) -> str:
    names = [p.strip().strip("'\"") for p in parts]
    return ".".join(n for n in names if n and n != "body")


def _shorten(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_DETAIL_CHARS else line[: MAX_DETAIL_CHARS - 1] + "…"
