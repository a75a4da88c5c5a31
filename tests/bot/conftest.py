from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.discord.app import EchoBot
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import _bot_with
from tests.fakes.ollama import FakeOllama


@pytest.fixture
async def bot(tmp_path: Path, ollama: FakeOllama) -> AsyncIterator[tuple[EchoBot, fakes.Recorder]]:
    """A bot on a real SQLite file and the loopback fake Ollama, its Discord I/O recorded."""
    async with _bot_with(tmp_path, ollama) as pair:
        yield pair
