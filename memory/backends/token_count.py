"""A server's own count of a text's tokens, for a server whose streamed replies report none.

llama-cpp-python's server (0.3.36) ends a stream without usage, whatever `stream_options` asks:
its chunks are converted from a text completion's, which carries none. It counts a text on
POST /extras/tokenize/count ({"input"} -> {"count"}); llama.cpp's server on POST /tokenize
({"content"} -> {"tokens": [...]}). Either counts the text alone, without the chat template:
the estimator adds the template's tokens it assumes (memory.context.tokens.counted_messages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from memory.backends.context_size import ASK_DEADLINE, MAX_ANSWER
from memory.backends.http import post_json
from memory.backends.redact import NO_SECRETS, Secrets
from memory.errors import BackendError, BackendRefused

# Streamed replies without a count between two counts asked: the first is counted, then one in
# this many. Counting is cheap beside a reply (llama-cpp-python tokenized a 2,000-token prompt
# in under 10 ms here, where SmolLM2-135M takes seconds to answer), but it is one more request
# on a server that may take one at a time.
COUNT_EVERY = 4


@dataclass(frozen=True, slots=True)
class Route:
    """Where a server counts a text, what it is sent, how its answer is read."""

    path: str
    payload: Callable[[str, str], dict[str, Any]]
    read: Callable[[Any], int | None]


def _count(data: Any) -> int | None:
    count = data.get("count") if isinstance(data, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _tokens(data: Any) -> int | None:
    tokens = data.get("tokens") if isinstance(data, dict) else None
    return len(tokens) if isinstance(tokens, list) else None


ROUTES = (
    Route("/extras/tokenize/count", lambda model, text: {"model": model, "input": text}, _count),
    Route("/tokenize", lambda model, text: {"content": text}, _tokens),
)


class TokenCounter:
    """Asks one server to count texts: one in COUNT_EVERY asked, by the route it answered."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        headers: Mapping[str, str] | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.headers = headers
        self.secrets = secrets
        self._routes: tuple[Route, ...] = ROUTES
        self._uncounted = 0

    async def count(self, text: str) -> int | None:
        """The server's count of `text`'s tokens, when one is due and the server counts."""
        due = self._uncounted % COUNT_EVERY == 0
        self._uncounted += 1
        if not due or not self._routes:
            return None
        for route in self._routes:
            try:
                data = await post_json(
                    self.http,
                    self.base_url + route.path,
                    route.payload(self.model, text),
                    deadline=ASK_DEADLINE,
                    cap=MAX_ANSWER,
                    headers=self.headers,
                    secrets=self.secrets,
                )
            except BackendRefused:
                continue  # no such route here
            except BackendError:
                return None  # not this time: the next due one asks again
            counted = route.read(data)
            if counted is not None:
                self._routes = (route,)
                return counted
        self._routes = ()  # no route counts here: never asked again
        return None
