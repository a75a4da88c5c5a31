"""What people can do with the context: exclude or restore a message, choose a story's strategy,
and manage lore entries. The bot and the terminal call these; no SQL above this line.
"""

from __future__ import annotations

import time
from dataclasses import replace

from memory.cards import Card
from memory.errors import Forbidden, InvalidInput, NotFound
from memory.model import LoreEntry, LoreScope
from memory.read.lore import MAX_CONTENT_CHARS, character_key, parse_keywords
from memory.store import history
from memory.store import lore as lore_store
from memory.store.db import Store
from memory.store.history import HistoryMessage
from memory.text import clean_message


async def set_excluded(
    store: Store,
    message: HistoryMessage | None,
    *,
    actor_id: int,
    excluded: bool,
    moderator: bool = False,
    answered_user_id: int | None = None,
) -> HistoryMessage:
    """Exclude a stored message from the context (or include it again); it stays in history.

    Allowed to its author, to the person a reply answered, and to moderators.
    """
    if message is None:
        raise NotFound("that message is not in my conversation history")
    owner = message.user_id if message.role == "user" else answered_user_id
    if not moderator and owner != actor_id:
        raise Forbidden(
            "you can exclude only your own messages and my replies to you "
            "(moderators: Manage Messages)"
        )
    await store.transact(lambda tx: history.set_excluded(tx, message.id, excluded))
    return replace(message, excluded=excluded)


async def reply_owner(store: Store, reply: HistoryMessage) -> int | None:
    """The person a stored reply (or greeting) was for: its source id is their message's plus
    ":reply" (or ":greeting")."""
    question, _, _ = reply.source_id.rpartition(":")
    found = await history.by_source(store, question)
    return found.user_id if found is not None else None


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
        id=0, content=text, keywords=words, scope=scope, guild_id=guild_id,
        character=character_key(character) if scope is LoreScope.CHARACTER else None,
    )  # fmt: skip
    new_id = await store.transact(
        lambda tx: lore_store.insert(tx, entry, created_by=created_by, now=time.time())
    )
    return replace(entry, id=new_id)


async def list_lore(store: Store, guild_id: int | None) -> list[LoreEntry]:
    """The entries that apply here: this server's and the owner's."""
    return await lore_store.applicable(store, guild_id)


async def remove_lore(store: Store, entry_id: int, *, guild_id: int | None) -> None:
    """Remove one of this server's entries (the owner's from the terminal or the CLI)."""
    removed = await store.transact(lambda tx: lore_store.remove(tx, entry_id, guild_id=guild_id))
    if not removed:
        raise NotFound(f"no lore entry #{entry_id} that you can remove here")


async def sync_card_lore(store: Store, card: Card) -> bool:
    """Make the card's lorebook the stored lore of its source, in one transaction; False when
    it already was (same card digest, same entries)."""
    stored = [e for e in await lore_store.applicable(store, None) if e.source == card.source]
    if len(stored) == len(card.lore) and all(e.extra.get("card") == card.digest for e in stored):
        return False
    await store.transact(
        lambda tx: lore_store.replace_source(tx, card.source, card.lore, now=time.time())
    )
    return True
