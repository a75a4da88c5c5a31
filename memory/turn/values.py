"""The values the engine takes and gives back: its read-path configuration, a message to
answer, the reply and the memories it used, and what the engine holds (for /stats)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from memory.cache import CACHE_MB
from memory.model import Kind, Origin, Selected
from memory.recall import selection
from memory.recall.semantic import COSINE_FLOOR, RELATIVE_SD, TURN_EMBEDDING_TIMEOUT
from memory.store.tables import privacy
from memory.store.tables.outbox import BACKLOG_PER_PERSON
from memory.turn.admission import NOTICE_INTERVAL, TURN_QUEUE, AdmissionStatus
from memory.turn.reply_cap import MAX_REPLY_CHARS

# Versions of one reply kept: a person comparing answers looks at a handful; the oldest not
# shown goes past it.
VERSIONS = 5
# Hours the versions of a reply are kept (the history keeps the one shown).
VERSIONS_HOURS = 24.0
# Awaited with a streamed reply's text so far, each time more arrives (see Engine.turn).
OnText = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The read path's numbers (defaults: what was measured, see selection.py)."""

    limit: int = selection.DEFAULT_LIMIT
    semantic_slots: int = selection.SEMANTIC_SLOTS
    # Places of recall the person's messages just before this one may take (0: the message alone).
    conversation_slots: int = selection.CONVERSATION_SLOTS
    threshold: float = selection.COSINE_THRESHOLD
    quotas: Mapping[Kind, int] = field(default_factory=lambda: dict(selection.DEFAULT_QUOTAS))
    # Eligibility for recall by meaning: relative to this query's score distribution (a
    # threshold read from the scores, valid for any model), never below the absolute floor.
    relative_sd: float | None = RELATIVE_SD
    cosine_floor: float = COSINE_FLOOR
    turn_embedding_timeout: float = TURN_EMBEDDING_TIMEOUT
    chat_deadline: float = 120.0
    # Turns of one person in one place waiting behind the one answered (see admission.py).
    turn_queue: int = TURN_QUEUE
    slow_down_interval: float = NOTICE_INTERVAL
    max_reply_chars: int = MAX_REPLY_CHARS
    # Reflections one person may have waiting; past it their oldest are dropped, counted.
    reflection_backlog: int = BACKLOG_PER_PERSON
    # Where memories are served unless a person chose otherwise (`[privacy]`, /privacy).
    memories_served: str = privacy.WHERE_LEARNED
    # Megabytes the per-person caches (pools, vector matrices, dedup indexes) hold together.
    cache_mb: int = CACHE_MB
    # Versions of one reply kept (the first answer included), and hours they are kept.
    versions: int = VERSIONS
    versions_hours: float = VERSIONS_HOURS


@dataclass(frozen=True, slots=True)
class Recall:
    """The memories one turn uses, why, and whether the turn ran without semantic scores."""

    turn_id: int
    selected: tuple[Selected, ...]
    degraded: bool
    # Why it was degraded (timings.EMBEDDING or timings.VECTORS), "" when it was not.
    why_degraded: str = ""
    # The time the message names, [start, end), if any: recalled by time, preferred in history.
    window: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Incoming:
    """A message to answer. `source_id` is unique per message (e.g. "discord:<message id>")."""

    source_id: str
    user_id: int
    user_name: str
    story_id: int
    origin: Origin
    text: str
    # The key of the character to answer as ("": the default one).
    character: str = ""
    # The person's lines just before this one here, answered with it (quick lines: « attends »,
    # « j'ai un truc à te dire », then the news), oldest first: stored before it when their own
    # turn stopped before storing them, never answered alone. The turn reads them back from
    # the history, so a line forgotten meanwhile is left out.
    joined: tuple[Incoming, ...] = ()


@dataclass(frozen=True, slots=True)
class Reply:
    """The character's answer to one message, and the memories it used."""

    text: str
    exchange_id: str
    recall: Recall
    # The character's greeting, sent before the reply: the first reply to go out to this person
    # here (after a failed first turn, the next one that succeeds).
    greeting: str | None = None
    # Characters cut off the end of the model's answer (over max_reply_chars); `text` is what
    # was kept, stored and reflected.
    cut: int = 0
    # The stream broke midway (a dropped connection, a malformed line, the deadline): `text`
    # is what had arrived, and is what was stored.
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer to a message: its text, its place among the answers (0-based), the turn
    whose selection produced it (0: not known) and when."""

    index: int
    text: str
    turn_id: int = 0
    created_at: float = 0.0
    cut: int = 0


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """The answers to one message, oldest first, and which one is shown."""

    exchange_id: str
    texts: tuple[Answer, ...]
    shown: int = 0
    # The person the message was theirs (0: not known), and whether the answers can no longer
    # change (reflected, or past the time they are kept).
    user_id: int = 0
    settled: bool = False

    @property
    def count(self) -> int:
        return len(self.texts)

    @property
    def current(self) -> Answer:
        return self.texts[self.shown]


@dataclass(frozen=True, slots=True)
class EngineStatus:
    """What the engine holds in memory and what it turned away since start-up (for /stats)."""

    admission: AdmissionStatus
    exchanges_waiting: int
    exchanges_dropped: int
    # Turns served by keywords and the deterministic passes while their matrix loaded.
    turns_before_vectors: int = 0
    # The event loop's longest stall in the last minute, seconds (None: not measured).
    longest_stall: float | None = None
    # Replies whose stream broke midway, kept as far as they had come.
    replies_interrupted: int = 0
    # The chat server takes one request at a time (learned: it stopped a reply when another
    # started), and the calls it stopped that were asked again alone since start-up.
    chat_one_at_a_time: bool = False
    chat_asked_again: int = 0
