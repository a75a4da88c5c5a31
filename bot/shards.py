"""Which Discord shards this process runs, read from `[discord] shard_count` and `shard_ids`.

Discord splits a bot's servers into shards (guild_id >> 22) % shard_count; each shard is one
gateway connection, and a bot in more than about 2,500 servers must shard. Three set-ups:

    no setting                      one connection, discord.py's plain client (as before)
    shard_count only                every shard in this process (AutoShardedBot)
    shard_count and shard_ids       those shards here, the others in other processes

Several processes sharing one database (and often one folder) keep apart what each writes
beside it: a process that names its shard ids puts them in its files' names (`tag`). Only the
process holding shard 0 sends the slash commands at start: the command tree is the same for the
whole application, and two processes comparing one digest file would both send it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Shards:
    """The shards of this process: `ids` of `count`, or all of them when `ids` is None."""

    count: int
    ids: tuple[int, ...] | None = None

    @property
    def here(self) -> tuple[int, ...]:
        """The shard ids this process connects."""
        return self.ids if self.ids is not None else tuple(range(self.count))

    @property
    def sends_commands(self) -> bool:
        """Whether this process sends the slash commands at start (it holds shard 0)."""
        return 0 in self.here

    @property
    def tag(self) -> str:
        """What goes into the names of this process's files beside the database: empty when
        it runs every shard (the only process), else its shard ids (`.shards-1-3`)."""
        if self.ids is None:
            return ""
        return ".shards-" + "-".join(str(i) for i in sorted(self.ids))

    def describe(self) -> str:
        """One line for /stats and the log: which shards, of how many."""
        return f"shards {', '.join(str(i) for i in self.here)} of {self.count}"


def problem(count: int | None, ids: list[int] | None) -> str | None:
    """What is wrong with a `shard_count` and `shard_ids`, in a few words, or None."""
    if ids is None:
        return None
    if count is None:
        return "shard_ids needs shard_count (the number of shards across every process)"
    if not ids:
        return "shard_ids is empty: give this process at least one shard, or leave it out"
    outside = sorted({i for i in ids if not 0 <= i < count})
    if outside:
        listed = ", ".join(str(i) for i in outside)
        return f"shard_ids {listed} not in 0..{count - 1} (shard_count = {count})"
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        return f"shard_ids lists {', '.join(str(i) for i in repeated)} more than once"
    return None


def of(count: int | None, ids: list[int] | None) -> Shards | None:
    """The shards of settings already checked (`problem` found nothing); None: no sharding."""
    if count is None:
        return None
    return Shards(count, None if ids is None else tuple(ids))
