"""`echo-bot` as a process of its own, for the tests about a process itself (Ctrl-C, exit
codes, a terminal): started as from a shell's foreground, and gone when the test ends.

A suite started in the background (`make test &`, nohup, a CI runner) inherits SIGINT ignored,
and an ignored signal stays ignored across exec: Python then installs no KeyboardInterrupt
handler, so a Ctrl-C the test sends does nothing and the test waits out its bound. The child
gets SIGINT back to its default before it runs, as a terminal's foreground job has it.

Each child leads a session (and a process group) of its own: `stop` kills the whole group, the
bot under `make` with it, whether the test passed, failed or timed out, and waits a bounded
time. A child left behind would hold the test's pipes open, and run on after the suite.
"""

from __future__ import annotations

import asyncio
import os
import signal
from contextlib import suppress
from typing import Any

# What a killed process group gets to be reaped in; SIGKILL cannot be caught, so only a
# machine stalled past this leaves the wait.
REAPED_WITHIN = 10.0


def _as_in_the_foreground() -> None:
    """In the child, before exec: SIGINT back to its default (see the module's docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def start(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`argv` as a process in a session of its own, with SIGINT as a terminal gives it;
    `options` as asyncio.create_subprocess_exec takes them."""
    return await asyncio.create_subprocess_exec(
        *argv, preexec_fn=_as_in_the_foreground, start_new_session=True, **options
    )


async def stop(proc: asyncio.subprocess.Process) -> None:
    """Kill `proc`'s process group (what it started too, even once it has ended itself) and
    wait for it, at most REAPED_WITHIN seconds."""
    with suppress(ProcessLookupError):  # the whole group has ended already
        os.killpg(proc.pid, signal.SIGKILL)
    with suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), REAPED_WITHIN)
