"""Pure rendering: engine data -> the text a person reads (in Discord and in the terminal).

Text is English; dates and ages, and the short phrases glued to them ("said …", "current
since …"), are in the `language` a function is given (English or French, "en" by default), as
the person reading asked for it (their Discord's language, [terminal] language).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo

from bot.plain import in_terminal, theirs
from memory import (
    DM_ORIGIN,
    MANUAL_EXCHANGE,
    AnswerSet,
    BackendError,
    BlockKind,
    Card,
    ContextPlan,
    Decision,
    EchoError,
    EngineStatus,
    HeldAnchor,
    HistoryMessage,
    IndexerStatus,
    Kind,
    Language,
    LoreEntry,
    Memory,
    Reason,
    Reply,
    Scope,
    Status,
    Turn,
    redact,
    said_on,
    short_date,
)
from memory.manage import Learned, ServerStats, Stats, followups
from memory.manage.forgetting import ErasureReport, Forgotten
from memory.manage.privacy import served_where
from memory.manage.story import Positions, Summary
from memory.manage.versions import Chain

DISCORD_LIMIT = 2000

_REASON_TITLES = {
    Reason.PINNED: "Pinned",
    Reason.GLOBAL: "Global",
    Reason.SEMANTIC: "Recalled by meaning or keywords",
    Reason.CONVERSATION: "Recalled by what you said just before (cos: to those messages)",
    Reason.TIME: "From the time you asked about",
    Reason.DATED: "Dated in the time to come you asked about",
    Reason.QUOTA: "Kind quota",
    Reason.FALLBACK: "Fallback (by rank)",
    Reason.RULE: "How you ask to be talked to",
}
_ZWSP = "\u200b"
# What the abbreviations of a memory line stand for, said under every list of them.
COUNTS_LEGEND = "c/s/sem = times a candidate / served / served by meaning"
SCORE_LEGEND = "cos = closeness in meaning to your message (cosine, up to 1)"
CONTEXT_LEGEND = "✓ in · ✂ cut to fit · ≈ condensed · ✗ left out · ~N = estimated tokens"
_MASS = re.compile(r"@(everyone|here)", re.IGNORECASE)
_ROLE = re.compile(r"<@&(\d+)>")


@dataclass(frozen=True, slots=True)
class _Glue:
    """One language's phrases around a date ("{}" is the date), for the lists people read."""

    said: str  # when a memory was said: "said 12 Nov, three weeks ago"
    current: str  # a memory that replaced an earlier version: since when it reads so
    now_since: str  # the current version of a memory, in its list of versions
    held: str  # the dates an earlier version held, from … until …
    on: str  # the day something was done: "dropped by … on 2026-12-03"
    at: str  # the same after a comma: "(added by …, 2026-12-03)"
    reanchored: str  # the day a position was last supported
    dated: str  # the days a memory means: "dated 8 Dec", "dated 12 Dec – 13 Dec"
    one_day: str  # a single day after `dated`
    asked: str  # the words a message named a time to come with


_GLUE: dict[str, _Glue] = {
    "en": _Glue(
        said="said {}",
        current="current since {}, replacing an earlier version",
        now_since="now, since {}",
        held="{} – {}",
        on="on {}",
        at="{}",
        reanchored="re-anchored {}",
        dated="dated {}",
        one_day="{}",
        asked="asked about “{}”",
    ),
    "fr": _Glue(
        said="dit {}",
        current="en vigueur depuis le {}, remplace une version antérieure",
        now_since="en vigueur depuis le {}",
        held="du {} au {}",
        on="le {}",
        at="le {}",
        reanchored="réancrée le {}",
        dated="datée {}",
        one_day="du {}",
        asked="demandé pour « {} »",
    ),
}


def count(n: int, one: str, many: str | None = None) -> str:
    """`1 person`, `2 people`, `0 memories`: a number with its noun in the right form."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def defang(text: str) -> str:
    """A person's text made safe to show: @everyone, @here and role mentions made inert in
    the text itself, and the text marked as theirs for the terminal (see `theirs`)."""
    text = _MASS.sub(lambda m: f"@{_ZWSP}{m.group(1)}", text)
    return theirs(_ROLE.sub(lambda m: f"@{_ZWSP}role", text))


# Said when a person /remembers a "rule": it is theirs, not the character's.
WISH_NOTE = (
    "Kept as your wish about how I talk to you, used in every conversation where the memory "
    "can be; the character's own rules come from its operator."
)


def remembered(memory_id: int | None, action: str, stored: str, *, kind: Kind, typed: str) -> str:
    """The answer to /remember: the memory's number, what was done, and its wording `stored`
    when it is not what the person typed (put in the third person, or merged into one they
    had)."""
    said = f"Memory #{memory_id}: {action}."
    if stored and stored != " ".join(typed.split()):
        said += f" It reads: {excerpt(stored, 200)}"
    return f"{said} {WISH_NOTE}" if kind is Kind.RULE else said


def cannot_answer(name: str, error: EchoError, *, base_url: str) -> str:
    """Said instead of a reply that failed; when the LLM server failed, where it is set."""
    said = f"[{name} cannot answer right now: {error}"
    if isinstance(error, BackendError):
        said += (
            f". Is the LLM server at {redact(base_url)} running? It is [llm] base_url in the "
            "config; `echo-bot doctor` checks it and the models"
        )
    return said + "]"


def cut_line(cut: int) -> str:
    """The line said under a reply cut to its length limit."""
    return f"(My answer ran {cut:,} characters longer: I cut it there.)"


def interrupted_line() -> str:
    """The line said under a reply whose stream broke before its end."""
    return "(My answer was interrupted here.)"


def reply_chunks(reply: Reply) -> list[str]:
    """The messages that carry a reply: the greeting first when there is one, the reply, and a
    short line when the reply was cut to its length limit or its stream broke midway."""
    text = reply.text
    if reply.cut:
        text += "\n" + cut_line(reply.cut)
    if reply.interrupted:
        text += "\n" + interrupted_line()
    chunks = split_message(defang(text))
    if reply.greeting:
        chunks = [*split_message(defang(reply.greeting)), *chunks]
    return chunks


def version_line(versions: AnswerSet) -> str:
    """Which answer to the message is shown, of how many."""
    return f"(answer {versions.shown + 1}/{versions.count})"


def split_message(text: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """Split a reply into chunks of at most `limit` characters (at least 1: ValueError
    otherwise), at paragraphs, then sentences, then words, and only as a last resort inside a
    word. What is kept: the text without its leading and trailing whitespace, in order, each
    cut dropping only the whitespace around it (a cut inside a word drops nothing)."""
    if limit < 1:
        raise ValueError(f"a message holds at least 1 character, not {limit}")
    text = text.strip()
    chunks: list[str] = []
    while len(text) > limit:
        window = text[: limit + 1]
        cut = -1
        for separator in ("\n\n", "\n", ". ", "! ", "? ", "… ", " "):
            position = window.rfind(separator, 0, limit)
            if position > 0:
                cut = position + len(separator.rstrip(" ")) if separator.strip() else position
                break
        if cut <= 0:
            cut = limit
        chunks.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        chunks.append(text)
    return chunks


@dataclass(frozen=True, slots=True)
class Told:
    """When and where the memories of a list were learned, dated from `now` in the character's
    `zone`; on Discord, with a link to the message each came from while it is stored."""

    now: float
    zone: tzinfo
    learned: Mapping[int, Learned]

    def of(self, memory: Memory, language: Language = "en") -> str:
        learned = self.learned.get(memory.id, Learned(memory.created_at))
        when = said_on(learned.at, self.now, self.zone, language)
        url = None if in_terminal() else jump_url(learned)
        said = " · " + _GLUE[language].said.format(when) if when else ""
        return said + (f" · [message]({url})" if url else "")


def jump_url(learned: Learned) -> str | None:
    """The Discord link to the stored message a memory was learned from, if it is one."""
    kind, _, message_id = learned.source_id.partition(":")
    if kind != "discord" or not message_id.isdigit() or not learned.story_id:
        return None
    place = "@me" if learned.origin == DM_ORIGIN else learned.origin
    return f"https://discord.com/channels/{place}/{learned.story_id}/{message_id}"


def memory_line(
    memory: Memory,
    *,
    score: float | None = None,
    matched: Sequence[str] = (),
    everywhere: bool | None = None,
    told: Told | None = None,
    replaced: Mapping[int, float] | None = None,
    language: Language = "en",
    note: str = "",
) -> str:
    """One memory on one line: id, kind, scope, pin, why recalled (with `note`, a reason's own
    words), counters, where it can be used (when the person's privacy choice is given), when it
    was said (`told`), text; and, from `replaced` (memory id -> when its last earlier version
    ended), that it replaces one."""
    flags = " 📌" if memory.pinned else ""
    if everywhere is not None:
        where = _where_in_terminal if in_terminal() else served_where
        flags += f" · {where(memory, everywhere=everywhere)}"
    cosine = f" · cos {score:.2f}" if score is not None else ""
    if matched:
        cosine += " · words: " + ", ".join(matched)
    if note:
        cosine += f" · {note}"
    counts = f"{memory.candidate_count}/{memory.served_count}/{memory.semantic_count}"
    said = told.of(memory, language) if told is not None else ""
    replaces = _replaces(memory.id, replaced, language)
    return (
        f"`#{memory.id}` {memory.kind.value}·{memory.scope.value}{flags}{cosine}"
        f" · c/s/sem {counts}{said} — {defang(memory.text)}{replaces}"
    )


def dated_note(matched: Sequence[str], *, asked_on: float, language: Language = "en") -> str:
    """What /why says of a memory dated in the time to come a message asked about, from what
    the turn recorded (its days, ISO, then the words that named that time): "dated 8 Dec,
    asked about “tomorrow”"; "" once the words are erased with their message."""
    if not matched:
        return ""
    glue, (days, *words) = _GLUE[language], matched
    today = datetime.datetime.fromtimestamp(asked_on).date() if asked_on > 0 else None
    first, _, last = days.partition("/")
    shown = [
        short_date(datetime.date.fromisoformat(d), today=today, language=language)
        for d in (first, last or first)
    ]
    span = glue.one_day.format(shown[0]) if shown[0] == shown[1] else glue.held.format(*shown)
    said = glue.dated.format(span)
    return f"{said}, {glue.asked.format(defang(' '.join(words)))}" if words else said


def _replaces(memory_id: int, replaced: Mapping[int, float] | None, language: Language) -> str:
    if not replaced or memory_id not in replaced:
        return ""
    current = _GLUE[language].current.format(day(replaced[memory_id], language))
    return f" ({current}: /memories history {memory_id})"


def day(at: float, language: Language = "en") -> str:
    """A date as a person reads it in a list: "3 Dec 2026", « 1er déc. 2026 »."""
    return short_date(datetime.datetime.fromtimestamp(at).date(), language=language)


def _source(exchange_id: str) -> str:
    if not exchange_id:
        return "source not recorded"
    if exchange_id.startswith(MANUAL_EXCHANGE):
        return "imported" if ":import:" in exchange_id else "written by you"
    return "learned from your message"


_ENDED = {
    "reflection": "replaced after a later message",
    "merge": "merged with a reworded copy",
    "edit": "edited by you",
    "restore": "undone by /restore",
}


def render_versions(chain: Chain, *, language: Language = "en") -> str:
    """A memory's versions, the current one first, each with its dates and where it came from."""
    m, glue = chain.memory, _GLUE[language]
    since = glue.now_since.format(day(chain.since, language))
    lines = [f"`#{m.id}` {since} ({_source(chain.source)}) — {defang(m.text)}"]
    for v in reversed(chain.earlier):
        held = glue.held.format(day(v.valid_from, language), day(v.valid_until, language))
        lines.append(
            f"  {held} ({_source(v.came_from)};"
            f" {_ENDED.get(v.ended_by, v.ended_by)}) — {defang(v.text)}"
        )
    if chain.dropped:
        lines.append(
            f"  … and {chain.dropped} older version{'s' if chain.dropped > 1 else ''} no longer"
            " kept (only the newest are)."
        )
    if not chain.earlier:
        lines.append("It never changed.")
    else:
        lines.append(f"/restore {m.id} brings back the version before; /forget {m.id} erases all.")
    return "\n".join(lines)


# After a memory /why shows that was learned from a picture the reflection saw.
PICTURE_MARK = " 📷 learned from a picture"


def render_why(
    turn: Turn | None,
    *,
    everywhere: bool | None = None,
    told: Told | None = None,
    replaced: Mapping[int, float] | None = None,
    language: Language = "en",
    pictured: Collection[int] = (),
) -> str:
    """The memories used for a turn, grouped by the reason they were selected; those learned
    from a picture (`pictured`, by id) marked."""
    if turn is None:
        return "No turn of yours here yet: talk to me first, then ask /why."
    lines = []
    if turn.degraded:
        lines.append(
            "⚠️ Degraded turn: no usable answer from the embedding server in time,"
            " so no recall by meaning (keywords only)."
        )
    if not turn.selected:
        lines.append("No memory was used for your last message here.")
    for reason in Reason:
        group = [s for s in turn.selected if s.reason is reason]
        if group:
            lines.append(f"**{_REASON_TITLES[reason]}** ({len(group)})")
            lines.extend(
                memory_line(
                    s.memory,
                    score=s.score,
                    matched=() if reason is Reason.DATED else s.matched,
                    everywhere=everywhere,
                    told=told,
                    replaced=replaced,
                    language=language,
                    note=dated_note(s.matched, asked_on=turn.created_at, language=language)
                    if reason is Reason.DATED
                    else "",
                )
                + (PICTURE_MARK if s.memory.id in pictured else "")
                for s in group
            )
    if turn.selected:  # the legend explains memory lines: none, nothing to explain
        scored = any(s.score is not None for s in turn.selected)
        lines.append(f"{COUNTS_LEGEND}; {SCORE_LEGEND}." if scored else f"{COUNTS_LEGEND}.")
    return "\n".join(lines)


def _where_in_terminal(memory: Memory, *, everywhere: bool) -> str:
    """Where a memory can be used, in the terminal's terms: its chat is the person's one
    conversation (a DM); a memory from a server came in an import."""
    if memory.scope is Scope.STORY and memory.story_id != memory.user_id:
        return "only in another conversation (not this chat)"
    if memory.origin == DM_ORIGIN or memory.scope is Scope.STORY:
        return "used in this chat"
    if everywhere:
        return "from a server, used here too (/privacy everywhere)"
    return f"only in server {memory.origin}, not in this chat"


def render_memories(
    page: Sequence[Memory],
    *,
    page_index: int,
    pages: int,
    total: int,
    everywhere: bool | None = None,
    told: Told | None = None,
    replaced: Mapping[int, float] | None = None,
    language: Language = "en",
) -> str:
    """One page of a person's memories, with where each can be used and when it was said."""
    if not total:
        return "No memories here."
    head = f"Your memories — page {page_index + 1}/{pages} ({total} in all)"
    lines = [
        head,
        *(
            memory_line(m, everywhere=everywhere, told=told, replaced=replaced, language=language)
            for m in page
        ),
    ]
    return "\n".join([*lines, f"{COUNTS_LEGEND}."])


def followup_figures(f: followups.Figures) -> str:
    """The follow-ups in one line: planned now, then sent, refused, dropped since the start."""
    sent = f"{f.sent + f.unconfirmed} sent" + (
        f" ({f.unconfirmed} unconfirmed: their process stopped while posting)"
        if f.unconfirmed
        else ""
    )
    dropped = sum(f.dropped.values())
    why = ", ".join(f"{reason} {n}" for reason, n in sorted(f.dropped.items(), key=_most_first))
    return (
        f"Follow-ups: {f.planned} planned · {sent} · {f.blocked} refused (DMs closed)"
        f" · {dropped} dropped" + (f" ({why})" if why else "")
    )


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def render_stats(
    stats: Stats, indexer: IndexerStatus | None, engine: EngineStatus | None = None
) -> str:
    """Server-wide memory figures for operators."""
    lines = [
        f"Memories: {stats.memories} (of {count(stats.users, 'person', 'people')})",
        # Two disjoint counts: a degraded turn is not among those recalled by meaning.
        f"Turns with recall by meaning: {stats.turns} · without it (all time, answered or "
        f"not): {stats.degraded_turns}",
        f"Reflections waiting: {stats.outbox_pending}",
        f"Erasures pending (bytes still in the database files): {stats.erasures_pending}",
    ]
    if stats.followed:
        f = stats.followed
        deleted = count(f.get("deletions_followed", 0), "deleted message")
        replies = count(f.get("deleted_replies_followed", 0), "deleted reply", "deleted replies")
        edits = count(f.get("edits_followed", 0), "edit")
        lines.append(f"Followed on Discord: {deleted} forgotten · {replies} dropped · {edits}")
    if stats.kept:
        k = stats.kept
        marked = count(k.get("kept_off_record", 0), "message")
        skipped = count(k.get("reflection_skipped_off_record", 0), "reflection")
        sent = count(k.get("receipts_sent", 0), "receipt")
        lines.append(
            f"Off the record: {marked} marked · {skipped} skipped · {sent} sent,"
            f" {k.get('receipts_undelivered', 0)} undelivered (DMs closed)"
        )
    if stats.followups:
        lines.append(followup_figures(stats.followups))
    if engine is not None:
        a = engine.admission
        lines.append(
            f"Since start-up: {count(a.refused, 'message')} turned away (queue full)"
            f" · {count(a.notices, 'slow-down notice')} · {count(a.waiting, 'turn')} waiting"
            f" · {count(a.following, 'edit')} of messages waiting to be followed"
        )
        if engine.chat_one_at_a_time:
            lines.append(
                "Chat server: one request at a time, replies first (it stopped a reply when"
                f" another request started) · {count(engine.chat_asked_again, 'call')} asked"
                " again alone"
            )
        lines.append(
            f"Exchanges waiting for the database: {engine.exchanges_waiting}"
            f" · dropped: {engine.exchanges_dropped}"
            f" · replies interrupted midway: {engine.replies_interrupted}"
        )
        stall = (
            "not measured"
            if engine.longest_stall is None
            else (f"{engine.longest_stall * 1000:.0f} ms")
        )
        lines.append(
            f"Longest event-loop stall in the last minute: {stall}"
            f" · turns served before their vectors were loaded: {engine.turns_before_vectors}"
        )
    if indexer is not None:
        last_error = indexer.last_error or "none"
        lines.append(
            f"Indexer: {indexer.pending} pending · {indexer.embedded_total} embedded"
            f" · last error: {last_error}"
        )
    if stats.rejections:
        lines.append(
            "Rejected by filter: "
            + ", ".join(f"{k} {v}" for k, v in sorted(stats.rejections.items()))
        )
    if stats.changes or stats.changes_refused:
        lines.append(
            "Memories changed: "
            + ", ".join(f"{k} {v}" for k, v in sorted(stats.changes.items()))
            + " · replacements refused: "
            + (", ".join(f"{k} {v}" for k, v in sorted(stats.changes_refused.items())) or "none")
        )
    if stats.reflection_drops:
        lines.append(
            "Reflections dropped: "
            + ", ".join(f"{k} {v}" for k, v in sorted(stats.reflection_drops.items()))
        )
    if stats.reflection_failures:
        lines.append(
            "Reflection failures: "
            + ", ".join(f"{k} {v}" for k, v in sorted(stats.reflection_failures.items()))
        )
    if stats.last_reflection_error:
        lines.append(f"Last reflection error: {defang(stats.last_reflection_error)}")
    return "\n".join(lines)


def render_summary(summary: Summary) -> str:
    """A story's rolling summary and the anchors held under it."""
    lines = ["**Summary**", defang(summary.text) if summary.text else "No summary yet."]
    if summary.anchors:
        lines.append(f"**Anchors** ({len(summary.anchors)})")
        lines.extend(f"`#{a.id}` {defang(a.text)}" for a in summary.anchors)
    return "\n".join(lines)


def paginate(items: Sequence[Memory], page_size: int = 10) -> list[Sequence[Memory]]:
    """Cut a list into pages (at least one, possibly empty)."""
    return [items[i : i + page_size] for i in range(0, len(items), page_size)] or [[]]


_MARKS = {Status.INCLUDED: "✓", Status.CUT: "✂", Status.CONDENSED: "≈", Status.EXCLUDED: "✗"}


def excerpt(text: str, limit: int = 50) -> str:
    """The start of a text on one line, cut with an ellipsis, mentions made inert."""
    line = " ".join(text.split())
    return defang(line if len(line) <= limit else line[: limit - 1] + "…")


def _block_line(d: Decision) -> str:
    b = d.block
    what = b.kind.value + (f" {b.label}" if b.label else "")
    if b.kind in (BlockKind.MEMORY, BlockKind.LORE, BlockKind.HISTORY):
        what += f" “{excerpt(b.text.removeprefix('- '))}”"
    elif b.kind is BlockKind.NOW:  # the day and hour the model is told, whole
        what += f" “{excerpt(b.text, limit=120)}”"
    why = f" — {d.reason}" if d.reason else ""
    return f"{_MARKS[d.status]} {defang(what)} ~{d.tokens:,}{why}"


def _history_runs(decisions: Sequence[Decision]) -> list[str]:
    """Consecutive history messages with the same fate, as one line each."""
    lines: list[str] = []
    run: list[Decision] = []

    def close() -> None:
        if not run:
            return
        first, last = run[0].block.order, run[-1].block.order
        ids = f"#{first}" if first == last else f"#{first}–#{last}"
        why = f" — {run[0].reason}" if run[0].reason else ""
        tokens = sum(d.tokens for d in run)
        lines.append(f"{_MARKS[run[0].status]} history {ids} ({len(run)}) ~{tokens:,}{why}")
        run.clear()

    for d in sorted(decisions, key=lambda d: d.block.order):
        if run and (run[-1].status, run[-1].reason) != (d.status, d.reason):
            close()
        run.append(d)
    close()
    return lines


def render_context(plan: ContextPlan, *, full: bool = False) -> str:
    """The live preview of the next prompt: budget, estimator, every block's fate and why.
    History messages with the same fate are one line each run, unless `full`."""
    e = plan.estimator
    calibration = (
        f"×{e.planning_factor:.2f}, calibrated on {e.samples} counts reported by {e.model}"
        if e.samples
        else f"×{e.planning_factor:.2f}, not calibrated yet: {e.model} has reported no counts"
    )
    if e.rejected:
        calibration += f", {e.rejected} reports ignored"
    b = plan.budget
    share = plan.tokens / b.prompt if b.prompt else 0.0
    lines = [
        f"**Context preview** — strategy `{plan.strategy}`",
        f"Tokens: {e.name} ({calibration})",
        f"Context {b.context_length:,} · reserved for the reply {b.response_tokens:,} · prompt "
        f"budget {b.prompt:,} · this prompt ~{plan.tokens:,} ({share:.0%})",
    ]
    counts = {s: len(plan.with_status(s)) for s in Status}
    lines.append(
        f"{count(counts[Status.INCLUDED] + counts[Status.CUT], 'block')} in · "
        f"{counts[Status.CONDENSED]} condensed · {counts[Status.EXCLUDED]} left out"
    )
    lines.append(CONTEXT_LEGEND)
    history = [d for d in plan.decisions if d.block.kind is BlockKind.HISTORY]
    others = [d for d in plan.decisions if d.block.kind is not BlockKind.HISTORY]
    lines += [_block_line(d) for d in others if d.block.kind is not BlockKind.INPUT]
    lines += [_block_line(d) for d in history] if full else _history_runs(history)
    lines += [_block_line(d) for d in others if d.block.kind is BlockKind.INPUT]
    lines += [f"⚠️ {defang(note)}" for note in plan.notes]
    return "\n".join(lines)


def render_lore(entries: Sequence[LoreEntry], *, guild_id: int | None) -> str:
    """Lore entries as a list: id, where they apply, keywords, the start of their content."""
    if not entries:
        return "No lore entries here. Add one with /lore add."
    lines = [f"**Lore** ({len(entries)})"]
    for entry in entries:
        where = "this server" if entry.guild_id is not None else "everywhere (owner)"
        scope = "any character" if entry.character is None else f"character {entry.character}"
        keys = defang("always" if entry.constant else ", ".join(entry.keywords))
        content = excerpt(entry.content, 80)
        lines.append(f"`#{entry.id}` {where} · {scope} · keys: {keys} — {content}")
    return "\n".join(lines)


def render_import(done: Mapping[str, int]) -> str:
    """What an import did, in words: new memories, those merged into ones already there, and
    those the person already had."""
    total = sum(done.values())
    if not total:
        return "The file holds no memories: nothing imported."
    if done.get("unchanged") == total:
        held = count(total, "memory", "memories")
        return f"Nothing to import: you already have the file's {held} as they are."
    parts = []
    if done.get("created"):
        parts.append(f"{count(done['created'], 'new memory', 'new memories')}")
    merged = done.get("merged", 0) + done.get("absorbed", 0)
    if merged:
        parts.append(f"{merged:,} merged into memories already there")
    if done.get("unchanged"):
        parts.append(f"{done['unchanged']:,} already there as they are (left alone)")
    return f"Imported {count(total, 'memory', 'memories')}: " + ", ".join(parts) + "."


def render_history(
    messages: Sequence[HistoryMessage], *, page: int = 1, older: bool = False
) -> str:
    """One page of a conversation's messages with their ids, marking those out of the context,
    and saying which page this is and whether older messages are on the next one."""
    if not messages:
        return "No messages yet." if page == 1 else f"No page {page}: fewer messages than that."
    where = "the last messages" if page == 1 else f"page {page}"
    lines = [f"History, {where} (#{messages[0].id} to #{messages[-1].id}):"]
    for m in messages:
        mark = " [excluded]" if m.excluded else ""
        lines.append(f"`#{m.id}`{mark} {defang(m.author_name)}: {excerpt(m.content, 80)}")
    if older:
        lines.append(f"Older messages are not shown: /history {page + 1}.")
    lines.append("/exclude ID keeps a message out of the context; /include ID lets it back in.")
    return "\n".join(lines)


def render_card(card: Card) -> str:
    """What Écho understood of a character card: fields, greetings, lore, what it ignored."""
    r = card.report
    lines = [f"Card: {defang(card.name)} ({r.spec}, {r.container})"]
    fields = ", ".join(f"{k} {v:,}" for k, v in r.fields.items())
    lines.append(f"Fields (characters; greetings: count): {fields or 'none'}")
    lines.append(
        f"Persona {len(card.persona):,} characters · system prompt {len(card.system):,} · "
        f"post-history {len(card.post_history):,} · examples {len(card.examples):,} · "
        f"{count(len(card.greetings), 'greeting')}"
    )
    budget = f", lorebook budget {card.lore_budget} tokens" if card.lore_budget else ""
    lines.append(f"Lore entries: {r.entries} ({r.constant} always active){budget}")
    lines += [f"  skipped {label}: {reason}" for label, reason in r.skipped]
    if r.unknown:
        shown = ", ".join(r.unknown[:8]) + (
            f", … {len(r.unknown) - 8} more" if len(r.unknown) > 8 else ""
        )
        lines.append(f"Unknown fields kept but ignored: {len(r.unknown)} ({shown})")
    lines += [f"Warning: {w}" for w in r.warnings]
    return "\n".join(lines)


def _day(at: float, language: Language) -> str:
    """The day (in UTC) something was done: "2026-12-03", « 3 déc. 2026 »."""
    when = datetime.datetime.fromtimestamp(at, datetime.UTC).date()
    return when.isoformat() if language == "en" else short_date(when, language=language)


def mention(user_id: int) -> str:
    """A person as Discord shows them (replies never ping)."""
    return f"<@{user_id}>"


Names = Callable[[int], str]


def render_anchors(
    anchors: Sequence[HeldAnchor], *, name: Names = mention, language: Language = "en"
) -> str:
    """The held anchors with their ids and where each came from, then the last dropped ones
    with who dropped them and why."""
    glue = _GLUE[language]

    def _who(user_id: int | None) -> str:
        return "a reflection" if user_id is None else name(user_id)

    held = [a for a in anchors if a.dropped_at is None]
    dropped = [a for a in anchors if a.dropped_at is not None]
    lines = [f"**Anchors** ({len(held)})" if held else "No anchors held here."]
    for a in held:
        source = f"added by {_who(a.added_by)}" if a.added_by is not None else "by a reflection"
        if a.added_by is None and a.speaker:
            source += f" on {defang(a.speaker)}'s message"
        added = glue.at.format(_day(a.created_at, language))
        lines.append(f"`#{a.id}` {defang(a.text)} ({source}, {added})")
    if dropped:
        lines.append(f"**Dropped** (last {len(dropped)})")
    for a in dropped:
        assert a.dropped_at is not None
        on = glue.on.format(_day(a.dropped_at, language))
        lines.append(
            f"`#{a.id}` {defang(a.text)} — dropped by {_who(a.dropped_by)} {on}: "
            f"{defang(a.drop_reason or '')}"
        )
    return "\n".join(lines)


def render_positions(found: Positions, *, name: Names = mention, language: Language = "en") -> str:
    """The character's positions with their ids, then the last ones a moderator dropped."""
    glue = _GLUE[language]
    lines = [] if found.held else ["No positions yet."]
    for p in found.held:
        since = glue.reanchored.format(_day(p.anchored_at, language))
        lines.append(f"`#{p.id}` **{defang(p.topic)}** — {defang(p.idea)} ({since})")
    if found.dropped:
        lines.append(f"**Dropped** (last {len(found.dropped)})")
    for d in found.dropped:
        on = glue.on.format(_day(d.dropped_at, language))
        lines.append(
            f"{defang(d.topic)} — dropped by {name(d.dropped_by)} {on}: {defang(d.reason)}"
        )
    return "\n".join(lines)


def render_server_stats(stats: ServerStats) -> str:
    """One server's figures."""
    return "\n".join(
        [
            f"Memories learned in this server: {stats.memories} "
            f"(of {count(stats.people, 'person', 'people')})",
            f"Turns here: {stats.turns} · without recall by meaning: {stats.degraded_turns}",
            f"Reflections waiting from here: {stats.reflections_waiting}",
            f"Erasures pending (bytes still in the database files): {stats.erasures_pending}",
        ]
    )


# What /forget-me asks before it erases (each front end adds what it cannot erase).
FORGET_ME_QUESTION = (
    "Erase everything I store about you, in every server and in DMs? Your memories, your "
    "messages and my replies to them, and what I made from them (anchors, positions, "
    "summaries, and what I noted for others from them). This cannot be undone."
)

# What an erasure says once done when a reader still holds the old pages, or a large SQLite
# file waits for its rewrite (erasure pending: memory.store.db.Rewrite).
ERASURE_PENDING = (
    "Its bytes leave the database files once another reader lets go of them or the file is "
    "next rewritten (erasure pending; /stats counts it)."
)


def render_forgotten(forgotten: Forgotten, *, terminal: bool = False) -> str:
    """What to tell the person after /forget: what went, what stays, and how to remove the rest."""
    lines = [f"Forgotten #{forgotten.memory.id}."]
    s = forgotten.still
    made = _made_from(s.anchors, s.positions, s.summaries, s.condensed)
    if s.messages:
        one = len(s.messages) == 1
        said = f"the {count(len(s.messages), 'message')} it was learned from"
        also = f", and {made} made from {'it' if one else 'them'}" if made else ""
        lines.append(
            f"Still stored: {said} {'is' if one else 'are'} in the conversation history{also}."
        )
        lines.append(_next_step(forgotten, terminal=terminal))
    elif made:
        lines.append(f"Still stored: {made} made from the messages it was learned from.")
        lines.append("/forget-me erases everything about you.")
    elif forgotten.learned:
        lines.append("The messages it was learned from are no longer stored.")
    else:
        lines.append("You wrote it yourself; nothing else was made from it.")
    if not forgotten.complete:
        lines.append(ERASURE_PENDING)
    return "\n".join(lines)


def _made_from(anchors: int, positions: int, summaries: int, condensed: int) -> str:
    parts = []
    if anchors:
        parts.append(count(anchors, "anchor"))
    if positions:
        parts.append(count(positions, "position"))
    if summaries:
        parts.append("the conversation summary" if summaries == 1 else f"{summaries} summaries")
    if condensed:
        parts.append(count(condensed, "sentence") + " of the condensed history")
    return ", ".join(parts)


def _next_step(forgotten: Forgotten, *, terminal: bool) -> str:
    if terminal:
        ids = " ".join(f"/forget-message {m.history_id}" for m in forgotten.still.messages)
        return (
            f"To remove them and what was made from them: {ids} (or /forget-me for all); "
            "/history lists the last messages, /history 2 and on the older ones."
        )
    return (
        "To remove them and what was made from them: Apps → “Forget this message” on each "
        "(or /forget-me for everything about you)."
    )


def erased_parts(report: ErasureReport) -> list[str]:
    """What an erasure removed, one part per kind of thing ("2 memories", "3 anchors")."""
    e, d = report.erased, report.erased.derived
    parts = []
    if e.messages:
        whose = "yours" if report.whose == "your" else "theirs"
        parts.append(f"{count(e.messages, 'message')} of the history ({whose} and my replies)")
    if e.memories:
        parts.append(count(e.memories, "memory", "memories"))
    parts += [p for p in _made_from(d.anchors, d.positions, 0, d.condensed).split(", ") if p]
    if d.state_changes:
        parts.append(count(d.state_changes, "change") + " of my mood or closeness")
    if e.outbox:
        parts.append(count(e.outbox, "reflection record"))
    if e.turns:
        parts.append(count(e.turns, "turn record") + " (what each used, for /why)")
    return parts


def render_erasure(report: ErasureReport, *, heading: str) -> str:
    """What to tell whoever asked for an erasure (/forget-me, forget a message): each kind of
    thing removed, what went back, whose else went with it, what stays and why."""
    parts = erased_parts(report)
    lines = [f"{heading} " + (", ".join(parts) if parts else "nothing was stored") + "."]
    summaries = report.erased.derived.summaries
    if summaries:
        lines.append(
            "The rolling summary of "
            + ("that conversation" if summaries == 1 else f"{summaries} conversations")
            + " went back to before it; the next reflection rewrites it."
        )
    if report.erased.others:
        said = "you" if report.whose == "your" else "they"
        lines.append(
            f"{count(report.erased.others, 'item')} of other people went with it: memories, "
            f"anchors or positions a reflection wrote while it was shown what {said} said "
            "(in the summary or the conversation's notes)."
        )
    for memory_id in report.erased.memories_kept:
        if report.whose == "your":
            lines.append(
                f"Memory #{memory_id} stays: another message said it too (only this one's "
                f"link to it went); /forget {memory_id} erases it."
            )
        else:
            lines.append(
                "One of their memories stays: another of their messages said it too (only "
                "this one's link to it went)."
            )
    if not report.complete:
        lines.append(ERASURE_PENDING)
    return "\n".join(lines)


FOLLOWUPS_ABOUT = (
    "When you tell me about something coming on a date (an interview, an exam, a "
    "trip), I ask how it went the day after, once, where you told me, never in the quiet hours, "
    "at most one a day."
)


def followups_set(on: bool, dropped: int) -> str:
    """What /followups on|off answers."""
    if on:
        return (
            f"Follow-ups: on. {FOLLOWUPS_ABOUT[len('Follow-ups: ') :]} `/followups off` stops them."
        )
    gone = f" ({count(dropped, 'planned one')} dropped)" if dropped else ""
    return f"Follow-ups: off{gone}. I will not come back to what you tell me on my own."


def render_followups(
    planned: Sequence[followups.Planned],
    *,
    chosen: bool | None,
    zone: tzinfo,
    where: Callable[[followups.Planned], str],
) -> str:
    """/followups: the person's choice, then each follow-up planned (its memory, when, where)
    and those sent."""
    state = {True: "on", False: "off", None: "the default of where you talk to me"}[chosen]
    lines = [f"Follow-ups: {state}. {FOLLOWUPS_ABOUT}"]
    waiting = [p for p in planned if p.status == "planned"]
    done = [p for p in planned if p.status != "planned"]
    if not waiting:
        lines.append("Nothing planned.")
    for p in waiting:
        due = datetime.datetime.fromtimestamp(p.due_at, zone)
        lines.append(
            f"• #{p.id} about memory #{p.memory_id} ({why_followup(p, zone)}): "
            f"{short_date(due.date())} {due:%H:%M}, in {where(p)}"
        )
    for p in done[:5]:
        lines.append(f"• #{p.id} about memory #{p.memory_id}: sent, in {where(p)}")
    if waiting:
        lines.append("`/followups drop ID` drops one; `/followups off` drops them all.")
    return "\n".join(lines)


def why_followup(p: followups.Planned, zone: tzinfo) -> str:
    """Why a follow-up: "said 7 Dec: about 8 Dec"."""
    said = datetime.datetime.fromtimestamp(p.said_at, zone).date()
    return f"said {short_date(said)}: about {short_date(p.event_day)}"


def render_followup_why(p: followups.Planned, zone: tzinfo) -> str:
    """/why on a follow-up: which memory, and why now."""
    return (
        f"My last message here was a follow-up of memory #{p.memory_id} "
        f"({why_followup(p, zone)}): you told me it was coming, and its day has passed."
    )
