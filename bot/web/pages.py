"""The operator's pages, built from memory.manage.dashboard: the overview and the memory health,
then people, one person's memories and each one's history, the last turns, stories (one thing at
a time)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from bot.web import charts
from bot.web.html import (
    Html,
    ago,
    counts,
    el,
    empty,
    esc,
    join,
    link,
    ms,
    page,
    pairs,
    table,
    when,
)
from memory import IndexerStatus, Memory, Reason, Selected, Store
from memory.manage import casting
from memory.manage import dashboard as board


class BadParameter(Exception):
    """A query parameter the page cannot use; the message is the one line shown."""


@dataclass(frozen=True, slots=True)
class View:
    """What every page reads: the database, the running indexer (None apart from the bot)."""

    store: Store
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
    return el(
        "div", el("span", value, class_="value"), el("span", label, class_="label"), class_="card"
    )


def person_link(user_id: int, known: Mapping[int, board.Known]) -> Html:
    """A person as the operator knows them: the name they last wrote under, their own id
    beside it whichever character's id this is ("no name" for one with no message kept, an
    imported person); the link goes to this id's memories."""
    who = known.get(user_id, board.Known(None, user_id))
    return link(f"/people/{user_id}", f"{who.name or 'no name'} · {who.person}")


def date(at: float | None) -> Html:
    """A moment as `when` writes it, kept on one line in a table."""
    return el("span", when(at), class_="when")


def where_learned(m: Memory, terminal: Collection[int] = ()) -> str:
    """Where a memory was learned; `terminal` holds the ids of the people who talk in the
    terminal chat (board.in_terminal), whose DMs are the terminal."""
    if m.origin == "dm" and m.user_id in terminal:
        return f"the terminal's story {m.story_id}" if m.scope.value == "story" else "the terminal"
    if m.scope.value == "story":
        return f"story {m.story_id}"
    return "DMs" if m.origin == "dm" else f"server {m.origin}"


DEGRADED = {
    "": "normal",
    "embedding": "degraded: no embedding",
    "vectors": "degraded: vectors unusable",
}
ACTIONS = ("created", "merged", "absorbed", "rejected")


async def overview(view: View, params: Mapping[str, str]) -> Html:
    days = number(params, "days", board.DEFAULT_DAYS, 1, board.MAX_DAYS)
    now = view.clock()
    o = await board.overview(view.store, days=days, indexer=view.indexer(), now=now)
    covers = (
        f"The last {days} days (UTC), {when(o.since)} to {when(o.until)}; counters marked "
        "“all time” since the database was created."
    )
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
        turns.append(
            charts.figure(
                charts.bars(
                    "Answered turns per day, degraded ones by why", points, list(DEGRADED.values())
                ),
                "Answered turns per day; degraded: the turn ran without recall by meaning.",
            )
        )
        turns.append(
            table(
                ("day", "turns", "degraded (why)", "latency p50", "latency p95"),
                [
                    (
                        d.day,
                        d.turns,
                        counts(d.degraded),
                        ms(o.latencies[d.day].p50 if d.day in o.latencies else None),
                        ms(o.latencies[d.day].p95 if d.day in o.latencies else None),
                    )
                    for d in reversed(o.turn_days)
                ],
            )
        )
        latency_points = [(day[5:], _latency_points(o.latencies.get(day))) for day in every_day]
        turns.append(
            charts.figure(
                charts.lines(
                    "Reply latency per day, p50 and p95", latency_points, ["p50", "p95"], unit=" ms"
                ),
                "From the message's arrival to the reply being stored (recall, prompt, chat call).",
            )
        )
    else:
        turns.append(
            empty(
                "No answered turn in this range: each reply the character sends adds one, with its "
                "latency (recorded from schema 16 on)."
            )
        )
    return page(
        "Overview",
        covers,
        cards,
        *turns,
        _reflections(o, every_day),
        _queue(o),
        _indexer(o, now),
        _calibrations(o),
        _erasures(o),
        here="/",
    )


def _turn_counts(day: board.TurnDay | None) -> dict[str, int]:
    if day is None:
        return {}
    return {"": day.turns - sum(day.degraded.values()), **day.degraded}


def _latency_points(day: board.Latency | None) -> dict[str, float]:
    return {} if day is None else {"p50": day.p50, "p95": day.p95}


def _reflections(o: board.Overview, every_day: list[str]) -> Html:
    head = el("h2", "Reflections per day")
    if not o.reflection_days:
        return Html(
            head
            + empty(
                "No reflection applied in this range: after each reply, a reflection reads the "
                "exchange and creates, merges or rejects memories."
            )
        )
    by_day = {d.day: d for d in o.reflection_days}
    points = [
        (
            day[5:],
            {a: float(by_day[day].actions.get(a, 0)) for a in ACTIONS} if day in by_day else {},
        )
        for day in every_day
    ]
    return Html(
        head
        + charts.figure(
            charts.bars(
                "What reflections did with their candidate memories, per day", points, list(ACTIONS)
            ),
            "Candidates per day: created, merged into a memory, absorbed by one, rejected.",
        )
        + table(
            ("day", *ACTIONS, "of the merged, replacements", "rejected, by reason"),
            [
                (
                    d.day,
                    *(d.actions.get(a, 0) for a in ACTIONS),
                    d.actions.get("replaced", 0),
                    counts(d.rejected),
                )
                for d in reversed(o.reflection_days)
            ],
        )
    )


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
        return Html(
            head
            + pairs(
                [
                    ("memories without a vector", o.vectors_missing),
                    (
                        "indexer",
                        "not running here (echo-bot web): stale vectors are counted by the "
                        "running bot's page",
                    ),
                ]
            )
        )
    s = o.indexer
    return Html(
        head
        + pairs(
            [
                ("vectors pending", s.pending),
                ("memories without a vector", o.vectors_missing),
                ("last pass", f"{when(s.last_run)} ({ago(s.last_run, now)})"),
                ("last error", s.last_error or "none"),
                ("vectors written since start", s.embedded_total),
            ]
        )
    )


def _calibrations(o: board.Overview) -> Html:
    parts = [el("h2", "Embedding model, per language")]
    if o.language_fits:
        parts.append(
            table(
                ("model", "language", "fit", "margin", "threshold", "measured"),
                [
                    (
                        f.model,
                        f.language,
                        "fit" if f.fit else "unfit: keywords only",
                        f"{f.margin:.3f}",
                        f"{f.threshold:.3f}",
                        when(f.measured_at),
                    )
                    for f in o.language_fits
                ],
            )
        )
    else:
        parts.append(
            empty(
                "No calibration yet: `echo-bot calibrate` measures how the embedding "
                "model separates French and English."
            )
        )
    parts.append(el("h2", "Token estimator, per chat model"))
    if o.token_fits:
        parts.append(
            table(
                ("model", "factor", "counts used", "counts rejected", "updated"),
                [
                    (t.model, f"{t.factor:.3f}", t.samples, t.rejected, when(t.updated_at))
                    for t in o.token_fits
                ],
            )
        )
    else:
        parts.append(
            empty(
                "Not calibrated yet: each reply's token count reported by the chat "
                "server calibrates the estimator of that model."
            )
        )
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
    covers = (
        f"All time, for {place}: each memory's counters since it was created (candidate: "
        "a turn where it could be served; served: selected). Reasons: the turns still "
        "kept for /why (the last 20 per person and place)."
    )
    options = [el("option", "everyone", value="", selected=origin is None)] + [
        el(
            "option",
            f"{'DMs' if o == 'dm' else 'server ' + o} ({n})",
            value=o,
            selected=o == origin,
        )
        for o, n in h.origins
    ]
    chooser = el(
        "form",
        el("label", "Where learned", el("select", *options, name="origin")),
        el("button", "Show", type="submit"),
        method="get",
        action="/health",
        class_="filters",
    )
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
        points = [
            (f"{i * width}–{(i + 1) * width}%", {"memories": float(n)})
            for i, n in enumerate(h.ratio_bins)
        ]
        body.append(
            charts.figure(
                charts.bars("Memories by served/candidate ratio", points, ["memories"]),
                "How often a memory is served when it could be; a pile at 0% is memory that exists "
                "but does not come back.",
            )
        )
    else:
        body.append(
            empty(
                "No memory was a candidate yet: each turn makes the memories it could "
                "serve candidates, and counts those it serves."
            )
        )
    body.append(el("h2", "Why memories were served (kept turns)"))
    body.append(
        table(("reason", "selections"), _by_count(h.reasons))
        if h.reasons
        else empty("No turn kept: /why's turns list why each memory came.")
    )
    body.append(el("h2", f"Never served, oldest first ({s.never_served})"))
    if h.never_served:
        names = await board.known(view.store, [m.user_id for m in h.never_served])
        terminal = await board.in_terminal(view.store, [m.user_id for m in h.never_served])
        body.append(
            table(
                ("memory", "person", "kind", "where learned", "created", "candidate", "text"),
                [
                    (
                        f"#{m.id}",
                        person_link(m.user_id, names),
                        m.kind.value,
                        where_learned(m, terminal),
                        date(m.created_at),
                        m.candidate_count,
                        el("span", m.text, class_="memory-text"),
                    )
                    for m in h.never_served
                ],
                class_="never-served",
            )
        )
    else:
        body.append(empty("Every memory here was served at least once (or there is none yet)."))
    return page("Memory health", covers, *body, here="/health")


# People named on a story's row; the rest are counted.
STORY_PEOPLE = 5
# What /why calls each reason (the person sees these words).
REASON_TITLES = {
    Reason.PINNED: "pinned",
    Reason.GLOBAL: "global",
    Reason.SEMANTIC: "recalled by meaning or keywords",
    Reason.CONVERSATION: "recalled by what they said just before",
    Reason.TIME: "from the time they asked about",
    Reason.QUOTA: "kind quota",
    Reason.FALLBACK: "fallback (by rank)",
    Reason.RULE: "how they ask to be talked to",
}
ORDERS = {
    "id": "id",
    "created": "created",
    "updated": "updated",
    "kind": "kind",
    "served": "served",
    "candidates": "candidate",
    "ratio": "served ratio",
}


def _pager(href: str, page_no: int, shown: int, total: int, **query: object) -> Html:
    parts = []
    if page_no > 0:
        parts.append(link(href, "← newer", page=page_no - 1 or None, **query))
    if (page_no + 1) * board.PAGE_ROWS < total:
        parts.append(link(href, "older →", page=page_no + 1, **query))
    first = page_no * board.PAGE_ROWS
    span = f"{first + 1}–{first + shown} of {total}" if shown else f"0 of {total}"
    return el("p", span, " ", *parts, class_="pager")


async def people(view: View, params: Mapping[str, str]) -> Html:
    page_no = number(params, "page", 0, 0, 1_000_000)
    found, total = await board.people(view.store, page=page_no)
    covers = (
        "All time: everyone with a memory or a recorded turn, one row each by their own id; "
        "each character keeps their memories apart (its key opens them); last turn among the "
        "turns kept for /why (the last 20 per person and place)."
    )
    if not total:
        return page(
            "People",
            covers,
            empty("No one yet: a person appears here after their first message to the character."),
            here="/people",
        )
    rows = [
        (
            link(f"/people/{_ids(p)[0][0]}", p.user_id),
            join((link(f"/people/{i}", key or "—") for i, key in _ids(p)), ", "),
            p.name or "—",
            p.memories,
            when(p.last_turn_at),
        )
        for p in found
    ]
    return page(
        "People",
        covers,
        table(
            ("person id", "characters", "display name last seen", "memories", "last turn"),
            rows,
            class_="people",
        ),
        _pager("/people", page_no, len(found), total),
        here="/people",
    )


def _ids(p: board.PersonRow) -> list[tuple[int, str | None]]:
    """A person's ids, their own (the home character's) first."""
    return sorted(p.ids or [(p.user_id, None)], key=lambda i: (i[0] != p.user_id, i[1] or ""))


def _filter(params: Mapping[str, str]) -> tuple[board.MemoryFilter, int]:
    kind, scope = params.get("kind") or None, params.get("scope") or None
    if kind is not None and kind not in ("fact", "preference", "promise", "episode", "rule"):
        raise BadParameter("kind is fact, preference, promise, episode or rule")
    if scope is not None and scope not in ("global", "story"):
        raise BadParameter("scope is global or story")
    order = params.get("sort") or "id"
    if order not in ORDERS:
        raise BadParameter(f"sort is one of {', '.join(ORDERS)}")
    direction = params.get("order") or "desc"
    if direction not in ("asc", "desc"):
        raise BadParameter("order is asc or desc")
    page_no = number(params, "page", 0, 0, 1_000_000)
    text = (params.get("q") or "")[:200]
    chosen = board.MemoryFilter(
        kind=kind,
        scope=scope,
        never_served=params.get("never") == "1",
        text=text,
        order=order,
        descending=direction == "desc",
        limit=board.PAGE_ROWS,
        offset=page_no * board.PAGE_ROWS,
    )
    return chosen, page_no


def _usable(m: Memory, served: str, terminal: Collection[int]) -> str:
    if m.scope.value == "story":
        return f"{where_learned(m, terminal)} only"
    if m.origin == "dm" and m.user_id in terminal and served != "everywhere":
        return "the terminal only"
    if m.origin == "dm":
        return "DMs only"
    return "every server and DMs" if served == "everywhere" else f"server {m.origin} only"


async def _person_title(view: View, user_id: int, name: str | None) -> str:
    """ "Person ID (name)" by the person's own id, and the character whose id this is."""
    person, key = await casting.owner(view.store, user_id)
    said = f" ({name})" if name else ""
    return f"Person {person}{said}" + (f", as {key} knows them" if key else "")


def _ratio(m: Memory) -> str:
    if m.candidate_count <= 0:
        return "—"
    return f"{min(1.0, m.served_count / m.candidate_count):.0%}"


async def person(view: View, params: Mapping[str, str], user_id: int) -> Html:
    chosen, page_no = _filter(params)
    p = await board.person(view.store, user_id, chosen)
    served = p.served or view.memories_served
    title = await _person_title(view, user_id, p.name)
    covers = (
        f"All time: their memories and each one's counters since it was created. Where "
        f"usable follows their /privacy choice: {served}"
        f"{'' if p.served else ' (the default)'}."
    )
    query = {
        "kind": chosen.kind,
        "scope": chosen.scope,
        "never": "1" if chosen.never_served else None,
        "q": chosen.text or None,
    }
    direction = "desc" if chosen.descending else "asc"

    def header(name: str, text: str) -> Html:
        flip = "asc" if chosen.order == name and chosen.descending else "desc"
        mark = (" ↓" if chosen.descending else " ↑") if chosen.order == name else ""
        return link(f"/people/{user_id}", f"{text}{mark}", sort=name, order=flip, **query)

    form = el(
        "form",
        el(
            "label",
            "Kind",
            _select("kind", chosen.kind, ["fact", "preference", "promise", "episode", "rule"]),
        ),
        el("label", "Scope", _select("scope", chosen.scope, ["global", "story"])),
        el("label", "Text contains", el("input", type="search", name="q", value=chosen.text)),
        el(
            "label",
            "Never served",
            el("input", type="checkbox", name="never", value="1", checked=chosen.never_served),
        ),
        el("label", "Sort by", _select("sort", chosen.order, list(ORDERS), blank=False)),
        el("label", "Order", _select("order", direction, ["desc", "asc"], blank=False)),
        el("button", "Show", type="submit"),
        method="get",
        action=f"/people/{user_id}",
        class_="filters",
    )
    if not p.memories:
        body = empty(
            "No memory matches: memories come from this person's conversations (a "
            "reflection after each reply) or from /remember."
            if p.matching == 0 and not any(query.values())
            else "No memory matches these filters."
        )
        return page(title, covers, form, body, here="/people")
    terminal = await board.in_terminal(view.store, [m.user_id for m in p.memories])
    rows = [
        (
            link(f"/people/{user_id}/memories/{m.id}", f"#{m.id}"),
            m.kind.value,
            m.scope.value,
            _usable(m, served, terminal),
            "pinned" if m.pinned else "",
            m.candidate_count,
            m.served_count,
            m.semantic_count,
            _ratio(m),
            date(m.created_at),
            el("span", m.text, class_="memory-text"),
        )
        for m in p.memories
    ]
    head = (
        header("id", "memory"),
        header("kind", "kind"),
        "scope",
        "where usable",
        "pin",
        header("candidates", "candidate"),
        header("served", "served"),
        "by meaning/keywords",
        header("ratio", "served ratio"),
        header("created", "created"),
        "text",
    )
    return page(
        title,
        covers,
        form,
        table(head, rows, class_="memories"),
        _pager(
            f"/people/{user_id}",
            page_no,
            len(p.memories),
            p.matching,
            sort=chosen.order,
            order=direction,
            **query,
        ),
        here="/people",
    )


async def memory(view: View, params: Mapping[str, str], user_id: int, memory_id: int) -> Html:
    chain = await board.memory(view.store, user_id, memory_id)
    person, _ = await casting.owner(view.store, user_id)
    title = f"Memory #{memory_id} of person {person}"
    covers = (
        "Its wording now and since when, then each earlier one with the dates it held and "
        "what ended it: a replacement, an edit, a restore."
    )
    back = el("p", link(f"/people/{user_id}", f"All memories of person {person}"))
    if chain is None:
        return page(
            title,
            covers,
            back,
            empty("This person has no such memory: it was forgotten, or is someone else's."),
            here="/people",
        )
    m = chain.memory
    terminal = await board.in_terminal(view.store, [m.user_id])
    now = table(
        ("kind", "where learned", "pin", "created", "this wording since", "text"),
        [
            (
                m.kind.value,
                where_learned(m, terminal),
                "pinned" if m.pinned else "",
                date(m.created_at),
                date(chain.since),
                el("span", m.text, class_="memory-text"),
            )
        ],
    )
    earlier = table(
        ("valid from", "valid until", "ended by", "worded by", "text"),
        [
            (
                date(v.valid_from),
                date(v.valid_until),
                v.ended_by,
                "the person" if v.by_person else "a reflection" if v.came_from else "not known",
                el("span", v.text, class_="memory-text"),
            )
            for v in chain.earlier
        ],
    )
    return page(
        title,
        covers,
        back,
        now,
        el("h2", f"Earlier versions ({len(chain.earlier)})"),
        earlier
        if chain.earlier
        else empty(
            "None: this is its first wording (a replacement, an edit or a restore keeps the "
            "one before here)."
        ),
        here="/people",
    )


def _select(name: str, chosen: str | None, values: Sequence[str], *, blank: bool = True) -> Html:
    options = [el("option", "any", value="", selected=chosen is None)] if blank else []
    options += [el("option", v, value=v, selected=v == chosen) for v in values]
    return el("select", *options, name=name)


async def turns(view: View, params: Mapping[str, str]) -> Html:
    user_id = number(params, "user", 0, 1, 2**63 - 1) or None  # a person id (SQLite's range)
    found = await board.recent_turns(view.store, user_id=user_id)
    who = "everyone" if user_id is None else f"person {user_id}"
    covers = (
        f"The last {board.TURNS_SHOWN} turns recorded, for {who} (kept: the last 20 per "
        "person and place); memories as they are now, like /why."
    )
    if not found:
        return page(
            "Turns",
            covers,
            empty(
                "No turn recorded yet: each message the character answers records the memories it "
                "selected, why, and (from schema 16 on) its context plan."
            ),
            here="/turns",
        )
    names = await board.known(view.store, [t.turn.user_id for t in found])
    terminal = await board.in_terminal(view.store, [t.turn.user_id for t in found])
    shown = (_turn(t, i == 0, names, terminal) for i, t in enumerate(found))
    return page("Turns", covers, *shown, here="/turns")


def _turn(
    recent: board.RecentTurn,
    first: bool,
    names: Mapping[int, board.Known],
    terminal: Collection[int],
) -> Html:
    t, plan = recent.turn, recent.plan
    place = "DMs" if recent.origin == "dm" else f"server {recent.origin}"
    if recent.origin == "dm" and t.user_id in terminal:
        place = "the terminal"
    state = el("span", "degraded", class_="tag bad") if t.degraded else ""
    latency = f" · {plan.latency_ms:,.0f} ms" if plan else ""
    summary = el(
        "summary",
        f"Turn #{t.id} · {when(t.created_at)} · ",
        person_link(t.user_id, names),
        f" · story {t.story_id} · {place} · {_answered(recent.answered)}"
        f" · {len(t.selected)} memories"
        f"{latency} ",
        state,
    )
    parts: list[Html] = [summary]
    if t.selected:
        parts.append(
            table(
                ("#", "memory", "reason", "score", "matched words", "kind", "text"),
                [_selected(i, s) for i, s in enumerate(t.selected)],
                class_="selected",
            )
        )
    else:
        parts.append(empty("No memory selected: the person had none usable here."))
    parts.append(_plan(plan))
    return el("details", *parts, class_="turn", open=first)


def _answered(answered: board.Answered | None) -> str:
    if answered is None:
        return "its message is no longer stored"
    return f"answering message #{answered.message_id} of {when(answered.at)}"


def _selected(i: int, s: Selected) -> tuple[object, ...]:
    score = "—" if s.score is None else f"{s.score:.3f}"
    reason = el("span", REASON_TITLES[s.reason], title=s.reason.value, class_="reason")
    return (
        i + 1,
        f"#{s.memory.id}",
        reason,
        score,
        " ".join(s.matched) or "—",
        s.memory.kind.value,
        el("span", s.memory.text, class_="memory-text"),
    )


def _plan(plan: board.TurnPlan | None) -> Html:
    if plan is None:
        return empty(
            "No context plan recorded for this turn (turns before schema 16, or the "
            "turn failed before its reply)."
        )
    grouped: dict[tuple[str, str, str], list[int]] = {}
    rows: list[tuple[object, ...]] = []
    for b in plan.blocks:
        if b.kind == "history":  # one row per fate: a long history is hundreds of blocks
            grouped.setdefault((b.kind, b.status, b.reason), []).append(b.tokens)
        else:
            rows.append((b.kind, b.key, b.status, b.reason or "—", b.tokens))
    for (kind, status, reason), tokens in grouped.items():
        rows.append((kind, f"{len(tokens)} messages", status, reason or "—", sum(tokens)))
    return Html(
        el(
            "p",
            f"Context plan: strategy {plan.strategy}, {plan.tokens:,} tokens estimated of "
            f"{plan.budget:,} for the prompt.",
        )
        + table(("block", "which", "status", "reason", "tokens"), rows, class_="plan")
    )


async def stories(view: View, params: Mapping[str, str]) -> Html:
    found = await board.stories(view.store)
    covers = (
        f"All time: the {board.STORIES_SHOWN} stories with the latest messages (a story "
        "is a channel, a thread or a DM)."
    )
    if not found:
        return page(
            "Stories",
            covers,
            empty("No story yet: a story begins with the first message in a channel or a DM."),
            here="/stories",
        )
    talking = await board.speakers(view.store, [s.story_id for s in found])
    names = await board.known(view.store, [u for ids in talking.values() for u in ids])

    def who(story_id: int) -> Html | str:
        ids = talking.get(story_id, [])
        if not ids:
            return "—"
        shown = [person_link(u, names) for u in ids[:STORY_PEOPLE]]
        more = f" and {len(ids) - STORY_PEOPLE} more" if len(ids) > STORY_PEOPLE else ""
        return Html(esc(", ").join(shown) + esc(more))

    rows = [
        (
            link(f"/stories/{s.story_id}", s.story_id),
            who(s.story_id),
            s.messages,
            when(s.last_message_at),
        )
        for s in found
    ]
    return page(
        "Stories",
        covers,
        table(("story", "who talks there", "messages kept", "last message"), rows),
        here="/stories",
    )


async def story(view: View, params: Mapping[str, str], story_id: int) -> Html:
    s = await board.story(view.store, story_id)
    covers = (
        f"Now, with the last {board.HISTORY_SHOWN} changes of each part (summaries, "
        "dropped anchors and positions, state moves)."
    )
    held = [a for a in s.anchors if a.dropped_at is None]
    dropped = [a for a in s.anchors if a.dropped_at is not None]

    people = [a.added_by for a in s.anchors] + [a.dropped_by for a in s.anchors]
    people += [d.dropped_by for d in s.positions.dropped] + [c.user_id for c in s.state_changes]
    names = await board.known(view.store, [p for p in people if p is not None])

    def who(user_id: int | None) -> Html | str:
        return "a reflection" if user_id is None else person_link(user_id, names)

    body: list[Html] = [
        el("h2", "Summary"),
        el("p", s.summary, class_="memory-text")
        if s.summary
        else empty("No summary yet: each reflection rewrites it from the one before."),
        el("p", f"Context strategy: {s.strategy or 'the configured default'}."),
        el("h2", "Condensed history"),
        el("ul", *(el("li", x, class_="memory-text") for x in s.condensed))
        if s.condensed
        else empty(
            "Nothing condensed: the summarize strategy condenses the history that leaves "
            "the prompt."
        ),
        el("h2", f"Anchors ({len(held)} held)"),
        table(
            ("anchor", "text", "added", "by"),
            [
                (
                    f"#{a.id}",
                    el("span", a.text, class_="memory-text"),
                    when(a.created_at),
                    who(a.added_by),
                )
                for a in held
            ],
        )
        if held
        else empty("No anchor held: reflections and moderators (/anchors) add them."),
    ]
    if dropped:
        body.append(
            table(
                ("dropped anchor", "text", "dropped", "by", "why"),
                [
                    (
                        f"#{a.id}",
                        el("span", a.text, class_="memory-text"),
                        when(a.dropped_at),
                        who(a.dropped_by),
                        a.drop_reason or "",
                    )
                    for a in dropped
                ],
            )
        )
    positions = s.positions
    body.append(el("h2", f"Positions ({len(positions.held)})"))
    body.append(
        table(
            ("topic", "idea", "justification", "anchored"),
            [
                (
                    p.topic,
                    el("span", p.idea, class_="memory-text"),
                    p.justification,
                    when(p.anchored_at),
                )
                for p in positions.held
            ],
        )
        if positions.held
        else empty("No position: the character forms them in reflections.")
    )
    if positions.dropped:
        body.append(
            table(
                ("dropped topic", "why", "by", "when"),
                [
                    (d.topic, d.reason, who(d.dropped_by), when(d.dropped_at))
                    for d in positions.dropped
                ],
            )
        )
    body.append(el("h2", "State"))
    body.append(
        table(("field", "value"), [(k, f"{v:g}") for k, v in s.state.items()])
        if s.state
        else empty("No state: reflections move bounded fields (mood, closeness...).")
    )
    if s.state_changes:
        body.append(
            table(
                ("field", "moved by", "when", "from"),
                [(c.field, f"{c.delta:+g}", when(c.at), who(c.user_id)) for c in s.state_changes],
            )
        )
    body.append(el("h2", "Summaries written, latest first"))
    body.append(
        table(
            ("written", "summary"),
            [(when(r.at), el("span", r.summary, class_="memory-text")) for r in s.revisions],
        )
        if s.revisions
        else empty("None yet: each reflection keeps the summary it replaced.")
    )
    place, character = await casting.story_owner(view.store, story_id)
    title = f"Story {story_id}" + (f" ({character}'s, in {place})" if character else "")
    return page(title, covers, *body, here="/stories")
