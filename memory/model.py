"""Plain frozen data shared by the write and read paths.

Everything here is keyed on ids (user, story, origin), never on display names. Times are POSIX
seconds (float) so that the pure functions can take the clock as a parameter.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Kind(enum.StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    PROMISE = "promise"
    EPISODE = "episode"
    RULE = "rule"


class Scope(enum.StrEnum):
    GLOBAL = "global"
    STORY = "story"


class Reason(enum.StrEnum):
    """Why a memory is in the context; shown to the user by /why."""

    PINNED = "pinned"
    GLOBAL = "global"
    SEMANTIC = "semantic"
    # Recalled by the person's recent messages before this one (memory.recall.conversation).
    CONVERSATION = "conversation"
    # Said in the time the message named ("what did I say yesterday?", memory.lexicon.dates).
    TIME = "time"
    QUOTA = "quota"
    FALLBACK = "fallback"
    RULE = "rule"


Origin = str
"""Where something was said, and so where a memory learned from it may be served: the Discord
server's id as text ("111222333"), or DM_ORIGIN for a direct message (the terminal chat is one)."""

DM_ORIGIN: Origin = "dm"
"""The origin of a direct message: a memory learned there is served only in DMs."""


def guild_origin(guild_id: int | None) -> Origin:
    """The origin of what is said in this server (None: in a direct message)."""
    return DM_ORIGIN if guild_id is None else str(guild_id)


def _coerce_enums(obj: object) -> None:
    # Callers (tests, JSON imports) may pass plain strings; store the enum members.
    for name, enum_type in (("kind", Kind), ("scope", Scope)):
        value = getattr(obj, name)
        if not isinstance(value, enum_type):
            object.__setattr__(obj, name, enum_type(value))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory proposed by the reflection, before the code decides whether it is kept."""

    text: str
    kind: Kind
    scope: Scope
    id: int = 0
    confidence: float = 1.0
    # The id of a memory the reflection was shown that this one replaces (the code decides).
    replaces: int | None = None

    def __post_init__(self) -> None:
        _coerce_enums(self)


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory about one user, with its read-time counters."""

    id: int
    user_id: int
    text: str
    kind: Kind
    scope: Scope
    story_id: int | None = None
    origin: Origin | None = None  # always set when read from the database (NOT NULL there)
    confidence: float = 1.0
    pinned: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    content_hash: str = ""
    candidate_count: int = 0
    served_count: int = 0
    semantic_count: int = 0

    def __post_init__(self) -> None:
        _coerce_enums(self)

    @property
    def learned_in_dm(self) -> bool:
        return self.origin == DM_ORIGIN


@dataclass(frozen=True, slots=True)
class Selected:
    """A memory that enters the context, the pass that put it there, and its cosine if semantic."""

    memory: Memory
    reason: Reason
    score: float | None = None
    matched: tuple[str, ...] = ()
    """The message's words that recalled it by keyword (FTS), if any."""


@dataclass(frozen=True, slots=True)
class Turn:
    """What one turn used: shown again by /why."""

    id: int
    user_id: int
    story_id: int
    selected: tuple[Selected, ...] = field(default_factory=tuple)
    degraded: bool = False
    created_at: float = 0.0
    # The exchange (its message's source id) the turn answered; '' when not known.
    exchange_id: str = ""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the character's reply: the unit the reflection reads.

    `user_name` is the display name, for the prompt only; every key is an id.
    """

    exchange_id: str
    user_id: int
    story_id: int
    origin: Origin
    user_name: str
    user_message: str
    reply: str
    # The name the reply is stored under ("": the writer's character).
    author: str = ""
    # Earlier lines of the person's the turn answered with this message (Incoming.joined);
    # `user_message` holds their texts, then its own.
    joined: tuple[str, ...] = ()


MANUAL_EXCHANGE = "manual:"
"""How the exchange id of a memory a person wrote themself (/remember, an import) starts."""


@dataclass(frozen=True, slots=True)
class Source:
    """The exchange something was derived from (its message's source id) and who wrote it."""

    exchange_id: str
    user_id: int | None = None


class LoreScope(enum.StrEnum):
    GLOBAL = "global"  # whatever character the bot plays
    CHARACTER = "character"  # only while it plays the named character


@dataclass(frozen=True, slots=True)
class LoreEntry:
    """World knowledge activated by keywords. `guild_id` None: everywhere (the owner's entries,
    from the terminal, the CLI or a character card); otherwise only in that server."""

    id: int
    content: str
    keywords: tuple[str, ...] = ()
    scope: LoreScope = LoreScope.GLOBAL
    character: str | None = None
    guild_id: int | None = None
    priority: int = 0
    constant: bool = False
    case_sensitive: bool = False
    secondary_keywords: tuple[str, ...] = ()
    selective: bool = False
    scan_depth: int | None = None
    source: str = "manual"
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class CondensedHistory:
    """The condensed history of a story (summarize strategy), covering messages up to
    `through_id`."""

    sentences: tuple[str, ...] = ()
    through_id: int = 0
    # Messages at or below `through_id` that were not condensed because a person had excluded
    # them: included again, they come back as history.
    omitted: tuple[int, ...] = ()
    # The history message each sentence was taken from (0: unknown, condensed before this was
    # recorded): forgetting a message takes its sentences out.
    sources: tuple[int, ...] = ()

    def source_of(self, index: int) -> int:
        """The message the sentence at `index` was taken from (0: unknown)."""
        return self.sources[index] if index < len(self.sources) else 0

    @property
    def text(self) -> str:
        return "\n".join(f"- {s}" for s in self.sentences)
