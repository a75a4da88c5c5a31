"""How long the walk of one message through the code is: the distinct functions and modules of
memory/ and bot/ that one Discord message goes through (its turn and reply; its reflection
runs later, apart), and the calls made in them, counted with a profile hook.

Run from a checkout: python -m bench.walk (an older tree: cd there, PYTHONPATH=$PWD python
path/to/bench/walk.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = os.getcwd()
sys.path.insert(0, ROOT)


async def walk() -> tuple[int, int, int]:
    """(functions, modules, calls) of memory/ and bot/ during one message's turn."""
    from tests.bot import discord_fakes as fakes
    from tests.bot.discord.test_discord import CHANNEL, _bot_with
    from tests.fakes.ollama import serve_fake_ollama

    async with serve_fake_ollama() as ollama:
        ollama.chat_reply = lambda p: "{}" if "format" in p else "Bonjour."
        with tempfile.TemporaryDirectory() as tmp:
            async with _bot_with(Path(tmp), ollama) as (echo, _):
                cog: Any = echo.get_cog("Conversation")
                channel = fakes.text_channel(echo, CHANNEL)
                warm = fakes.message(echo, channel, author_id=5, content="warm up")
                await cog.on_message(warm)
                await asyncio.sleep(0.2)
                seen: set[tuple[str, str]] = set()
                calls = 0
                mine = (os.path.join(ROOT, "memory"), os.path.join(ROOT, "bot"))

                def hook(frame: FrameType, event: str, arg: object) -> None:
                    nonlocal calls
                    name = frame.f_code.co_filename
                    if event == "call" and name.startswith(mine):
                        calls += 1
                        seen.add((name[len(ROOT) + 1 :], frame.f_code.co_qualname))

                sys.setprofile(hook)
                threading.setprofile(hook)
                said = fakes.message(
                    echo, channel, author_id=5, content="Mon lapin s'appelle Poivre"
                )
                try:
                    await cog.on_message(said)
                finally:
                    sys.setprofile(None)
                    threading.setprofile(None)  # type: ignore[arg-type]
                return len(seen), len({m for m, _ in seen}), calls


def main() -> None:
    functions, modules, calls = asyncio.run(walk())
    print(f"functions {functions}  modules {modules}  calls {calls}")


if __name__ == "__main__":
    main()
