"""The answers to a stored message: another one written (the history as it was before the
message, the same recall), the one shown chosen among them, and the list. They may change until
the message's reflection: the settle time after each of them, or the person's next message."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from memory.character.cast import Characters
from memory.context.builder import ContextBuilder
from memory.errors import InvalidInput, NotFound, Regenerating, Settled
from memory.pictures import Shelf
from memory.recall.recaller import Recaller
from memory.store import Store
from memory.store.tables import characters as cast_store
from memory.store.tables import history, joined_lines, reply_versions
from memory.turn.admission import Admission
from memory.turn.replying import Replier, prepare
from memory.turn.values import Answer, AnswerSet, MemoryConfig, OnText, Reply

log = logging.getLogger(__name__)


# Said when the answers to a message can no longer change (reflected, erased, not stored).
SETTLED = "the answers to this message can no longer change"


def kept(asked: reply_versions.Asked, *, now: float, hours: float) -> reply_versions.Asked:
    """`asked`, unless it is older than its answers are kept (`versions_hours`): Settled."""
    if now - asked.said_at > hours * 3600:
        raise Settled("this message is older than its answers are kept")
    return asked


class Answers:
    """The versions of the engine's reply_versions. `config`, `clock` and `settle` are read at each
    use: the engine's, which may be replaced while it runs."""

    def __init__(
        self,
        store: Store,
        *,
        recaller: Recaller,
        replier: Replier,
        admission: Admission,
        characters: Characters,
        contexts: Mapping[str, ContextBuilder],
        config: Callable[[], MemoryConfig],
        clock: Callable[[], float],
        settle: Callable[[], float],
        shelf: Callable[[], Shelf] = Shelf,
    ) -> None:
        self.store = store
        self.recaller = recaller
        self.replier = replier
        self.admission = admission
        self.characters = characters
        self.contexts = contexts
        self.config = config
        self.clock = clock
        self.settle = settle
        self.shelf = shelf
        # The exchanges another answer is being written for (in this process): one at a time.
        self._regenerating: set[str] = set()

    async def regenerate(
        self, exchange_id: str, *, without: frozenset[int], on_text: OnText | None
    ) -> Reply:
        """Answer the stored message of this exchange again, with the history as it was before
        it and the same recall (less the memories `without`, for this answer only), and show
        the new version. In the person's line in that place, like their turns: it never races
        their next message. Regenerating when another answer to it is being written here;
        Settled when the answers can no longer change (reflected, erased, not stored, or older
        than the versions are kept); Overloaded as a turn."""
        if exchange_id in self._regenerating:
            raise Regenerating()
        self._regenerating.add(exchange_id)
        try:
            asked = await self._open(exchange_id)
            async with self.admission.turn(asked.user_id, asked.story_id):
                return await self._again(await self._open(exchange_id), without, on_text)
        finally:
            self._regenerating.discard(exchange_id)

    async def _open(self, exchange_id: str) -> reply_versions.Asked:
        """The stored message of an exchange whose answers may still change, or Settled."""
        asked = await reply_versions.asked(self.store, exchange_id)
        if asked is None or not asked.pending:
            raise Settled(SETTLED)
        return kept(asked, now=self.clock(), hours=self.config().versions_hours)

    async def _again(
        self,
        asked: reply_versions.Asked,
        without: frozenset[int],
        on_text: OnText | None,
    ) -> Reply:
        # The character that answered: the one whose (maybe derived) story id it is stored under.
        _, key = await cast_store.owner(self.store, cast_store.STORY, asked.story_id)
        context = self.contexts[self.characters.playing(key or self.characters.home).key]
        recalled, plan = await prepare(
            self.recaller,
            context,
            user_id=asked.user_id,
            user_name=asked.user_name,
            story_id=asked.story_id,
            origin=asked.origin,
            text=asked.text,
            query=await self._read_with(asked),
            before_id=asked.message_row,
            exchange_id=asked.exchange_id,
            without=without,
        )
        # The pictures posted with it, while they are kept for its reflection (the shelf: a
        # model that sees images is shown them again; none after a restart or pushed out).
        pictures = self.shelf().get(asked.exchange_id)
        answer, cut, interrupted = await self.replier.reply(
            asked.exchange_id, plan, asked.story_id, context, on_text, pictures
        )
        now = self.clock()
        stored = await self.store.transact(
            lambda tx: reply_versions.add(
                tx,
                asked.exchange_id,
                text=answer,
                turn_id=recalled.turn_id,
                cut=cut,
                now=now,
                keep=self.config().versions,
                due=now + self.settle(),
            )
        )
        if stored is None:  # reflected or erased while it was being written
            raise Settled(SETTLED)
        log.info("exchange %s answered again (%d versions)", asked.exchange_id, len(stored))
        return Reply(answer, asked.exchange_id, recalled, None, cut, interrupted)

    async def _read_with(self, asked: reply_versions.Asked) -> str:
        """What the first answer recalled for: the message, after the person's quick lines its
        turn read with it (those still stored), as the turn joined them."""
        lines = await history.among(
            self.store, await joined_lines.read_by(self.store, asked.exchange_id)
        )
        earlier = sorted(
            (m for m in lines if m.role == "user" and m.story_id == asked.story_id),
            key=lambda m: m.id,
        )
        return "\n".join([*(m.content for m in earlier), asked.text])

    async def swipe(self, exchange_id: str, index: int) -> Answer:
        """Show version `index` (0-based) of the answers to this exchange; Settled when they
        can no longer change, InvalidInput when there is no such version."""
        await self._open(exchange_id)
        try:
            chosen = await self.store.transact(
                lambda tx: reply_versions.choose(
                    tx, exchange_id, index, due=self.clock() + self.settle()
                )
            )
        except IndexError:
            count = (await self.versions(exchange_id)).count
            raise InvalidInput(f"there is no answer {index + 1} (1 to {count})") from None
        if chosen is None:
            raise Settled("the answers to this message can no longer change")
        if not chosen[0]:  # never answered again: the first answer is the only one
            return (await self.versions(exchange_id)).current
        return _versions(exchange_id, *chosen).current

    async def versions(self, exchange_id: str) -> AnswerSet:
        """The answers to this exchange, oldest first, and which is shown (the first answer
        alone when it was never answered again); NotFound when the message is not stored."""
        asked = await reply_versions.asked(self.store, exchange_id)
        if asked is None:
            raise NotFound("this message is no longer stored")
        settled = not asked.pending or (
            self.clock() - asked.said_at > self.config().versions_hours * 3600
        )
        stored = await reply_versions.listed(self.store, exchange_id)
        # Whose message it was: the person, not the id a character keeps them under.
        person, key = await cast_store.owner(self.store, cast_store.PERSON, asked.user_id)
        if not stored:
            answer = (Answer(0, asked.reply),)
            return AnswerSet(exchange_id, answer, 0, person, settled, character=key or "")
        shown = next((i for i, v in enumerate(stored) if v.shown), len(stored) - 1)
        found = _versions(exchange_id, stored, shown)
        return replace(found, user_id=person, settled=settled, character=key or "")


def _versions(exchange_id: str, stored: Sequence[reply_versions.Stored], shown: int) -> AnswerSet:
    texts = tuple(Answer(i, v.text, v.turn_id, v.created_at, v.cut) for i, v in enumerate(stored))
    return AnswerSet(exchange_id, texts, shown)
