"""The terminal's /why and /memories say when each memory was said, in the character's zone
(the terminal has no message to link to); several people at once each see their own dates."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config import load_settings
from bot.runtime import open_runtime
from bot.terminal.chat import terminal_user_id
from memory import manage
from memory.model import DM_ORIGIN
from tests.bot.terminal.test_commands import _typed
from tests.bot.terminal.test_e2e import _config
from tests.bot.terminal.test_live import _script
from tests.fakes.ollama import Chaos, FakeOllama

TOKYO = ZoneInfo("Asia/Tokyo")
DAY = 86_400.0
# Thursday 3 December 2026, 08:00 in Tokyo: still Wednesday in UTC.
NOW = datetime(2026, 12, 3, 8, 0, tzinfo=TOKYO).timestamp()
# Six hours later: 14:00 in Tokyo, 05:00 UTC, the same day in both (a memory's versions are
# dated on the machine's clock).
MIDDAY = 6 * 3600.0


async def test_why_and_memories_in_the_terminal_say_when_each_was_said(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    ollama.chaos = Chaos(seed=31, max_delay=0.03, failure_rate=0.0)
    rng = random.Random(31)
    names = {"Alice": 1, "Bruno": 9, "Chloé": 40}  # days ago each told their one memory
    settings = load_settings(_config(tmp_path, ollama.url))
    settings.character.timezone = "Asia/Tokyo"
    async with open_runtime(settings) as runtime:
        runtime.engine.clock = lambda: NOW
        for name, days in names.items():
            user = terminal_user_id(name)
            await manage.remember(runtime.store, user_id=user, story_id=user, origin=DM_ORIGIN,
                                  text=f"{name} a un vélo rouge", now=NOW - days * DAY)  # fmt: skip

        async def one(name: str) -> str:
            await asyncio.sleep(rng.uniform(0, 0.03))
            return await _typed(runtime, name, ["Bonjour !", "/why", "/memories"])

        outs = await asyncio.gather(*(one(name) for name in names))
    expected = {"Alice": "said yesterday", "Bruno": "said 24 Nov, nine days ago",
                "Chloé": "said 24 Oct, five weeks ago"}  # fmt: skip
    for (name, _), out in zip(names.items(), outs, strict=True):
        lines = [line for line in out.splitlines() if line.endswith(f"{name} a un vélo rouge")]
        assert len(lines) == 2, out  # /why and /memories
        assert all(f"· {expected[name]} —" in line for line in lines), lines
        assert "discord.com" not in out
        assert not any(other in out for other in names if other != name)


async def test_the_terminal_says_dates_in_french_when_its_language_is_french(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """[terminal] language = "fr": /why, /memories and /memories history say their dates in
    French; the rest of their text stays English."""
    _script(ollama)
    config = Path(_config(tmp_path, ollama.url))
    config.write_text(config.read_text(encoding="utf-8") + '\n[terminal]\nlanguage = "fr"\n',
                      encoding="utf-8")  # fmt: skip
    settings = load_settings(config)
    settings.character.timezone = "Asia/Tokyo"
    async with open_runtime(settings) as runtime:
        runtime.engine.clock = lambda: NOW
        user = terminal_user_id("Alice")
        done = await manage.remember(runtime.store, user_id=user, story_id=user,
                                     origin=DM_ORIGIN, text="Alice a un vélo rouge",
                                     now=NOW - 9 * DAY + MIDDAY)  # fmt: skip
        assert done.memory_id is not None
        number = done.memory_id
        await manage.versions.edit(runtime.store, user, number, "Alice a un vélo bleu",
                                   now=NOW - 2 * DAY + MIDDAY)  # fmt: skip
        out = await _typed(runtime, "Alice", ["Bonjour !", "/why", "/memories",
                                              f"/memories history {number}"])  # fmt: skip
    said = [line for line in out.splitlines() if "Alice a un vélo bleu (" in line]
    assert len(said) == 2, out  # /why and /memories
    for line in said:
        assert "· dit 24 nov., il y a neuf jours — Alice a un vélo bleu (en vigueur depuis le" in (
            line
        )
    assert f"#{number} en vigueur depuis le 1er déc. 2026 (" in out
    assert "  du 24 nov. 2026 au 1er déc. 2026 (" in out
    assert "said" not in out.replace("Your memories", "") and "ago" not in out
