"""Markup built from parts: every plain `str` is escaped, only `Html` passes as is.

Memory texts, display names, summaries and anchors are written by people: a page built with
these helpers cannot be given markup by them, whatever they wrote.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Iterable, Mapping
from urllib.parse import urlencode


class Html(str):
    """Markup already escaped (built by these helpers only)."""

    __slots__ = ()


def esc(value: object) -> Html:
    """Escape a value for text or an attribute (None: nothing)."""
    if value is None:
        return Html("")
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(sep.join(esc(p) for p in parts))


def el(name: str, /, *children: object, **attrs: object) -> Html:
    """An element; `class_` is `class`, False/None attributes are left out, True is bare."""
    out = [name]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        out.append(attr if value is True else f'{attr}="{esc(value)}"')
    return Html(f"<{' '.join(out)}>{join(children)}</{name}>")


def link(href: str, text: object, **query: object) -> Html:
    """A link to a page of this site, with its query parameters (None ones left out)."""
    kept = {k: v for k, v in query.items() if v not in (None, "", False)}
    return el("a", text, href=f"{href}?{urlencode(kept)}" if kept else href)


def table(head: Iterable[object], rows: Iterable[Iterable[object]], **attrs: object) -> Html:
    return el(
        "table",
        el("thead", el("tr", *(el("th", h, scope="col") for h in head))),
        el("tbody", *(el("tr", *(el("td", c) for c in row)) for row in rows)),
        **attrs,
    )


def pairs(rows: Iterable[tuple[object, object]], **attrs: object) -> Html:
    """A two-column table of labels and values (no header row)."""
    return el(
        "table",
        el("tbody", *(el("tr", el("th", k, scope="row"), el("td", v)) for k, v in rows)),
        **attrs,
    )


def empty(text: str) -> Html:
    """What the page says where there is nothing yet: what would fill it."""
    return el("p", text, class_="empty")


def when(at: float | None) -> str:
    """A moment in UTC, to the minute ("—" for none)."""
    if at is None:
        return "—"
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M")


def ago(at: float | None, now: float) -> str:
    if at is None:
        return "—"
    minutes = max(0, int(now - at) // 60)
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // 1440} days ago"


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms"


def counts(found: Mapping[str, int]) -> str:
    """ "a 2, b 1" (most first), or "—"."""
    ordered = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in ordered) or "—"


NAV = (
    ("/", "Overview"),
    ("/health", "Memory health"),
    ("/people", "People"),
    ("/turns", "Turns"),
    ("/stories", "Stories"),
)


def page(title: str, covers: str, *body: object, here: str) -> Html:
    """A whole page: navigation, title, the time range it covers, the body."""
    nav = el(
        "nav",
        el(
            "ul",
            *(
                el("li", el("a", text, href=href, aria_current="page" if href == here else None))
                for href, text in NAV
            ),
        ),
    )
    return Html(
        "<!doctype html>"
        + el(
            "html",
            el(
                "head",
                Html('<meta charset="utf-8">'),
                Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                Html('<meta name="color-scheme" content="light dark">'),
                el("title", f"{title} — Écho"),
                Html('<link rel="stylesheet" href="/static/style.css">'),
            ),
            el(
                "body",
                el("header", el("p", "Écho · operator's page", class_="brand"), nav),
                el("main", el("h1", title), el("p", covers, class_="range"), *body),
            ),
            lang="en",
        )
    )
