"""What people can do with the context: exclude or restore a message, see and choose a story's
strategy, and manage lore entries. The bot and the terminal call these; no SQL above this line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from memory.character.cards import Card, Lorebook
from memory.context.lore import MAX_CONTENT_CHARS, character_key, parse_keywords
from memory.errors import Forbidden, InvalidInput, NotFound
from memory.model import LoreEntry, LoreScope
from memory.store import Store
from memory.store.tables import characters as cast_store
from memory.store.tables import followups, history, lore_entries
from memory.store.tables.history import HistoryMessage
from memory.text import clean_message
from memory.turn.engine import Engine


async def set_excluded(
    store: Store,
    message: HistoryMessage | None,
    *,
    actor_id: int,
    excluded: bool,
    moderator: bool = False,
) -> HistoryMessage:
    """Exclude a stored message from the context (or include it again); it stays in history.

    Allowed to its author, to the person a reply answered, and to moderators.
    """
    if message is None:
        raise NotFound("that message is not in my conversation history")
    owner = message.user_id if message.role == "user" else await reply_owner(store, message)
    if owner is not None:  # the id a character knows them by: theirs all the same
        owner = (await cast_store.owner(store, cast_store.PERSON, owner))[0]
    if not moderator and owner != actor_id:
        raise Forbidden(
            "you can exclude only your own messages and my replies to you "
            "(moderators: Manage Messages)"
        )
    await store.transact(lambda tx: history.set_excluded(tx, message.id, excluded))
    return replace(message, excluded=excluded)


async def reply_owner(store: Store, reply: HistoryMessage) -> int | None:
    """The person a stored reply (or greeting, or follow-up) was for: its source id is their
    message's plus ":reply" (or ":greeting"), or a follow-up's (`followups.exchange_id`)."""
    question, _, _ = reply.source_id.rpartition(":")
    found = await history.by_source(store, question)
    if found is not None:
        return found.user_id
    return await followups.person_of(store, question)


async def message_in_story(store: Store, story_id: int, message_id: int) -> HistoryMessage | None:
    """The stored message with this history id, if it belongs to the story."""
    return await history.in_story(store, story_id, message_id)


async def recent_history(store: Store, story_id: int, *, limit: int) -> list[HistoryMessage]:
    """The story's last messages, oldest first, the excluded ones too (marked)."""
    return await history.recent(store, story_id, limit=limit, include_excluded=True)


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a story's history, oldest first, and whether older messages exist."""

    messages: list[HistoryMessage]
    older: bool


async def history_page(store: Store, story_id: int, page: int, *, size: int) -> HistoryPage:
    """Page `page` (1: the last `size` messages, 2: the `size` before...), excluded ones too."""
    if page < 1:
        raise InvalidInput(f"page {page}? pages start at 1")
    limit = min(page * size + 1, 2**62)  # a page past the end reads them all, once
    newest = await history.recent(store, story_id, limit=limit, include_excluded=True)
    older = len(newest) > page * size
    tail = newest[-page * size :]
    return HistoryPage(tail[: max(0, len(tail) - (page - 1) * size)], older)


async def stored_message(store: Store, source_id: str) -> HistoryMessage | None:
    """The stored message a front end sent under this source id ("discord:<id>")."""
    return await history.by_source(store, source_id)


async def stored_answer(store: Store, question: str, chunk: str) -> HistoryMessage | None:
    """The character's stored message that answers the message with this source id and holds
    this chunk of text: the greeting when it holds the chunk, else the reply (a long one is
    sent in several chunks)."""
    greeting = await history.by_source(store, f"{question}:greeting")
    if greeting is not None and chunk and chunk in greeting.content:
        return greeting
    return await history.by_source(store, f"{question}:reply")


@dataclass(frozen=True, slots=True)
class Strategies:
    """A story's context strategy and those it could use instead."""

    current: str
    available: tuple[str, ...]

    def line(self) -> str:
        return f"Strategy here: `{self.current}` (available: {', '.join(self.available)})."


def strategy_names(engine: Engine) -> list[str]:
    """The strategies a story may use: built in and plugged in."""
    return engine.strategy_names()


async def strategies(engine: Engine, story_id: int) -> Strategies:
    """The story's strategy, and the names it could choose from."""
    current = await engine.context.strategy_for(story_id)
    return Strategies(current.name, tuple(strategy_names(engine)))


async def choose_strategy(engine: Engine, story_id: int, name: str) -> str:
    """Set the story's strategy; InvalidInput names the available ones. Return the name set."""
    return await engine.context.set_strategy(story_id, name)


async def add_lore(
    store: Store,
    *,
    keywords: str,
    content: str,
    guild_id: int | None,
    scope: LoreScope = LoreScope.GLOBAL,
    character: str = "",
    created_by: int | None = None,
) -> LoreEntry:
    """Store a lore entry; InvalidInput says what is wrong with the input."""
    words = parse_keywords(keywords)
    text = clean_message(content)
    if not text:
        raise InvalidInput("the content is empty")
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"the content is longer than {MAX_CONTENT_CHARS} characters")
    entry = LoreEntry(
        id=0,
        content=text,
        keywords=words,
        scope=scope,
        guild_id=guild_id,
        character=character_key(character) if scope is LoreScope.CHARACTER else None,
    )
    new_id = await store.transact(
        lambda tx: lore_entries.insert(tx, entry, created_by=created_by, now=time.time())
    )
    return replace(entry, id=new_id)


async def list_lore(store: Store, guild_id: int | None) -> list[LoreEntry]:
    """The entries that apply here: this server's and the owner's."""
    return await lore_entries.applicable(store, guild_id)


async def remove_lore(store: Store, entry_id: int, *, guild_id: int | None) -> None:
    """Remove one of this server's entries (the owner's from the terminal or the CLI)."""
    removed = await store.transact(lambda tx: lore_entries.remove(tx, entry_id, guild_id=guild_id))
    if not removed:
        raise NotFound(f"no lore entry #{entry_id} that you can remove here")


def same_character(name: str, given: str) -> bool:
    """Whether `given` names the character called `name` as lore entries are bound to it (case
    and accents aside)."""
    key = character_key(given)
    return bool(key) and character_key(name) == key


async def sync_card_lore(store: Store, card: Card | Lorebook) -> bool:
    """Make the card's (or lorebook file's) entries the stored lore of its source, in one
    transaction; False when they already were (same digest, same entries)."""
    stored = [e for e in await lore_entries.applicable(store, None) if e.source == card.source]
    if len(stored) == len(card.lore) and all(e.extra.get("card") == card.digest for e in stored):
        return False
    await store.transact(
        lambda tx: lore_entries.replace_source(tx, card.source, card.lore, now=time.time())
    )
    return True
