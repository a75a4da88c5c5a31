"""The bot's heartbeat: a file next to the database holding the time of the last beat, written
from the event loop, and the check a container's health probe runs against it.

A beat is written by a task of the running loop, so a loop that is stuck (a blocking call, a
deadlock) or a process that is gone stops the beats, whatever the process table says.
`python -m bot.heartbeat PATH` exits 0 when the last beat is recent, 1 otherwise, in one
line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

# Seconds between two beats: cheap (one small file written), and well inside STALE_AFTER.
BEAT_INTERVAL = 30.0
# A heartbeat older than this is a stuck or stopped bot: four beats missed, so one slow beat
# (a busy disk, a long garbage collection) is not taken for a dead bot.
STALE_AFTER = 4 * BEAT_INTERVAL


def path_for(database: Path, tag: str = "") -> Path:
    """Where the bot that uses `database` writes its heartbeat; `tag` names the process among
    several sharing the folder (bot.shards: `.shards-1`)."""
    return database.with_name(database.name + tag + ".heartbeat")


def write(path: Path, now: float) -> None:
    """Write one beat; a reader never sees a half-written file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"{now:.3f}\n", encoding="ascii")
    os.replace(partial, path)


@contextlib.asynccontextmanager
async def beating(
    path: Path, *, interval: float = BEAT_INTERVAL, clock: Callable[[], float] = time.time
) -> AsyncIterator[None]:
    """Beat every `interval` seconds while the block runs."""

    async def beat() -> None:
        failed = False
        while True:
            try:
                write(path, clock())
                failed = False
            except OSError as exc:  # a full disk must not stop the bot; said once per outage
                if not failed:
                    log.warning("cannot write the heartbeat %s: %s", path, exc.strerror or exc)
                failed = True
            await asyncio.sleep(interval)

    task = asyncio.create_task(beat(), name="heartbeat")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def check(path: Path, *, now: float, stale_after: float = STALE_AFTER) -> tuple[bool, str]:
    """Whether the last beat is recent, and one line saying so."""
    try:
        last = float(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return False, f"no heartbeat at {path}: the bot has not started"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return False, f"unreadable heartbeat at {path}: {exc}"
    age = now - last
    if age > stale_after:
        return False, (
            f"last heartbeat {age:.0f} s ago (more than {stale_after:.0f} s): "
            "the bot is stopped or its event loop is stuck"
        )
    return True, f"last heartbeat {max(age, 0.0):.0f} s ago"


def main(argv: Sequence[str] | None = None) -> int:
    """Say whether the bot's heartbeat is recent; exit 0 if it is, 1 if not."""
    parser = argparse.ArgumentParser(prog="python -m bot.heartbeat", description=main.__doc__)
    parser.add_argument(
        "path", type=Path, help="the heartbeat file (the database path + .heartbeat)"
    )
    parser.add_argument("--stale-after", type=float, default=STALE_AFTER, metavar="SECONDS")
    args = parser.parse_args(argv)
    ok, line = check(args.path, now=time.time(), stale_after=args.stale_after)
    print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
