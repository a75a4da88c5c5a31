"""Error texts lose their credentials: property tests over generated URLs and header dumps."""

from __future__ import annotations

import json
import string
import time
from urllib.parse import quote, quote_plus

from hypothesis import given
from hypothesis import strategies as st

from memory.backends.redact import MIN_SECRET_CHARS, Secrets, redact

# Userinfo characters a person can type (RFC 3986 unreserved, sub-delims, percent escapes), and
# the "@" some type unescaped in a password.
_userinfo = st.text(string.ascii_letters + string.digits + "-._~!$&'()*+,;=%@", min_size=1)
_host = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6})?(:[0-9]{2,5})?", fullmatch=True)
_path = st.from_regex(r"(/[A-Za-z0-9._~-]{0,12}){0,3}", fullmatch=True)
_scheme = st.sampled_from(["http", "https", "HTTP", "socks5h", "ws"])
_around = st.sampled_from(["{}", "for url '{}'", "{}: HTTP 500: model crashed", "<{}>\n", "{}."])
# Tokens as API keys look: base64url-ish, long enough to be told apart from the text around.
_token = st.text(string.ascii_letters + string.digits + "-._~+/=", min_size=12, max_size=60)
SECRET = "Zq9-SECRET-"


@given(_scheme, _userinfo, _userinfo, _host, _path, _around)
def test_url_credentials_never_survive_and_the_server_still_shows(
    scheme: str, user: str, password: str, host: str, path: str, around: str
) -> None:
    url = f"{scheme}://{user}:{SECRET}{password}@{host}{path}"
    shown = redact(around.format(url))
    assert SECRET not in shown
    assert f"{scheme}://***@{host}{path}" in shown


@given(_token, st.sampled_from(["Bearer", "BEARER", "Basic"]))
def test_authorization_values_never_survive(token: str, scheme: str) -> None:
    secret = SECRET + token
    for text in (
        f"Illegal header value b'{scheme} {secret}\\n'",
        f"{{'authorization': '{scheme} {secret}'}}",
        f"Authorization: {scheme} {secret}\r\nHost: x",
        f"headers={{b'Authorization': b'{scheme} {secret}'}}",
        f"http://host/v1?api_key={secret}&x=1",
        f"x-api-key: {secret}",
    ):
        assert SECRET not in redact(text), text


@given(_scheme, _host, _path, _around)
def test_a_url_without_credentials_is_left_alone(
    scheme: str, host: str, path: str, around: str
) -> None:
    text = around.format(f"{scheme}://{host}{path}")
    assert redact(text) == text


@given(st.text())
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def test_ordinary_error_texts_are_unchanged() -> None:
    for text in (
        "http://127.0.0.1:11434/api/chat: HTTP 404: model 'llama3.1:8b' not found",
        "ConnectError: [Errno 111] Connection refused",
        "a basic check failed; the bearer of bad news",
    ):
        assert redact(text) == text


def _cost(text: str) -> float:
    """The least time of three redactions of `text` (the least is the one load disturbed least)."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - started)
    return min(times)


def test_long_hostile_texts_are_redacted_in_linear_time() -> None:
    """Each hostile text costs about what an ordinary text of its length costs, measured side by
    side (a backtracking pattern is thousands of times slower at 200,000 characters; an absolute
    bound failed on a loaded machine)."""
    ordinary = _cost(("an ordinary error text, " * 9000)[:200_000])
    for text in ("a." * 100_000, "a://" * 50_000, "authorization" + " " * 200_000, "@" * 200_000):
        assert _cost(text) < 50 * ordinary + 0.05, text[:20]


# Secret values as configured: any printable characters, at least MIN_SECRET_CHARS of them.
_value = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=8, max_size=80
)


@given(_value, st.text(), st.text(), st.sampled_from(["{}", "{}{}", "'{}'", '"{}"', "[{}]"]))
def test_a_configured_value_never_survives_whatever_surrounds_it(
    value: str, before: str, after: str, shape: str
) -> None:
    secrets = Secrets.of(value, None, "short")
    for form in (value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]):
        shown = secrets.redact(before + shape.format(form, form) + after)
        assert value not in shown and form not in shown


@given(st.text(max_size=MIN_SECRET_CHARS - 1), st.text())
def test_a_value_too_short_to_tell_from_words_is_left_alone(value: str, text: str) -> None:
    assert Secrets.of(value).values == ()
    assert Secrets.of(value).remove(text) == text


def test_a_password_in_a_url_is_removed_as_the_url_escapes_it() -> None:
    secrets = Secrets.of("p@ss/wörd 1")
    text = "cannot connect to postgresql://echo:p%40ss%2Fw%C3%B6rd%201@db/echo"
    assert secrets.redact(text) == "cannot connect to postgresql://***@db/echo"
    assert secrets.remove("password=p%40ss%2Fw%C3%B6rd+1;") == "password=***;"
