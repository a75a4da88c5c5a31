"""Écho's memory engine: what to remember about each person, and what to recall each turn.

This package never imports Discord. Its face is this module and `memory.manage` (what a person
or the operator does with the memory); the front ends (bot/) import nothing else of it, and
tests/test_imports.py holds them to it. The rest is the inside: memory.turn (a turn's path),
memory.recall, memory.context, memory.write, memory.vectors, memory.store, memory.backends.

    Engine, MemoryConfig          the engine of one character, and its read path's numbers
    Incoming, Reply, Recall       a message to answer, the answer, the memories it used
    Answer, AnswerSet             the answers to one message ("Another answer", swipes)
    open, Options, Server, Echo   the one way in: `async with memory.open(options) as echo:`
                                  opens the database and builds everything (memory.assembly)
    Store, ReflectionWorker       the database (SQLite or PostgreSQL), the reflection after a turn
    Indexer                       the re-indexing of memories' vectors
    jobs                          every background job, started the same by each front end
    ContextConfig, Registry       the prompt's budget, the context strategies (built in, plugged in)
    Card, Character, Characters   a character card read from a file, a character, the cast
    Picture, Intake               a picture posted with a message, read within its caps
    ChatBackend, Embedder         what a chat backend and an embedder offer (server_backends
                                  builds the server's; memory.backends has them all)
    Memory, Turn, Kind, Scope     the values a person's memories are shown and changed with
    said_on, short_date, Language dates in words, in English or French (memory.context.when)
    EchoError and its tree        every error raised on purpose (memory.errors draws the tree)
"""

from memory import jobs, manage
from memory.assembly import Echo, Options, Server, open, server_backends, with_prefixes
from memory.backends.chat import ChatBackend, Embedder, ollama_health
from memory.backends.redact import Secrets, redact
from memory.backends.structured import Mode, Negotiator
from memory.character.cards import Card, load_card, load_lorebook
from memory.character.cast import DEFAULT_KEY, KEY, Characters
from memory.character.names import valid_name
from memory.character.png import portrait
from memory.context.budget import ContextPlan, Decision
from memory.context.builder import ContextConfig
from memory.context.prompt import BlockKind, Character
from memory.context.strategies import Registry, Status, load_registry
from memory.context.when import Language, now_line, said_on, short_date
from memory.errors import (
    BackendError,
    BackendRefused,
    BackendResponseError,
    BackendUnavailable,
    CardError,
    EchoError,
    Forbidden,
    InvalidInput,
    MigrationError,
    NotFound,
    Overloaded,
    ReflectionError,
    Regenerating,
    Settled,
    StoreError,
    unexpected,
)
from memory.model import (
    DM_ORIGIN,
    MANUAL_EXCHANGE,
    Kind,
    LoreEntry,
    LoreScope,
    Memory,
    Origin,
    Reason,
    Scope,
    Selected,
    Turn,
    guild_origin,
)
from memory.pictures import Intake, Picture
from memory.recall.semantic import RELATIVE_SD
from memory.store import Rewrite, Store, open_store
from memory.store.queries.moderation import HeldAnchor
from memory.store.tables.history import HistoryMessage
from memory.turn.admission import MAX_CHATS
from memory.turn.engine import Engine
from memory.turn.values import (
    Answer,
    AnswerSet,
    EngineStatus,
    Incoming,
    MemoryConfig,
    OnText,
    Recall,
    Reply,
)
from memory.vectors.calibrate import LanguageReport, calibrate, save_calibration
from memory.vectors.indexer import REINDEX_INTERVAL, Indexer, IndexerStatus
from memory.vectors.prefixes import Prefixed
from memory.write.worker import REFLECTION_DEADLINE, ReflectionWorker

__all__ = [
    "DEFAULT_KEY",
    "DM_ORIGIN",
    "KEY",
    "MANUAL_EXCHANGE",
    "MAX_CHATS",
    "REFLECTION_DEADLINE",
    "REINDEX_INTERVAL",
    "RELATIVE_SD",
    "Answer",
    "AnswerSet",
    "BackendError",
    "BackendRefused",
    "BackendResponseError",
    "BackendUnavailable",
    "BlockKind",
    "Card",
    "CardError",
    "Character",
    "Characters",
    "ChatBackend",
    "ContextConfig",
    "ContextPlan",
    "Decision",
    "Echo",
    "EchoError",
    "Embedder",
    "Engine",
    "EngineStatus",
    "Forbidden",
    "HeldAnchor",
    "HistoryMessage",
    "Incoming",
    "Indexer",
    "IndexerStatus",
    "Intake",
    "InvalidInput",
    "Kind",
    "Language",
    "LanguageReport",
    "LoreEntry",
    "LoreScope",
    "Memory",
    "MemoryConfig",
    "MigrationError",
    "Mode",
    "Negotiator",
    "NotFound",
    "OnText",
    "Options",
    "Origin",
    "Overloaded",
    "Picture",
    "Prefixed",
    "Reason",
    "Recall",
    "ReflectionError",
    "ReflectionWorker",
    "Regenerating",
    "Registry",
    "Reply",
    "Rewrite",
    "Scope",
    "Secrets",
    "Selected",
    "Server",
    "Settled",
    "Status",
    "Store",
    "StoreError",
    "Turn",
    "calibrate",
    "guild_origin",
    "jobs",
    "load_card",
    "load_lorebook",
    "load_registry",
    "manage",
    "now_line",
    "ollama_health",
    "open",
    "open_store",
    "portrait",
    "redact",
    "said_on",
    "save_calibration",
    "server_backends",
    "short_date",
    "unexpected",
    "valid_name",
    "with_prefixes",
]
