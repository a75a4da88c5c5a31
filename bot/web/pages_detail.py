"""People, one person's memories, the last turns, stories: one thing at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.web.html import Html, el, empty, esc, link, page, table, when
from bot.web.pages import BadParameter, View, date, number, person_link
from memory.manage import dashboard as board
from memory.model import Memory, Reason, Selected

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
ORDERS = {"id": "id", "created": "created", "updated": "updated", "kind": "kind",
          "served": "served", "candidates": "candidate", "ratio": "served ratio"}  # fmt: skip


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
    covers = ("All time: everyone with a memory or a recorded turn; last turn among the turns "
              "kept for /why (the last 20 per person and place).")  # fmt: skip
    if not total:
        return page("People", covers, empty(
            "No one yet: a person appears here after their first message to the character."
        ), here="/people")  # fmt: skip
    rows = [
        (link(f"/people/{p.user_id}", p.user_id), p.name or "—", p.memories, when(p.last_turn_at))
        for p in found
    ]
    return page(
        "People", covers,
        table(("person id", "display name last seen", "memories", "last turn"), rows,
              class_="people"),
        _pager("/people", page_no, len(found), total), here="/people",
    )  # fmt: skip


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
        kind=kind, scope=scope, never_served=params.get("never") == "1", text=text, order=order,
        descending=direction == "desc", limit=board.PAGE_ROWS, offset=page_no * board.PAGE_ROWS,
    )  # fmt: skip
    return chosen, page_no


def _usable(m: Memory, served: str) -> str:
    if m.scope.value == "story":
        return f"story {m.story_id} only"
    if m.origin == "dm":
        return "DMs only"
    return "every server and DMs" if served == "everywhere" else f"server {m.origin} only"


def _ratio(m: Memory) -> str:
    if m.candidate_count <= 0:
        return "—"
    return f"{min(1.0, m.served_count / m.candidate_count):.0%}"


async def person(view: View, params: Mapping[str, str], user_id: int) -> Html:
    chosen, page_no = _filter(params)
    p = await board.person(view.store, user_id, chosen)
    served = p.served or view.memories_served
    title = f"Person {user_id}" + (f" ({p.name})" if p.name else "")
    covers = (f"All time: their memories and each one's counters since it was created. Where "
              f"usable follows their /privacy choice: {served}"
              f"{'' if p.served else ' (the default)'}.")  # fmt: skip
    query = {"kind": chosen.kind, "scope": chosen.scope, "never": "1" if chosen.never_served
             else None, "q": chosen.text or None}  # fmt: skip
    direction = "desc" if chosen.descending else "asc"

    def header(name: str, text: str) -> Html:
        flip = "asc" if chosen.order == name and chosen.descending else "desc"
        mark = (" ↓" if chosen.descending else " ↑") if chosen.order == name else ""
        return link(f"/people/{user_id}", f"{text}{mark}", sort=name, order=flip, **query)

    form = el(
        "form",
        el("label", "Kind", _select("kind", chosen.kind, ["fact", "preference", "promise",
                                                          "episode", "rule"])),
        el("label", "Scope", _select("scope", chosen.scope, ["global", "story"])),
        el("label", "Text contains", el("input", type="search", name="q", value=chosen.text)),
        el("label", "Never served", el("input", type="checkbox", name="never", value="1",
                                       checked=chosen.never_served)),
        el("label", "Sort by", _select("sort", chosen.order, list(ORDERS), blank=False)),
        el("label", "Order", _select("order", direction, ["desc", "asc"], blank=False)),
        el("button", "Show", type="submit"),
        method="get", action=f"/people/{user_id}", class_="filters",
    )  # fmt: skip
    if not p.memories:
        body = empty("No memory matches: memories come from this person's conversations (a "
                     "reflection after each reply) or from /remember." if p.matching == 0 and
                     not any(query.values()) else "No memory matches these filters.")  # fmt: skip
        return page(title, covers, form, body, here="/people")
    rows = [
        (f"#{m.id}", m.kind.value, m.scope.value, _usable(m, served), "pinned" if m.pinned else "",
         m.candidate_count, m.served_count, m.semantic_count, _ratio(m), date(m.created_at),
         el("span", m.text, class_="memory-text"))
        for m in p.memories
    ]  # fmt: skip
    head = (
        header("id", "memory"), header("kind", "kind"), "scope", "where usable", "pin",
        header("candidates", "candidate"), header("served", "served"), "by meaning/keywords",
        header("ratio", "served ratio"), header("created", "created"), "text",
    )  # fmt: skip
    return page(
        title, covers, form, table(head, rows, class_="memories"),
        _pager(f"/people/{user_id}", page_no, len(p.memories), p.matching, sort=chosen.order,
               order=direction, **query),
        here="/people",
    )  # fmt: skip


def _select(name: str, chosen: str | None, values: Sequence[str], *, blank: bool = True) -> Html:
    options = [el("option", "any", value="", selected=chosen is None)] if blank else []
    options += [el("option", v, value=v, selected=v == chosen) for v in values]
    return el("select", *options, name=name)


async def turns(view: View, params: Mapping[str, str]) -> Html:
    user_id = number(params, "user", 0, 1, 2**63 - 1) or None  # a person id (SQLite's range)
    found = await board.recent_turns(view.store, user_id=user_id)
    who = "everyone" if user_id is None else f"person {user_id}"
    covers = (f"The last {board.TURNS_SHOWN} turns recorded, for {who} (kept: the last 20 per "
              "person and place); memories as they are now, like /why.")  # fmt: skip
    if not found:
        return page("Turns", covers, empty(
            "No turn recorded yet: each message the character answers records the memories it "
            "selected, why, and (from schema 16 on) its context plan."
        ), here="/turns")  # fmt: skip
    names = await board.names(view.store, [t.turn.user_id for t in found])
    shown = (_turn(t, i == 0, names) for i, t in enumerate(found))
    return page("Turns", covers, *shown, here="/turns")


def _turn(recent: board.RecentTurn, first: bool, names: Mapping[int, str]) -> Html:
    t, plan = recent.turn, recent.plan
    place = "DMs" if recent.origin == "dm" else f"server {recent.origin}"
    state = el("span", "degraded", class_="tag bad") if t.degraded else ""
    latency = f" · {plan.latency_ms:,.0f} ms" if plan else ""
    summary = el(
        "summary", f"Turn #{t.id} · {when(t.created_at)} · ", person_link(t.user_id, names),
        f" · story {t.story_id} · {place} · {_answered(recent.answered)}"
        f" · {len(t.selected)} memories"
        f"{latency} ", state,
    )  # fmt: skip
    parts: list[Html] = [summary]
    if t.selected:
        parts.append(table(
            ("#", "memory", "reason", "score", "matched words", "kind", "text"),
            [_selected(i, s) for i, s in enumerate(t.selected)], class_="selected",
        ))  # fmt: skip
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
    return (i + 1, f"#{s.memory.id}", reason, score, " ".join(s.matched) or "—",
            s.memory.kind.value, el("span", s.memory.text, class_="memory-text"))  # fmt: skip


def _plan(plan: board.TurnPlan | None) -> Html:
    if plan is None:
        return empty("No context plan recorded for this turn (turns before schema 16, or the "
                     "turn failed before its reply).")  # fmt: skip
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
        el("p", f"Context plan: strategy {plan.strategy}, {plan.tokens:,} tokens estimated of "
                f"{plan.budget:,} for the prompt.")
        + table(("block", "which", "status", "reason", "tokens"), rows, class_="plan")
    )  # fmt: skip


async def stories(view: View, params: Mapping[str, str]) -> Html:
    found = await board.stories(view.store)
    covers = (f"All time: the {board.STORIES_SHOWN} stories with the latest messages (a story "
              "is a channel, a thread or a DM).")  # fmt: skip
    if not found:
        return page("Stories", covers, empty(
            "No story yet: a story begins with the first message in a channel or a DM."
        ), here="/stories")  # fmt: skip
    talking = await board.speakers(view.store, [s.story_id for s in found])
    names = await board.names(view.store, [u for ids in talking.values() for u in ids])

    def who(story_id: int) -> Html | str:
        ids = talking.get(story_id, [])
        if not ids:
            return "—"
        shown = [person_link(u, names) for u in ids[:STORY_PEOPLE]]
        more = f" and {len(ids) - STORY_PEOPLE} more" if len(ids) > STORY_PEOPLE else ""
        return Html(esc(", ").join(shown) + esc(more))

    rows = [(link(f"/stories/{s.story_id}", s.story_id), who(s.story_id), s.messages,
             when(s.last_message_at)) for s in found]  # fmt: skip
    return page("Stories", covers,
                table(("story", "who talks there", "messages kept", "last message"), rows),
                here="/stories")  # fmt: skip


async def story(view: View, params: Mapping[str, str], story_id: int) -> Html:
    s = await board.story(view.store, story_id)
    covers = (f"Now, with the last {board.HISTORY_SHOWN} changes of each part (summaries, "
              "dropped anchors and positions, state moves).")  # fmt: skip
    held = [a for a in s.anchors if a.dropped_at is None]
    dropped = [a for a in s.anchors if a.dropped_at is not None]

    people = [a.added_by for a in s.anchors] + [a.dropped_by for a in s.anchors]
    people += [d.dropped_by for d in s.positions.dropped] + [c.user_id for c in s.state_changes]
    names = await board.names(view.store, [p for p in people if p is not None])

    def who(user_id: int | None) -> Html | str:
        return "a reflection" if user_id is None else person_link(user_id, names)

    body: list[Html] = [
        el("h2", "Summary"),
        el("p", s.summary, class_="memory-text") if s.summary else empty(
            "No summary yet: each reflection rewrites it from the one before."),
        el("p", f"Context strategy: {s.strategy or 'the configured default'}."),
        el("h2", "Condensed history"),
        el("ul", *(el("li", x, class_="memory-text") for x in s.condensed)) if s.condensed
        else empty("Nothing condensed: the summarize strategy condenses the history that leaves "
                   "the prompt."),
        el("h2", f"Anchors ({len(held)} held)"),
        table(("anchor", "text", "added", "by"),
              [(f"#{a.id}", el("span", a.text, class_="memory-text"), when(a.created_at),
                who(a.added_by)) for a in held]) if held
        else empty("No anchor held: reflections and moderators (/anchors) add them."),
    ]  # fmt: skip
    if dropped:
        body.append(table(("dropped anchor", "text", "dropped", "by", "why"),
                          [(f"#{a.id}", el("span", a.text, class_="memory-text"),
                            when(a.dropped_at), who(a.dropped_by), a.drop_reason or "")
                           for a in dropped]))  # fmt: skip
    positions = s.positions
    body.append(el("h2", f"Positions ({len(positions.held)})"))
    body.append(table(("topic", "idea", "justification", "anchored"),
                      [(p.topic, el("span", p.idea, class_="memory-text"), p.justification,
                        when(p.anchored_at)) for p in positions.held])
                if positions.held else empty("No position: the character forms them in "
                                             "reflections."))  # fmt: skip
    if positions.dropped:
        body.append(table(("dropped topic", "why", "by", "when"),
                          [(d.topic, d.reason, who(d.dropped_by), when(d.dropped_at))
                           for d in positions.dropped]))  # fmt: skip
    body.append(el("h2", "State"))
    body.append(table(("field", "value"), [(k, f"{v:g}") for k, v in s.state.items()])
                if s.state else empty("No state: reflections move bounded fields (mood, "
                                      "closeness...)."))  # fmt: skip
    if s.state_changes:
        body.append(table(("field", "moved by", "when", "from"),
                          [(c.field, f"{c.delta:+g}", when(c.at), who(c.user_id))
                           for c in s.state_changes]))  # fmt: skip
    body.append(el("h2", "Summaries written, latest first"))
    body.append(table(("written", "summary"),
                      [(when(r.at), el("span", r.summary, class_="memory-text"))
                       for r in s.revisions])
                if s.revisions else empty("None yet: each reflection keeps the summary it "
                                          "replaced."))  # fmt: skip
    return page(f"Story {story_id}", covers, *body, here="/stories")
