"""A follow-up end to end in the terminal chat: a person turns follow-ups on and says their job
interview is tomorrow (Monday evening, Paris); when they open the chat on Wednesday morning the
character asks how it went before anything else, /why says which memory and why now, and their
answer is a turn like any other. Virtual clock, started at the machine's time (the terminal's
reflection reads "tomorrow" from it); the chat model is the loopback Ollama."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

from bot.config import load_settings
from bot.runtime import open_runtime
from bot.terminal.chat import terminal_user_id
from memory import short_date
from memory.followups.choose import Hours
from memory.manage import followups
from tests.bot.terminal.test_commands import _typed
from tests.bot.terminal.test_e2e import _config
from tests.fakes.ollama import FakeOllama
from tests.memory.followups.world import ASK, PARIS, Clock, reply

HOURS = Hours(PARIS)


async def test_the_terminal_shows_the_follow_up_when_the_chat_opens_and_why(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = reply
    settings = load_settings(_config(tmp_path, ollama.url))
    settings.character.timezone = "Europe/Paris"
    clock = Clock(time.time())
    said, event = HOURS.day(clock.now), HOURS.day(clock.now) + timedelta(days=1)
    after = HOURS.morning(event + timedelta(days=1))
    async with open_runtime(settings) as runtime:
        runtime.engine.clock = clock
        runtime.worker.clock = clock
        monday = await _typed(
            runtime, "Marie", ["/followups on", "I have a job interview tomorrow!", "/followups"]
        )
        clock.now = after + 1800
        wednesday = await _typed(runtime, "Marie", ["/why", "It went well, I got the job!"])
        clock.now += 3600
        later = await _typed(runtime, "Marie", ["/followups"])
    print(f"--- the first day ---\n{monday}--- two days later, 09:30 ---\n{wednesday}")
    assert "Follow-ups: on." in monday
    planned = (
        f"about memory #1 (said {short_date(said)}: about {short_date(event)}):"
        f" {short_date(event + timedelta(days=1))} 09:00, in our DMs"
    )
    assert planned in monday
    lines = wednesday.splitlines()
    assert lines[0] == f"Écho: {ASK}"  # first, before anything typed
    assert lines[1].startswith(
        f"My last message here was a follow-up of memory #1 (said {short_date(said)}"
    )
    assert lines[-1] == "Écho: Good luck!"
    assert ASK not in later and "#1 about memory #1: sent, in our DMs" in later


async def test_many_people_opening_the_chat_at_once_each_hear_their_own_follow_up(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = reply
    settings = load_settings(_config(tmp_path, ollama.url))
    settings.character.timezone = "Europe/Paris"
    clock = Clock(time.time())
    names = [f"P{i}" for i in range(8)]
    async with open_runtime(settings) as runtime:
        runtime.engine.clock = clock
        runtime.worker.clock = clock
        for name in names:
            await followups.set_choice(runtime.store, terminal_user_id(name), True)
        await asyncio.gather(
            *(_typed(runtime, n, ["I have a job interview tomorrow!"]) for n in names)
        )
        clock.now = HOURS.morning(HOURS.day(clock.now) + timedelta(days=2))
        outs = await asyncio.gather(*(_typed(runtime, n, ["/why"]) for n in names))
    for out in outs:
        assert out.splitlines()[0] == f"Écho: {ASK}" and out.count(ASK) == 1
