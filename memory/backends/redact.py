"""Secrets out of error texts: URL credentials, the values of authorization headers, and every
secret the configuration holds, by value.

A backend error's text reaches /stats, the logs and the outbox (stored in the database), and it
often quotes the request: httpx names the URL (`for url 'http://user:pass@host/...'`), h11 quotes
an illegal header value, and a server may quote the API key it refused in its own words
("Incorrect API key provided: sk-..."), which no pattern recognises. `redact` removes what the
patterns find; `Secrets.redact` also removes each configured value, whatever surrounds it. One
of them is applied to every such text before it is kept anywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

HIDDEN = "***"

# scheme://userinfo@host: the userinfo runs to the last "@" before the path. RFC 3986 forbids
# "/", "?" and "#" inside it, so the match never leaves the authority; an "@" typed unescaped in a
# password is covered too (greedy up to the last one). Schemes are short: bounding them keeps a
# long run of "a.a.a..." linear.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,31}://)[^\s/?#]*@")
# The credential after an HTTP auth scheme, wherever it is printed ("Bearer sk-..."). Matched as
# headers are written (ours say "Bearer"), so prose such as "the bearer of bad news" is left alone.
_SCHEME = re.compile(r"\b(?:Bearer|BEARER)\s+[^\s'\",;)\]}]+|\bBasic\s+[A-Za-z0-9+/=._~\-]{4,}")
# A field that holds a secret, printed as `name: value` or `name=value` (header dumps, reprs,
# query strings).
_FIELD = re.compile(
    r"(?i)\b(proxy-authorization|authorization|x-api-key|api[-_]?key|password|passwd)"
    r"(['\"]?\s*[:=]\s*(?:b?['\"])?)[^\r\n'\",;&}]+"
)


def redact(text: str) -> str:
    """Return `text` with URL credentials and authorization values replaced by ***."""
    text = _USERINFO.sub(rf"\1{HIDDEN}@", text)
    text = _SCHEME.sub(lambda m: m.group(0).split(None, 1)[0] + " " + HIDDEN, text)
    return _FIELD.sub(rf"\1\2{HIDDEN}", text)


# A configured value shorter than this is not looked for by value: "admin" or "echo" as a
# password would blank those words wherever a log line or an error says them. Every other secret
# Écho takes is far longer (a Discord token ~70 characters, an API key 20 or more, the web token
# 16 at least); 8 is the shortest password NIST SP 800-63B lets a service accept.
MIN_SECRET_CHARS = 8


@dataclass(frozen=True)
class Secrets:
    """The configured secret values (API keys, tokens, passwords), each removed from a text
    wherever it appears, as written and as a URL or a JSON string would quote it."""

    values: tuple[str, ...] = ()  # longest first: a value inside another goes with it

    @classmethod
    def of(cls, *values: str | None) -> Secrets:
        """The secrets among `values`: those of at least MIN_SECRET_CHARS characters."""
        forms: set[str] = set()
        for value in values:
            if value is None or len(value.strip()) < MIN_SECRET_CHARS:
                continue
            escaped = json.dumps(value)[1:-1]
            forms |= {value, quote(value, safe=""), quote_plus(value), escaped}
        return cls(tuple(sorted(forms, key=lambda f: (-len(f), f))))

    @property
    def longest(self) -> int:
        """The length of the longest value (0 without any)."""
        return len(self.values[0]) if self.values else 0

    def including(self, *values: str | None) -> Secrets:
        """These secrets and `values`."""
        return Secrets.of(*self.values, *values)

    def remove(self, text: str) -> str:
        """Return `text` with each of these values replaced by ***."""
        for value in self.values:
            # Again until none is left: "x" + value + "y" may spell a value once replaced
            # (each round shortens the text, so it ends).
            while value in text:
                text = text.replace(value, HIDDEN)
        return text

    def redact(self, text: str) -> str:
        """Return `text` without any of these values, and redacted as `redact` does."""
        return redact(self.remove(text))


NO_SECRETS = Secrets()
