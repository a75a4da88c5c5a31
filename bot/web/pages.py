"""The overview and the memory health pages, built from memory.manage.dashboard."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bot.web import charts
from bot.web.html import Html, ago, counts, el, empty, esc, link, ms, page, pairs, table, when
from memory.manage import dashboard as board
from memory.model import Memory
from memory.vectors.indexer import IndexerStatus


class BadParameter(Exception):
    """A query parameter the page cannot use; the message is the one line shown."""


@dataclass(frozen=True, slots=True)
class View:
    """What every page reads: the database, the running indexer (None apart from the bot)."""

    store: board.Store
    indexer: Callable[[], IndexerStatus | None] = lambda: None
    clock: Callable[[], float] = field(default=time.time)
    # Where memories are served for people who made no /privacy choice ([privacy]).
    memories_served: str = "where_learned"


def number(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within [low, high]; BadParameter otherwise."""
    raw = params.get(name, "")
    if raw == "":
        return default
    # ASCII digits only ("²" is a digit to isdigit, not to int), no longer than `high`'s: int()
    # of thousands of digits raises ValueError.
    digits = raw.isascii() and raw.isdigit() and len(raw) <= len(str(high))
    if not digits or not low <= int(raw) <= high:
        raise BadParameter(f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def card(value: object, label: str) -> Html:
    return el("div", el("span", value, class_="value"), el("span", label, class_="label"),
              class_="card")  # fmt: skip


def person_link(user_id: int, names: Mapping[int, str]) -> Html:
    """A person as the operator knows them: the name they last wrote under, the id beside it
    ("no name" for one with no message kept, an imported person)."""
    name = names.get(user_id)
    shown = f"{name} · {user_id}" if name else f"no name · {user_id}"
    return link(f"/people/{user_id}", shown)


def date(at: float | None) -> Html:
    """A moment as `when` writes it, kept on one line in a table."""
    return el("span", when(at), class_="when")


def where_learned(m: Memory) -> str:
    if m.scope.value == "story":
        return f"story {m.story_id}"
    return "DMs" if m.origin == "dm" else f"server {m.origin}"


DEGRADED = {"": "normal", "embedding": "degraded: no embedding",
            "vectors": "degraded: vectors unusable"}  # fmt: skip
ACTIONS = ("created", "merged", "absorbed", "rejected")


async def overview(view: View, params: Mapping[str, str]) -> Html:
    days = number(params, "days", board.DEFAULT_DAYS, 1, board.MAX_DAYS)
    now = view.clock()
    o = await board.overview(view.store, days=days, indexer=view.indexer(), now=now)
    covers = (f"The last {days} days (UTC), {when(o.since)} to {when(o.until)}; counters marked "
              "“all time” since the database was created.")  # fmt: skip
    every_day = [when(o.since + i * board.DAY)[:10] for i in range(days)]
    by_day = {d.day: d for d in o.turn_days}
    answered = sum(d.turns for d in o.turn_days)
    degraded = sum(sum(d.degraded.values()) for d in o.turn_days)
    everything = o.latencies.get("")
    cards = el(
        "div",
        card(answered, "answered turns"),
        card(degraded, "answered without recall by meaning"),
        card(ms(everything.p50 if everything else None), "reply latency p50"),
        card(ms(everything.p95 if everything else None), "reply latency p95"),
        card(o.outbox.pending, "reflections waiting"),
        card(ago(o.outbox.oldest_pending_at, now), "oldest waiting since"),
        card(o.erasures_pending, "erasures pending"),
        class_="cards",
    )
    turns: list[Html] = [el("h2", "Turns per day")]
    if answered:
        points = [
            (
                day[5:],
                {DEGRADED.get(k, k): float(v) for k, v in _turn_counts(by_day.get(day)).items()},
            )
            for day in every_day
        ]
        turns.append(charts.figure(
            charts.bars("Answered turns per day, degraded ones by why", points,
                        list(DEGRADED.values())),
            "Answered turns per day; degraded: the turn ran without recall by meaning.",
        ))  # fmt: skip
        turns.append(table(
            ("day", "turns", "degraded (why)", "latency p50", "latency p95"),
            [
                (d.day, d.turns, counts(d.degraded),
                 ms(o.latencies[d.day].p50 if d.day in o.latencies else None),
                 ms(o.latencies[d.day].p95 if d.day in o.latencies else None))
                for d in reversed(o.turn_days)
            ],
        ))  # fmt: skip
        latency_points = [(day[5:], _latency_points(o.latencies.get(day))) for day in every_day]
        turns.append(charts.figure(
            charts.lines("Reply latency per day, p50 and p95", latency_points, ["p50", "p95"],
                         unit=" ms"),
            "From the message's arrival to the reply being stored (recall, prompt, chat call).",
        ))  # fmt: skip
    else:
        turns.append(
            empty(
                "No answered turn in this range: each reply the character sends adds one, with its "
                "latency (recorded from schema 16 on)."
            )
        )
    return page(
        "Overview", covers, cards, *turns, _reflections(o, every_day), _queue(o),
        _indexer(o, now), _calibrations(o), _erasures(o), here="/",
    )  # fmt: skip


def _turn_counts(day: board.TurnDay | None) -> dict[str, int]:
    if day is None:
        return {}
    return {"": day.turns - sum(day.degraded.values()), **day.degraded}


def _latency_points(day: board.Latency | None) -> dict[str, float]:
    return {} if day is None else {"p50": day.p50, "p95": day.p95}


def _reflections(o: board.Overview, every_day: list[str]) -> Html:
    head = el("h2", "Reflections per day")
    if not o.reflection_days:
        return Html(head + empty(
            "No reflection applied in this range: after each reply, a reflection reads the "
            "exchange and creates, merges or rejects memories."
        ))  # fmt: skip
    by_day = {d.day: d for d in o.reflection_days}
    points = [
        (day[5:], {a: float(by_day[day].actions.get(a, 0)) for a in ACTIONS} if day in by_day
         else {})
        for day in every_day
    ]  # fmt: skip
    return Html(
        head
        + charts.figure(
            charts.bars("What reflections did with their candidate memories, per day", points,
                        list(ACTIONS)),
            "Candidates per day: created, merged into a memory, absorbed by one, rejected.",
        )
        + table(
            ("day", *ACTIONS, "of the merged, replacements", "rejected, by reason"),
            [
                (d.day, *(d.actions.get(a, 0) for a in ACTIONS), d.actions.get("replaced", 0),
                 counts(d.rejected))
                for d in reversed(o.reflection_days)
            ],
        )
    )  # fmt: skip


def _queue(o: board.Overview) -> Html:
    rows = [
        ("waiting", o.outbox.pending),
        ("oldest waiting since", when(o.outbox.oldest_pending_at)),
        ("given up (all time)", o.outbox.dropped),
        ("given up, by why (all time)", counts(o.reflection_drops)),
        ("failed attempts, by error (all time)", counts(o.reflection_failures)),
    ]
    return Html(el("h2", "Reflection queue (outbox)") + pairs(rows))


def _indexer(o: board.Overview, now: float) -> Html:
    head = el("h2", "Indexer")
    if o.indexer is None:
        return Html(head + pairs([
            ("memories without a vector", o.vectors_missing),
            ("indexer", "not running here (echo-bot web): stale vectors are counted by the "
                        "running bot's page"),
        ]))  # fmt: skip
    s = o.indexer
    return Html(head + pairs([
        ("vectors pending", s.pending),
        ("memories without a vector", o.vectors_missing),
        ("last pass", f"{when(s.last_run)} ({ago(s.last_run, now)})"),
        ("last error", s.last_error or "none"),
        ("vectors written since start", s.embedded_total),
    ]))  # fmt: skip


def _calibrations(o: board.Overview) -> Html:
    parts = [el("h2", "Embedding model, per language")]
    if o.language_fits:
        parts.append(table(
            ("model", "language", "fit", "margin", "threshold", "measured"),
            [(f.model, f.language, "fit" if f.fit else "unfit: keywords only", f"{f.margin:.3f}",
              f"{f.threshold:.3f}", when(f.measured_at)) for f in o.language_fits],
        ))  # fmt: skip
    else:
        parts.append(empty("No calibration yet: `echo-bot calibrate` measures how the embedding "
                           "model separates French and English."))  # fmt: skip
    parts.append(el("h2", "Token estimator, per chat model"))
    if o.token_fits:
        parts.append(table(
            ("model", "factor", "counts used", "counts rejected", "updated"),
            [(t.model, f"{t.factor:.3f}", t.samples, t.rejected, when(t.updated_at))
             for t in o.token_fits],
        ))  # fmt: skip
    else:
        parts.append(empty("Not calibrated yet: each reply's token count reported by the chat "
                           "server calibrates the estimator of that model."))  # fmt: skip
    return Html("".join(parts))


def _by_count(found: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))


def _erasures(o: board.Overview) -> Html:
    head = el("h2", "Erasures pending")
    if not o.erasures_pending:
        return Html(head + empty("None: every erasure asked for has left the database files."))
    return Html(
        head
        + el(
            "p",
            f"{o.erasures_pending} erasures wait for the database files to be "
            "cleaned (a reader held an old snapshot); the hourly job retries.",
        )
    )


async def health(view: View, params: Mapping[str, str]) -> Html:
    origin = params.get("origin") or None
    if origin is not None and origin != "dm" and not (origin.isascii() and origin.isdigit()):
        raise BadParameter("origin is a server id or dm")
    h = await board.health(view.store, origin=origin)
    place = "everyone" if origin is None else ("DMs" if origin == "dm" else f"server {origin}")
    covers = (f"All time, for {place}: each memory's counters since it was created (candidate: "
              "a turn where it could be served; served: selected). Reasons: the turns still "
              "kept for /why (the last 20 per person and place).")  # fmt: skip
    options = [el("option", "everyone", value="", selected=origin is None)] + [
        el("option", f"{'DMs' if o == 'dm' else 'server ' + o} ({n})", value=o,
           selected=o == origin)
        for o, n in h.origins
    ]  # fmt: skip
    chooser = el("form", el("label", "Where learned", el("select", *options, name="origin")),
                 el("button", "Show", type="submit"), method="get", action="/health",
                 class_="filters")  # fmt: skip
    s = h.split
    cards = el(
        "div",
        card(s.total, "memories"),
        card(s.never_candidate, "never a candidate yet"),
        card(s.never_served, "never served"),
        card(s.only_without_recall, "served, never recalled by meaning or keywords"),
        card(s.recalled, "recalled by meaning or keywords"),
        class_="cards",
    )
    body: list[Html] = [chooser, cards, el("h2", "Served / candidate ratio")]
    if sum(h.ratio_bins):
        width = 100 // len(h.ratio_bins)
        points = [(f"{i * width}–{(i + 1) * width}%", {"memories": float(n)})
                  for i, n in enumerate(h.ratio_bins)]  # fmt: skip
        body.append(charts.figure(
            charts.bars("Memories by served/candidate ratio", points, ["memories"]),
            "How often a memory is served when it could be; a pile at 0% is memory that exists "
            "but does not come back.",
        ))  # fmt: skip
    else:
        body.append(empty("No memory was a candidate yet: each turn makes the memories it could "
                          "serve candidates, and counts those it serves."))  # fmt: skip
    body.append(el("h2", "Why memories were served (kept turns)"))
    body.append(
        table(("reason", "selections"), _by_count(h.reasons))
        if h.reasons
        else empty("No turn kept: /why's turns list why each memory came.")
    )
    body.append(el("h2", f"Never served, oldest first ({s.never_served})"))
    if h.never_served:
        names = await board.names(view.store, [m.user_id for m in h.never_served])
        body.append(table(
            ("memory", "person", "kind", "where learned", "created", "candidate", "text"),
            [(f"#{m.id}", person_link(m.user_id, names), m.kind.value,
              where_learned(m), date(m.created_at), m.candidate_count,
              el("span", m.text, class_="memory-text"))
             for m in h.never_served],
            class_="never-served",
        ))  # fmt: skip
    else:
        body.append(empty("Every memory here was served at least once (or there is none yet)."))
    return page("Memory health", covers, *body, here="/health")


__all__ = ["BadParameter", "View", "date", "esc", "health", "overview", "person_link"]
