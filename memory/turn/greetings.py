"""The character's greeting: chosen and stored before a person's first message in a story, then
kept until a reply to that person goes out carrying it (a first turn that failed leaves it due)."""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable

from memory.context.prompt import Character, fill_user
from memory.errors import StoreError
from memory.store import Store, Tx
from memory.store.queries import erasure
from memory.store.tables import history
from memory.turn.values import Incoming

log = logging.getLogger(__name__)

# Greetings stored before a turn that failed, kept until a reply to that person goes out. One
# per person who met the character during an outage; past it the oldest is no longer sent.
MAX_GREETINGS_DUE = 4_096


def greeting_source(message: Incoming) -> str:
    """The source id of the greeting sent as an answer to this message (front ends look it up
    by this id)."""
    return f"{message.source_id}:greeting"


class Greetings:
    """The greetings stored and not yet sent, per (story, person)."""

    def __init__(self, store: Store, character: Character, clock: Callable[[], float]) -> None:
        self.store = store
        self.character = character
        self.clock = clock
        # (story, user) -> the greeting stored with their first message here and its source id,
        # until a reply carries it. Only that person's turns touch their key, one at a time.
        self._due: OrderedDict[tuple[int, int], tuple[str, str]] = OrderedDict()

    async def store_message(
        self, tx: Tx, message: Incoming, text: str
    ) -> tuple[int | None, str | None]:
        """Store the message, after the character's greeting when it meets this person here for
        the first time (the greeting is then the history the reply continues). Return the
        message's row (None: already stored, or erased meanwhile) and the greeting stored
        with it."""
        greeting = None
        greetings = self.character.greetings
        if greetings and not await history.has_spoken(tx, message.story_id, message.user_id):
            if await erasure.was_erased(tx, message.source_id):
                return None, None  # forgotten (deleted) before its turn stored it: nothing kept
            seed = hashlib.sha256(f"{message.user_id}:{message.story_id}".encode()).digest()
            chosen = greetings[int.from_bytes(seed[:4], "big") % len(greetings)]
            greeting = fill_user(chosen, message.user_name)
            await history.add_reply(
                tx,
                source_id=greeting_source(message),
                story_id=message.story_id,
                author_name=self.character.name,
                content=greeting,
                now=self.clock(),
            )
        row = await history.add_user_message(
            tx,
            source_id=message.source_id,
            story_id=message.story_id,
            user_id=message.user_id,
            author_name=message.user_name,
            content=text,
            now=self.clock(),
        )
        return row, greeting

    def due(self, message: Incoming, greeting: str) -> None:
        """Keep a stored greeting until a reply to this person here goes out with it."""
        key = (message.story_id, message.user_id)
        self._due[key] = (greeting, greeting_source(message))
        if len(self._due) > MAX_GREETINGS_DUE:
            story_id, user_id = self._due.popitem(last=False)[0]
            log.warning(
                "greeting to user %d in story %d dropped: %d others wait for a reply",
                user_id,
                story_id,
                MAX_GREETINGS_DUE,
            )

    async def deliver(self, message: Incoming) -> str | None:
        """The greeting this reply carries, if one waits for this person here. One stored with
        an earlier message (whose turn failed) takes this message's greeting source id: it is
        sent as an answer to this one, and a front end finds it from there."""
        due = self._due.pop((message.story_id, message.user_id), None)
        if due is None:
            return None
        greeting, stored_as = due
        sent_with = greeting_source(message)
        if stored_as != sent_with:
            try:
                await self.store.transact(lambda tx: history.move_source(tx, stored_as, sent_with))
            except StoreError as exc:
                log.warning("greeting %s not moved to %s (%s)", stored_as, sent_with, exc)
        return greeting
