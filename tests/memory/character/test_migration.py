"""A database of one character (schema 24) keeps its memories, history and summary with the
character that is the default at the first start with characters; the others know nothing
of them, and their first turns leave those rows as they were."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory import Character, Characters, Engine, Incoming, Kind, Scope, manage
from memory.backends.chat import ChatResult, Message
from memory.manage import casting
from memory.store import Tx, open_store
from memory.store.tables import memories

GUILD, USER, CHANNEL = "111", 7, 500


class Chat:
    model = "fake-chat"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def chat(self, messages: Sequence[Message], **_: Any) -> ChatResult:
        self.prompts.append(json.dumps(list(messages), ensure_ascii=False))
        return ChatResult("Oui.")


async def test_a_schema_24_database_is_the_default_characters_and_no_other(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    async with await open_store(path, migrate_to=24) as old:

        async def past(tx: Tx) -> None:
            await memories.insert(
                tx, user_id=USER, text="Garde un hibou nommé Pilou", kind=Kind.FACT,
                scope=Scope.GLOBAL, story_id=CHANNEL, origin=GUILD, confidence=1.0, now=1.0,
            )  # fmt: skip
            await tx.execute(
                "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
                " created_at) VALUES ('discord:1', ?, ?, 'user', 'Ana', 'Mon hibou dort', 1.0)",
                (CHANNEL, USER),
            )

        await old.transact(past)
    async with await open_store(path) as store:
        before = await store.fetchall("SELECT id, user_id, story_id, text FROM memories")
        cast = Characters(
            [Character("Brann", "Tu es Brann.", key="brann"),
             Character("Nyx", "Tu es Nyx.", key="nyx")],
            default="nyx",
        )  # fmt: skip
        await casting.load(store, cast)
        assert cast.home == "nyx"
        chat = Chat()
        engine = Engine(store, embedder=None, chat=chat, characters=cast)
        for key in ("brann", "nyx"):
            await engine.turn(
                Incoming(f"d:{key}", USER, "Ana", CHANNEL, GUILD, "Et mon hibou ?", key)
            )
        brann, nyx = chat.prompts
        assert "Pilou" in nyx and "Mon hibou dort" in nyx
        assert "Pilou" not in brann and "Mon hibou dort" not in brann
        listed = await manage.list_memories(store, USER)
        assert [m.text for m in listed] == ["Garde un hibou nommé Pilou"]
        after = await store.fetchall("SELECT id, user_id, story_id, text FROM memories")
        assert [tuple(r) for r in after] == [tuple(r) for r in before]
        # Another default later: the home stays the one recorded, so is the data.
        again = Characters(list(cast), default="brann")
        await casting.load(store, again)
        assert again.home == "nyx"


async def test_the_old_character_alone_becoming_several_keeps_its_memories(
    tmp_path: Path,
) -> None:
    async with await open_store(tmp_path / "echo.sqlite3") as store:
        alone = Characters([Character("Écho", "Tu es Écho.")])  # [character]: key "default"
        await casting.load(store, alone)
        assert alone.home == "default"
        await manage.remember(store, user_id=USER, story_id=CHANNEL, origin=GUILD,
                              text="Garde un hibou nommé Pilou", now=1.0)  # fmt: skip
        several = Characters(
            [Character("Brann", "Tu es Brann.", key="brann"),
             Character("Nyx", "Tu es Nyx.", key="nyx")],
            default="nyx",
        )  # fmt: skip
        await casting.load(store, several)
        assert several.home == "nyx"
        chat = Chat()
        engine = Engine(store, embedder=None, chat=chat, characters=several)
        for key in ("brann", "nyx"):
            await engine.turn(Incoming(f"o:{key}", USER, "Ana", CHANNEL, GUILD, "Et Pilou ?", key))
        brann, nyx = chat.prompts
        assert "hibou nommé Pilou" in nyx and "hibou nommé Pilou" not in brann
