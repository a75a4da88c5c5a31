"""Secrets out of error texts: URL credentials and the values of authorization headers.

A backend error's text reaches /stats, the logs and the outbox (stored in the database), and it
often quotes the request: httpx names the URL (`for url 'http://user:pass@host/...'`), h11 quotes
an illegal header value. `redact` is applied to every such text before it is kept anywhere.
"""

from __future__ import annotations

import re

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
