"""Two bot processes on one PostgreSQL database: Alice's exchange is being reflected in one while
she forgets the message in the other. PostgreSQL does not run the two transactions one at a
time as SQLite does; the erasure must still leave none of her words behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from memory import manage
from memory.manage import forgetting as manage_erasure
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _say
from tests.bot.discord.test_erasure import ALICES, BOBS, _menu, _secret, _stored, _talk
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama
from tests.pg.server import waiting_for_locks


async def test_a_reflection_committing_in_another_process_during_an_erasure_leaves_nothing(
    shared_database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Process B's reflection of Alice's exchange has written its memory and story notes and
    waits (another session holds the counters table) when Alice forgets her message in
    process A; then both finish. Nothing of hers stays; Bob's secret does."""
    if not isinstance(shared_database, str):
        pytest.skip("SQLite runs one writer at a time across processes: no interleaving")
    canary.script(ollama)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with (
        _bot_with(tmp_path / "a", ollama, database=shared_database) as (first, _),
        _bot_with(tmp_path / "b", ollama, database=shared_database) as (second, _),
    ):
        await _talk(first, fakes.text_channel(first, CHANNEL), BOB, _secret(BOBS))  # counters exist
        holder = await asyncpg.connect(shared_database)
        watcher = await asyncpg.connect(shared_database)
        try:
            # Alice talks to process B, which reflects her exchange in the background at once.
            alices = await _say(second, fakes.text_channel(second, CHANNEL), ALICE,
                                _secret(ALICES))  # fmt: skip
            holding = holder.transaction()
            await holding.start()
            await holder.execute("LOCK TABLE counters IN EXCLUSIVE MODE")
            await waiting_for_locks(
                watcher, 1
            )  # its memory and notes written, its counters waiting
            forgetting = asyncio.create_task(_menu(first, ALICE, alices))
            await waiting_for_locks(watcher, 2)
            await holding.commit()
            await asyncio.wait_for(forgetting, 60)
            background = getattr(second.get_cog("Conversation"), "_background", ())
            await asyncio.wait_for(asyncio.gather(*background), 60)
        finally:
            await holder.close()
            await watcher.close()
        while await second.runtime.worker.run_due():
            pass
        assert await manage_erasure.settle_pending(first.runtime.store) == 0
        assert await _stored(first, tmp_path, ALICES) == 0
        assert await manage.list_memories(first.runtime.store, ALICE) == []
        assert await _stored(first, tmp_path, BOBS) > 0
