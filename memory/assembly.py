"""One way in: `async with memory.open(options) as echo:` opens the database and the HTTP client,
builds the chat backend, the embedder, the engine, the reflection worker and the indexer from
plain values, and closes everything on exit. Both front ends (the Discord bot, the terminal)
open the memory here; the bot's configuration file is only one way of filling `Options`.

    echo.engine       the turn, recall, other answers and swipes (memory.Engine)
    echo.store        the database, for memory.manage (what a person or the operator does)
    echo.worker       the reflection after each turn (memory.write.worker)
    echo.indexer      the re-indexing of memories' vectors
    echo.jobs()       every background job, timed as the options say (memory.jobs)
    echo.intake       reads the pictures posted with a message, within their bounds

docs/python-api.md shows it in use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Literal

import httpx

from memory.backends.chat import (
    ChatBackend,
    Deadlined,
    Embedder,
    OllamaChat,
    OpenAIChat,
    context_size_of,
    vision_of,
)
from memory.backends.context_size import ContextSizes
from memory.backends.embedders import OllamaEmbedder, OpenAIEmbedder
from memory.backends.redact import NO_SECRETS, Secrets
from memory.backends.structured import Mode, Negotiator
from memory.character.cards import Card
from memory.character.cast import Characters
from memory.context.builder import ContextConfig
from memory.context.strategies import Registry, load_registry
from memory.followups.sender import Deliverer, FollowUps, Policy
from memory.jobs import Background, Job, listed, start
from memory.looplag import LoopLag
from memory.manage import casting, setup
from memory.manage.context import sync_card_lore
from memory.pictures import Intake, Shelf
from memory.store import Rewrite, Store, open_store
from memory.turn.admission import MAX_CHATS, BoundedChat
from memory.turn.engine import Engine
from memory.turn.values import MemoryConfig
from memory.vectors.indexer import REINDEX_INTERVAL, Indexer
from memory.vectors.prefixes import Prefixed, resolve_prefixes
from memory.write.worker import REFLECTION_DEADLINE, ReflectionWorker

# A server that is down is said at once; once connected, only the deadlines (the chat's, the
# reflection's, a turn's embedding's) bound a call: a first reply with a card persona takes
# 30-70 s on a CPU, and a 30 s read timeout cut it short.
CONNECT_TIMEOUT = 5.0
# Days the conversation history is kept when the options do not say.
HISTORY_DAYS = 90.0


@dataclass(frozen=True)
class Server:
    """The LLM server: Ollama's API or an OpenAI-compatible one, its models, and how it is
    asked. `structured_output` None: learned from the server's refusals, and kept."""

    base_url: str
    chat_model: str
    embedding_model: str
    backend: Literal["ollama", "openai"] = "ollama"
    # Where embeddings are asked for (None: base_url).
    embeddings_url: str | None = None
    api_key: str | None = None
    # Ollama's num_ctx: the context window the chat model is loaded with. The prompts stay
    # within the server's own when it is smaller (memory.backends.context_size).
    context_length: int = 8192
    structured_output: Mode | None = None
    # The embedding model's task prefixes (None: from the model's family).
    query_prefix: str | None = None
    document_prefix: str | None = None
    reflection_timeout: float = REFLECTION_DEADLINE
    # Chat calls at once, turns and reflections together.
    max_concurrent_chats: int = MAX_CHATS


@dataclass(frozen=True)
class Options:
    """What the memory is opened with. `database`: an SQLite file's path or a PostgreSQL URL."""

    database: str | Path
    server: Server
    characters: Characters
    # The characters' cards: their lorebooks are kept in the database at opening.
    cards: Sequence[Card] = ()
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    # The context strategies (None: the built-in ones and those plugged in).
    strategies: Registry | None = None
    # Where "yesterday" is read and the prompt's day said (None: the machine's zone).
    zone: tzinfo | None = None
    # Seconds a reply's answers settle before it is reflected (0: at once).
    settle: float = 0.0
    password: str | None = None
    # What no answer, log line or stored error holds (keys, tokens, passwords).
    secrets: Secrets = NO_SECRETS
    # [followups]: whether the character may come back to dated events, the default for
    # people who chose nothing, the quiet hours (memory.followups).
    followups: Policy = field(default_factory=Policy)
    reindex_every: float = REINDEX_INTERVAL
    history_days: float = HISTORY_DAYS
    # When an erasure rewrites an SQLite file whole (memory.store.db.Rewrite).
    rewrite: Rewrite = field(default_factory=Rewrite)
    # Pictures posted with a message shown to a chat model that sees images (False: each is
    # only named to the model, its file name and size).
    pictures: bool = True


@dataclass
class Echo:
    """The memory, opened: what a front end talks to."""

    options: Options
    store: Store
    http: httpx.AsyncClient
    chat: BoundedChat
    embedder: Prefixed
    engine: Engine
    worker: ReflectionWorker
    indexer: Indexer
    followups: FollowUps
    intake: Intake = field(default_factory=Intake)

    @property
    def characters(self) -> Characters:
        return self.options.characters

    @property
    def secrets(self) -> Secrets:
        return self.options.secrets

    def jobs(self, deliver: Deliverer | None = None) -> tuple[Job, ...]:
        """Every background job, timed as the options say; the follow-ups' only with a
        front end's `deliver` to post them through."""
        return listed(
            self.engine,
            self.worker,
            self.indexer,
            reindex_every=self.options.reindex_every,
            history_days=self.options.history_days,
            followups=self.followups,
            deliver=deliver,
        )

    def start_jobs(self, deliver: Deliverer | None = None) -> Background:
        """Start every background job in the running loop; the caller ends them with `stop`."""
        return start(self.jobs(deliver))


def http_client() -> httpx.AsyncClient:
    """The HTTP client every backend call shares: a short connect timeout, no other."""
    return httpx.AsyncClient(timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT))


def server_backends(
    server: Server,
    http: httpx.AsyncClient,
    modes: Negotiator | None = None,
    *,
    sizes: ContextSizes | None = None,
    secrets: Secrets = NO_SECRETS,
) -> tuple[ChatBackend, Embedder]:
    """The chat backend and the embedder (without its task prefixes) of this server."""
    modes = modes or Negotiator(override=server.structured_output)
    sizes = sizes or ContextSizes()
    embeddings_url = server.embeddings_url or server.base_url
    if server.backend == "openai":
        key = server.api_key
        return (
            OpenAIChat(
                http,
                server.base_url,
                server.chat_model,
                api_key=key,
                modes=modes,
                sizes=sizes,
                secrets=secrets,
            ),
            OpenAIEmbedder(
                http, embeddings_url, server.embedding_model, api_key=key, secrets=secrets
            ),
        )
    return (
        OllamaChat(
            http,
            server.base_url,
            server.chat_model,
            num_ctx=server.context_length,
            modes=modes,
            sizes=sizes,
            secrets=secrets,
        ),
        OllamaEmbedder(http, embeddings_url, server.embedding_model, secrets=secrets),
    )


def with_prefixes(server: Server, embedder: Embedder) -> Prefixed:
    """The embedder with its task prefixes: each one the server's options leave unset taken
    from the model's family."""
    chosen = resolve_prefixes(server.embedding_model, server.query_prefix, server.document_prefix)
    return Prefixed(embedder, chosen)


@asynccontextmanager
async def open(options: Options) -> AsyncIterator[Echo]:
    """Open the database and the HTTP client, build the engine, its worker and its indexer;
    stop the reflections under way and close everything on exit."""
    registry = options.strategies if options.strategies is not None else load_registry()
    server = options.server
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(http_client())
        store = await stack.enter_async_context(
            await open_store(options.database, password=options.password)
        )
        store.rewrite = options.rewrite
        for card in options.cards:
            await sync_card_lore(store, card)
        await casting.load(store, options.characters)
        modes = await setup.negotiator(store, override=server.structured_output)
        sizes = await setup.context_sizes(store)
        direct, plain = server_backends(server, http, modes, sizes=sizes, secrets=options.secrets)
        embedder = with_prefixes(server, plain)
        # Turns and reflections share the bound on chat calls at once; a server learned to take
        # one request at a time gets one at a time, the replies first.
        chat = BoundedChat(
            direct,
            limit=server.max_concurrent_chats,
            one_at_a_time=await setup.one_at_a_time(store, server.base_url, server.chat_model),
            on_learned=setup.on_one_at_a_time(store, server.base_url, server.chat_model),
        )
        loop_lag = LoopLag()
        # Whether the model sees images, asked or learned; the pictures shown kept for the
        # reflection, in memory only.
        sight = vision_of(direct) if options.pictures else None
        shelf = Shelf()
        engine = Engine(
            store,
            embedder=embedder,
            chat=Deadlined(chat, "chat_timeout"),
            characters=options.characters,
            config=options.memory,
            context=options.context,
            strategies=registry,
            loop_lag=loop_lag,
            zone=options.zone,
            settle=options.settle,
            server_context=context_size_of(direct),
            sight=sight,
            shelf=shelf,
        )
        worker = ReflectionWorker(
            store,
            Deadlined(chat.background(), "reflection_timeout"),
            character_name=engine.character.name,
            deadline=server.reflection_timeout,
            caches=engine.caches,
            secrets=options.secrets,
            zone=engine.zone,
            characters=options.characters,
            sight=sight,
            shelf=shelf,
            clock=lambda: engine.clock(),
        )
        loop_lag.start()
        try:
            followups = FollowUps(
                store,
                chat=lambda: engine.chat,
                characters=options.characters,
                policy=options.followups,
                deadline=lambda: engine.config.chat_deadline,
                clock=lambda: engine.clock(),
            )
            yield Echo(
                options,
                store,
                http,
                chat,
                embedder,
                engine,
                worker,
                Indexer(store, embedder),
                followups,
            )
        finally:
            try:
                await loop_lag.stop()
            finally:
                await worker.close()
