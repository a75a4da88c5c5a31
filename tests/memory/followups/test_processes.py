"""Follow-ups from two OS processes on one database: the other process (a real one,
tests/memory/followups/process_sender.py) claims the follow-up due and is killed (SIGKILL)
while the model writes it, or while it is being posted. The follow-up is then posted exactly
once in all, as memory.followups.sender promises: killed while writing, this process sends it
once the dead one's lease has ended, not before; killed while posting, it is counted sent
("unconfirmed") and never posted again. Both clocks are virtual: the other process's is
stopped at Wednesday nine, this one's moves past the lease. On the `shared_database` fixture's
backend (PostgreSQL under `make test-pg`)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory.followups.sender import LEASE
from memory.manage import followups
from memory.store import open_store
from tests.fakes.ollama import FakeOllama, serve_fake_ollama
from tests.memory.followups.world import ASK, WEDNESDAY_9, Posted, World, reply

ROOT = Path(__file__).resolve().parents[3]


async def _posted(posts: Path) -> None:
    """Until the other process has posted (its deliverer wrote the follow-up's id)."""
    while not (posts.exists() and posts.read_text(encoding="ascii").strip()):
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("killed", ["writing", "posting"])
async def test_a_process_killed_mid_follow_up_leaves_it_posted_once_in_all(
    shared_database: Path | str,
    ollama: FakeOllama,
    http: httpx.AsyncClient,
    tmp_path: Path,
    killed: str,
) -> None:
    target = str(shared_database)
    posts = tmp_path / "posts-of-the-killed-process"
    async with await open_store(target) as store, serve_fake_ollama() as theirs:
        world = World(store, ollama, http)
        await followups.set_choice(store, 1, True)
        await world.said(1, 10, "I have a job interview tomorrow!")
        assert await world.process().plan() == 1
        held = asyncio.Event()

        async def hold(payload: dict[str, Any]) -> None:
            held.set()
            await theirs.released.wait()

        theirs.chat_reply = reply
        if killed == "writing":
            theirs.pause = hold
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.memory.followups.process_sender", target, theirs.url,
            str(WEDNESDAY_9), str(posts), cwd=ROOT, stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            waited = held.wait() if killed == "writing" else _posted(posts)
            await asyncio.wait_for(waited, 60)
        finally:
            child.send_signal(signal.SIGKILL)
            await child.wait()
            theirs.released.set()
        their_posts = posts.read_text(encoding="ascii").split() if posts.exists() else []

        ours, posted = world.process(), Posted(world.clock)
        world.clock.now = WEDNESDAY_9
        assert await ours.run(posted) == 0  # the dead process's lease still holds it
        world.clock.now += LEASE + 1
        sent_here = await ours.run(posted)
        world.clock.now += 3600
        assert await ours.run(posted) == 0
        (row,) = await followups.planned(store, 1)
        figures = await followups.figures(store)
        if killed == "writing":
            assert (their_posts, sent_here, len(posted.posts)) == ([], 1, 1)
            assert posted.posts[0][0].text == ASK
            assert (row.status, row.reason, row.attempts) == ("sent", "", 1)
            assert (figures.sent, figures.unconfirmed) == (1, 0)
        else:
            assert (their_posts, sent_here, posted.posts) == ([str(row.id)], 0, [])
            assert (row.status, row.reason) == ("sent", "unconfirmed")
            assert (figures.sent, figures.unconfirmed) == (0, 1)
