"""A second process for tests/memory/followups/test_processes.py: the follow-ups of one process
on a shared database (an SQLite file or a PostgreSQL URL), its clock stopped at NOW, to be
SIGKILLed while it writes a follow-up (its model call held) or while it posts one (its
deliverer writes the follow-up's id to POSTS, then never returns).

Usage: python -m tests.memory.followups.process_sender DB CHAT_URL NOW POSTS
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from memory.backends.chat import OllamaChat
from memory.character.cast import Characters
from memory.context.prompt import Character
from memory.followups.sender import Delivery, FollowUp, FollowUps, Policy
from memory.store import open_store
from tests.memory.followups.world import PARIS


class Stuck:
    """A front end that posts (the id goes to `posts`), then hangs before saying so."""

    def __init__(self, posts: Path) -> None:
        self.posts = posts

    async def post(self, followup: FollowUp) -> Delivery:
        with self.posts.open("a", encoding="ascii") as out:
            out.write(f"{followup.id}\n")
        await asyncio.Event().wait()
        raise AssertionError("killed before this")

    async def retract(self, followup: FollowUp, message_ids: Sequence[int]) -> None:
        raise AssertionError("nothing is taken back here")


async def main(database: str, url: str, now: float, posts: Path) -> None:
    timeout = httpx.Timeout(60.0)
    async with httpx.AsyncClient(timeout=timeout) as http, await open_store(database) as store:
        chat = OllamaChat(http, url, "m")
        sender = FollowUps(
            store,
            chat=lambda: chat,
            characters=Characters([Character("Écho", "A friend.", zone=PARIS)]),
            policy=Policy(),
            deadline=lambda: 60.0,
            clock=lambda: now,
        )
        await sender.run(Stuck(posts))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])))
