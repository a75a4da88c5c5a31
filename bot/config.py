"""Settings: a TOML file, overridden by ECHO_* environment variables and a secrets directory.

Priority, highest first: environment (`ECHO_DISCORD__TOKEN`, `__` for nesting), secret files
(`<secrets_dir>/discord__token`), the TOML file, the defaults below. A setting the engine reads
takes its default from the engine's own config (MemoryConfig, ContextConfig) or constant, where
the measurement behind it is written; config.example.toml states every key (a test holds the
three together).

A configuration that cannot be used is refused in one line naming where the bad value came
from: an ECHO_* environment variable, a secret file or the TOML file, so nobody searches the
file for a value the environment gave. A key that moved names its new place.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal, cast, get_origin
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NestedSecretsSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from bot import shards as sharding
from memory import (
    DEFAULT_KEY,
    KEY,
    MAX_CHATS,
    REFLECTION_DEADLINE,
    REINDEX_INTERVAL,
    RELATIVE_SD,
    ContextConfig,
    Intake,
    Kind,
    Language,
    MemoryConfig,
    Rewrite,
    Secrets,
)
from memory.manage.followups import Policy

# The engine's defaults, read once: every setting that feeds the engine takes its default here.
_MEMORY = MemoryConfig()
_CONTEXT = ContextConfig()
_FOLLOWUPS = Policy()
_REWRITE = Rewrite()

# The smallest prompt budget that holds a persona, the rules and a message.
MIN_PROMPT_TOKENS = 256


class ConfigError(Exception):
    """The configuration cannot be used; the message names where the value came from (the file,
    an ECHO_* variable, a secret file) and the field."""


def _key(value: SecretStr | None) -> SecretStr | None:
    """A key as pasted: surrounding whitespace dropped (a secret file's final newline), anything
    unprintable inside refused without showing the key."""
    if value is None:
        return None
    key = value.get_secret_value().strip()
    # It goes in an HTTP header, where only printable ASCII can go.
    if not (key.isascii() and key.isprintable()):
        raise ValueError(
            "contains a control character (newline, NUL...) or a character outside ASCII; "
            "the key is not shown"
        )
    return SecretStr(key) if key else None


# A Discord token or an API key.
Key = Annotated[SecretStr | None, AfterValidator(_key)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DiscordSettings(_Section):
    token: Key = None
    channels: list[int] = Field(default_factory=list)
    # Where Discord's HTTP API and gateway are: changed only for a proxy in front of them.
    api_url: str = Field("https://discord.com/api/v10", pattern=r"^https?://")
    gateway_url: str = Field("wss://gateway.discord.gg/", pattern=r"^wss?://")
    # Seconds before the first login is tried again when Discord is unreachable; the wait
    # doubles at each try, up to bot.discord.startup.LOGIN_RETRY_CAP.
    login_retry: float = Field(2.0, gt=0, le=300)
    # Seconds between two edits of one message while a reply streams in (Discord allows about
    # one a second per message).
    edit_interval: float = Field(1.0, ge=0.5, le=60)
    # Quick lines (the conversation cog): seconds with no other line before a person's lines
    # that came while the answer to the first had not begun to show are answered as one turn;
    # 0: every message is a turn of its own.
    quick_pause: float = Field(2.0, ge=0, le=30)
    # Sharding (bot.shards): the number of shards across every process, and this process's
    # own; unset, one connection without shards.
    shard_count: int | None = Field(None, ge=1, le=100_000)
    shard_ids: list[int] | None = None
    # Whether the character answers a message again when its author edits it (the history and
    # the memory follow the edit either way: bot.discord.cogs.following).
    answer_edits: bool = False
    # In a scene (several characters in a channel): how many times a character's message may
    # make another answer before a person speaks again there; 0, never.
    scene_chain: int = Field(0, ge=0, le=20)
    # Whether people may also install the app on their own account, for the personal commands
    # in their DMs and group DMs (bot.discord.installs).
    user_install: bool = False
    # Whether a character for adults plays in DMs (elsewhere: only in channels Discord marks
    # age-restricted).
    adult_in_dms: bool = False

    @model_validator(mode="after")
    def _shards_agree(self) -> DiscordSettings:
        wrong = sharding.problem(self.shard_count, self.shard_ids)
        if wrong is not None:
            raise ValueError(wrong)
        return self

    @property
    def shards(self) -> sharding.Shards | None:
        """This process's shards; None: no sharding."""
        return sharding.of(self.shard_count, self.shard_ids)

    @property
    def file_tag(self) -> str:
        """What this process puts in the names of its files beside the database."""
        shards = self.shards
        return "" if shards is None else shards.tag


class CharacterSettings(_Section):
    name: str = Field("Écho", min_length=1, max_length=80)
    persona: str = "Tu es Écho, une confidente attentive, chaleureuse et un peu malicieuse."
    rules: list[str] = Field(default_factory=list)
    # A Character Card (V2/V3, .json or .png): it supplies what this section leaves unset.
    card: Path | None = None
    # Where the character lives (an IANA name): the day and time its prompt says, the dates
    # of memories. Unset: the machine's zone.
    timezone: str | None = Field(None, min_length=1, max_length=64)
    # The language of the dates its prompt says (the day and time, when a memory was said, a
    # silence in the history) and of the date its reflection is told: "en" or "fr".
    language: Language = "en"
    # For adults only (then it plays only where Discord marks the channel age-restricted):
    # true, false, or "auto", as its card's tags say (memory.character.cards.ADULT_TAGS).
    adult: bool | Literal["auto"] = "auto"
    # Whether it comes back to a dated event a person mentioned ([followups]); false: never.
    followups: bool = True

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"no time zone named {value!r} (an IANA name, like Europe/Paris or "
                    "America/New_York)"
                ) from None
        return value

    def zone(self) -> tzinfo:
        """The character's time zone: the one named, else the machine's."""
        return ZoneInfo(self.timezone) if self.timezone else local_zone()


class CastSettings(CharacterSettings):
    """One `[[characters]]` table: a character, its key, where it plays."""

    # What its memories are kept under and moderators name it by (/character set).
    key: str = Field(DEFAULT_KEY, pattern=f"^{KEY.pattern}$")
    # Channel ids (or a thread's channel) it plays in; elsewhere the default one plays.
    channels: list[int] = Field(default_factory=list)
    # The one that plays in DMs and in channels no character lists (unset: the first).
    default: bool = False


def local_zone() -> tzinfo:
    """The machine's time zone: TZ, else /etc/localtime (with its name when it links into a
    zoneinfo folder), else the fixed offset the C library reports now."""
    name = os.environ.get("TZ", "").removeprefix(":")
    if name:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            return ZoneInfo(name)
    target = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in target:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            return ZoneInfo(target.rsplit("zoneinfo/", 1)[1])
    with contextlib.suppress(OSError, ValueError), open("/etc/localtime", "rb") as file:
        return ZoneInfo.from_file(file)
    return datetime.now().astimezone().tzinfo or UTC


# A server address's trailing /v1 (or /v1/): dropped once, as the clients add it.
_V1 = re.compile(r"/v1/?$")


class LLMSettings(_Section):
    backend: Literal["ollama", "openai"] = "ollama"
    base_url: str = "http://127.0.0.1:11434"
    chat_model: str = "llama3.1:8b"
    embedding_base_url: str | None = None
    embedding_model: str = "nomic-embed-text"
    # Put before the message and before each memory when they are embedded. Unset: the known
    # prefixes of the model's family (memory/vectors/prefixes.py); "" for none. Changing them
    # re-embeds every memory.
    query_prefix: str | None = Field(None, max_length=200)
    document_prefix: str | None = Field(None, max_length=200)
    api_key: Key = None
    chat_timeout: float = Field(_MEMORY.chat_deadline, gt=0)
    reflection_timeout: float = Field(REFLECTION_DEADLINE, gt=0)
    # How the reflection asks for JSON; "auto" learns what the server accepts
    # (memory.backends.structured).
    structured_output: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "none"
    ] = "auto"

    @field_validator("base_url", "embedding_base_url")
    @classmethod
    def _without_v1(cls, value: str | None) -> str | None:
        # The address OpenAI-compatible docs give (http://host:8080/v1): the clients add /v1/...
        # (and Ollama's /api/...) themselves, so a trailing /v1 would be asked for twice.
        return None if value is None else _V1.sub("", value, count=1)

    @property
    def embeddings_url(self) -> str:
        return self.embedding_base_url or self.base_url


class ContextSettings(_Section):
    # Each key is a field of the engine's ContextConfig, under the same name, except
    # summary_share: the published key for what the engine calls the condensed history's share.
    context_length: int = Field(_CONTEXT.context_length, ge=512)
    response_tokens: int = Field(_CONTEXT.response_tokens, ge=16)
    strategy: str = Field(_CONTEXT.strategy, min_length=1, max_length=64)
    history_messages: int = Field(_CONTEXT.history_messages, ge=0, le=5000)
    lore_depth: int = Field(_CONTEXT.lore_depth, ge=1, le=100)
    lore_share: float = Field(_CONTEXT.lore_share, ge=0.0, le=1.0)
    summary_share: float = Field(_CONTEXT.condensed_share, ge=0.0, le=0.9)
    vector_keep: float = Field(_CONTEXT.vector_keep, ge=0.0, le=1.0)

    def engine_config(self, source_budgets: Mapping[str, int] | None = None) -> ContextConfig:
        """The engine's context config; `source_budgets` are the lorebooks' own token budgets."""
        fields = self.model_dump()
        fields["condensed_share"] = fields.pop("summary_share")
        return ContextConfig(**fields, source_budgets=dict(source_budgets or {}))

    @model_validator(mode="after")
    def _room_for_a_prompt(self) -> ContextSettings:
        if self.response_tokens > self.context_length - MIN_PROMPT_TOKENS:
            raise ValueError(
                f"response_tokens must leave at least {MIN_PROMPT_TOKENS} of context_length "
                "for the prompt"
            )
        return self


# What selects PostgreSQL in [storage] url; anything else is refused rather than read as a file.
PG_SCHEMES = ("postgresql://", "postgres://")


class StorageSettings(_Section):
    # The SQLite database; with a url, the folder of this process's own files (log, heartbeat).
    path: Path = Path("data/echo.sqlite3")
    # A PostgreSQL database instead of SQLite: postgresql://user@host:port/database.
    url: str | None = None
    # PostgreSQL's password: from ECHO_STORAGE__PASSWORD or the secret file storage__password.
    password: Key = None

    @field_validator("url")
    @classmethod
    def _postgresql(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith(PG_SCHEMES):
            raise ValueError("must start with postgresql:// (leave it out for SQLite)")
        if urlsplit(value).password is not None:
            raise ValueError(
                "holds a password: put it in ECHO_STORAGE__PASSWORD or the secret file"
                " storage__password instead; the URL is not shown"
            )
        return value

    @property
    def database(self) -> Path | str:
        """What the store opens: the PostgreSQL URL, else the SQLite file."""
        return self.url if self.url is not None else self.path

    def database_password(self) -> str | None:
        return None if self.password is None else self.password.get_secret_value()


QuotaKind = Literal["fact", "preference", "promise", "episode"]


def _default_quotas() -> dict[QuotaKind, int]:
    return {cast(QuotaKind, kind.value): n for kind, n in _MEMORY.quotas.items()}


class MemorySettings(_Section):
    memories_per_turn: int = Field(_MEMORY.limit, ge=1, le=200)
    semantic_slots: int = Field(_MEMORY.semantic_slots, ge=0)
    conversation_slots: int = Field(_MEMORY.conversation_slots, ge=0)
    cosine_threshold: float = Field(_MEMORY.threshold, ge=-1.0, le=1.0)
    eligibility: Literal["relative", "absolute"] = (
        "absolute" if _MEMORY.relative_sd is None else "relative"
    )
    relative_sd: float = Field(RELATIVE_SD, ge=0.0, le=10.0)
    cosine_floor: float = Field(_MEMORY.cosine_floor, ge=-1.0, le=1.0)
    quotas: dict[QuotaKind, int] = Field(default_factory=_default_quotas)
    turn_embedding_timeout: float = Field(_MEMORY.turn_embedding_timeout, gt=0)
    reindex_interval: float = Field(REINDEX_INTERVAL, gt=0)
    # Off: each character keeps its own memories of each person. On: a person's memories serve
    # every character (stories, their summaries and history, stay each character's own).
    shared_between_characters: bool = False

    @field_validator("quotas")
    @classmethod
    def _non_negative(cls, value: dict[str, int]) -> dict[str, int]:
        if any(v < 0 for v in value.values()):
            raise ValueError("quotas must be >= 0")
        return value


class LimitSettings(_Section):
    """How much of the bot one person, and everyone together, may take at once."""

    turn_queue: int = Field(_MEMORY.turn_queue, ge=0, le=100)
    max_concurrent_chats: int = Field(MAX_CHATS, ge=1, le=256)
    slow_down_interval: float = Field(_MEMORY.slow_down_interval, ge=0)
    reflection_backlog: int = Field(_MEMORY.reflection_backlog, ge=1, le=10_000)
    max_reply_chars: int = Field(_MEMORY.max_reply_chars, ge=100, le=100_000)
    # Megabytes of memory the per-person caches take together (memory.cache).
    cache_mb: int = Field(_MEMORY.cache_mb, ge=16, le=1_048_576)


class PrivacySettings(_Section):
    # Days a message stays in the conversation history (0: kept until someone forgets it).
    history_days: float = Field(90.0, ge=0)
    # Where a person's memories are served unless they chose otherwise with /privacy.
    memories_served: Literal["where_learned", "everywhere"] = cast(
        Literal["where_learned", "everywhere"], _MEMORY.memories_served
    )
    # A message deleted on Discord is forgotten as "Forget this message" forgets it, and a reply
    # of the character deleted leaves the history (False: both stay stored).
    follow_deletions: bool = True
    # SQLite: after an erasure the file is rewritten whole (VACUUM) to clear the copies SQLite's
    # page balancing leaves in unused space (memory.store.db.Rewrite): at once while the file
    # is at most rewrite_mb megabytes, else by the erasures job at most every rewrite_hours
    # (0: never; those erasures stay pending, counted in /stats).
    rewrite_mb: float = Field(_REWRITE.inline_mb, ge=0)
    rewrite_hours: float = Field(_REWRITE.every_hours, ge=0, le=24 * 30)

    def rewrite(self) -> Rewrite:
        return Rewrite(inline_mb=self.rewrite_mb, every_hours=self.rewrite_hours)


# Seconds a reply's versions settle before its reflection: long enough to read an answer and
# ask for another (a few seconds each on a GPU, up to a minute on a CPU model), short enough
# that the memory is written before the person is likely to be back.
SETTLE_SECONDS = 120.0


class ConversationSettings(_Section):
    """The answers to one message: "Another answer", and ◀ ▶ between them."""

    # Versions of one reply kept, the first answer included (the oldest not shown goes).
    versions: int = Field(_MEMORY.versions, ge=1, le=25)
    # Hours a reply's versions are kept; past it the one shown stays in the history.
    versions_hours: float = Field(_MEMORY.versions_hours, gt=0, le=24 * 30)
    # Seconds after the reply, and after each new answer or swipe, before what the memory learns
    # from the exchange is written (the person's next message here ends the wait at once).
    settle_seconds: float = Field(SETTLE_SECONDS, ge=0, le=86_400)


_PICTURE_MB = Intake.MAX_BYTES / (1024 * 1024)


class ImagesSettings(_Section):
    """Pictures people post (memory.pictures): shown to a chat model that sees images."""

    # Off: a picture is never fetched; the character is told its file name and size only.
    enabled: bool = True
    # Megabytes a picture may weigh to be read (Discord's own limit without Nitro is 10).
    max_mb: float = Field(_PICTURE_MB, gt=0, le=_PICTURE_MB)
    # Pictures of one message read and shown (the rest are named only).
    per_message: int = Field(Intake.PER_MESSAGE, ge=1, le=Intake.PER_MESSAGE)


class TerminalSettings(_Section):
    """The terminal chat (`echo-bot chat`, or `make run` without a Discord token)."""

    # The language of the dates its commands show (/why, /memories, /positions, /anchors):
    # "en" or "fr"; the rest of their text stays English.
    language: Language = "en"


class FollowupSettings(_Section):
    """Follow-ups (memory.followups): the character asking, once, how a dated event a person
    mentioned went. The person chooses with /followups; these are the operator's bounds."""

    # Whether any character may follow up at all (false: never, whatever people chose).
    enabled: bool = _FOLLOWUPS.enabled
    # For people who chose nothing: on everywhere (DMs too), or only in these servers (ids).
    on_by_default: bool = _FOLLOWUPS.default
    servers_on: list[int] = Field(default_factory=list)
    # The quiet hours, in the default character's time zone: none is sent from `quiet_from`
    # o'clock until `quiet_until` o'clock (across midnight when from > until; equal: none).
    quiet_from: int = Field(_FOLLOWUPS.quiet_from, ge=0, le=23)
    quiet_until: int = Field(_FOLLOWUPS.quiet_until, ge=0, le=23)

    def policy(self) -> Policy:
        """The section as the sender takes it."""
        return Policy(
            enabled=self.enabled,
            default=self.on_by_default,
            servers_on=frozenset(str(s) for s in self.servers_on),
            quiet_from=self.quiet_from,
            quiet_until=self.quiet_until,
        )


# A token anyone could guess in a few tries protects nothing.
MIN_WEB_TOKEN = 16


class WebSettings(_Section):
    """The operator's page (bot.web): off unless enabled; `echo-bot web` serves it anyway."""

    enabled: bool = False
    host: str = Field("127.0.0.1", min_length=1, max_length=253)
    # No LLM server's default (llama.cpp 8080, vLLM 8000, LM Studio 1234, Ollama 11434,
    # text-generation-webui 5000/7860, KoboldCpp 5001): the page must not take the model's.
    port: int = Field(8765, ge=1, le=65535)
    # Unset: one is generated, kept next to the database and printed once (loopback only).
    token: Key = None

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_WEB_TOKEN:
            raise ValueError(f"must be at least {MIN_WEB_TOKEN} characters; the token is not shown")
        return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ECHO_",
        env_nested_delimiter="__",
        secrets_nested_delimiter="__",
        secrets_prefix="",
        secrets_dir_missing="ok",
        extra="forbid",
        # A rejected value may be a secret: errors name the field, never the value.
        hide_input_in_errors=True,
    )

    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    character: CharacterSettings = Field(default_factory=CharacterSettings)
    # Several characters ([[characters]] tables); without any, [character] alone, key "default".
    # Both: [character] is one of them, key "default", first, and the default unless a table is.
    characters: tuple[CastSettings, ...] = ()
    # Whether `characters` is [character] alone (then read from it again: it may be changed).
    _alone: bool = PrivateAttr(False)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    followups: FollowupSettings = Field(default_factory=FollowupSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    images: ImagesSettings = Field(default_factory=ImagesSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The TOML file arrives as init arguments: the environment and secrets override it.
        return env_settings, NestedSecretsSettingsSource(file_secret_settings), init_settings

    @model_validator(mode="after")
    def _one_cast(self) -> Settings:
        if not self.characters:
            self._alone = True
            self.characters = self.tables()
            return self
        if self.character.model_fields_set:
            # [character] kept beside the tables: the character a config had before it got
            # several, with its key and so its memories; the default unless a table says so.
            if any(c.key == DEFAULT_KEY for c in self.characters):
                raise ValueError(
                    f"characters: the key {DEFAULT_KEY!r} is [character]'s; give that table "
                    "another key, or move [character]'s settings into it"
                )
            kept = CastSettings(
                **self.character.model_dump(exclude_unset=True),
                default=not any(c.default for c in self.characters),
            )
            self.characters = (kept, *self.characters)
        keys = [c.key for c in self.characters]
        if twice := sorted({k for k in keys if keys.count(k) > 1}):
            raise ValueError(f"characters: the key {twice[0]!r} names two characters")
        defaults = [c.key for c in self.characters if c.default]
        if len(defaults) > 1:
            raise ValueError(
                f"characters: {defaults[0]!r} and {defaults[1]!r} are both default = true "
                "(one plays in DMs and unlisted channels)"
            )
        return self

    @property
    def alone(self) -> bool:
        """Whether the one character is [character]'s (no [[characters]] tables)."""
        return self._alone

    def tables(self) -> tuple[CastSettings, ...]:
        """The characters, read now: [character] as it is, when it is the only one."""
        if not self._alone:
            return self.characters
        alone = CastSettings(**self.character.model_dump(exclude_unset=True), default=True)
        alone.model_fields_set.difference_update({"default"})
        return (alone,)

    @property
    def default_character(self) -> CastSettings:
        """The character of DMs and unlisted channels: the one marked default, else the first."""
        tables = self.tables()
        return next((c for c in tables if c.default), tables[0])

    def secrets(self) -> Secrets:
        """Every secret value the settings hold: none is logged, stored or shown."""
        held = (self.discord.token, self.llm.api_key, self.storage.password, self.web.token)
        # A server's password in its URL (http://user:password@host), sent as Basic auth.
        in_urls = (_url_password(self.llm.base_url), _url_password(self.llm.embeddings_url))
        return Secrets.of(*(s.get_secret_value() for s in held if s is not None), *in_urls)

    def memory_config(self) -> MemoryConfig:
        """The engine's read-path config, from [memory], [limits], [privacy], [conversation]
        and the chat deadline; every MemoryConfig field is set here (a test walks them)."""
        m, limits, talk = self.memory, self.limits, self.conversation
        return MemoryConfig(
            limit=m.memories_per_turn,
            semantic_slots=m.semantic_slots,
            conversation_slots=m.conversation_slots,
            threshold=m.cosine_threshold,
            relative_sd=m.relative_sd if m.eligibility == "relative" else None,
            cosine_floor=m.cosine_floor,
            quotas={Kind(k): v for k, v in m.quotas.items()},
            turn_embedding_timeout=m.turn_embedding_timeout,
            chat_deadline=self.llm.chat_timeout,
            turn_queue=limits.turn_queue,
            slow_down_interval=limits.slow_down_interval,
            max_reply_chars=limits.max_reply_chars,
            reflection_backlog=limits.reflection_backlog,
            memories_served=self.privacy.memories_served,
            cache_mb=limits.cache_mb,
            versions=talk.versions,
            versions_hours=talk.versions_hours,
        )


def _url_password(url: str) -> str | None:
    """The password a URL carries, as sent (its percent-escapes decoded)."""
    try:
        password = urlsplit(url).password
    except ValueError:  # not a URL the client could use either
        return None
    return None if password is None else unquote(password)


def load_settings(path: str | Path, *, secrets_dir: str | Path | None = None) -> Settings:
    """Load settings from the TOML file at `path`; raise ConfigError with a one-line reason."""
    path = Path(path)
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file (copy config.example.toml to {path} and edit it)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    try:
        settings = Settings(**data, _secrets_dir=str(secrets_dir) if secrets_dir else None)
    except ValidationError as exc:
        raise ConfigError(
            describe(exc, path, secrets_dir=secrets_dir, environ=os.environ)
        ) from None
    except SettingsError as exc:
        line = describe_source_error(
            exc, path, secrets_dir=secrets_dir, environ=os.environ, structured=_structured()
        )
        raise ConfigError(line) from None
    # A relative database path is relative to the config file, not to the current directory.
    if not settings.storage.path.is_absolute():
        settings.storage.path = path.parent / settings.storage.path
    card = settings.character.card
    if card is not None and not card.is_absolute():
        settings.character.card = path.parent / card
    for member in settings.characters:
        if member.card is not None and not member.card.is_absolute():
            member.card = path.parent / member.card
    return settings


def token_source(
    path: str | Path, *, secrets_dir: str | Path | None, environ: Mapping[str, str]
) -> str:
    """Say where the Discord token was read from, in load_settings' order of priority."""
    # pydantic-settings matches environment names regardless of case.
    if any(name.upper() == "ECHO_DISCORD__TOKEN" for name in environ):
        return "ECHO_DISCORD__TOKEN"
    if secrets_dir is not None and (Path(secrets_dir) / "discord__token").is_file():
        return f"the secret file {Path(secrets_dir) / 'discord__token'}"
    return f"[discord] token in {path}"


def value_source(
    settings: Settings,
    path: str | Path,
    section: str,
    key: str,
    *,
    secrets_dir: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Say where a setting's value came from, in load_settings' order of priority: its ECHO_*
    variable, its secret file, the TOML file, or the default."""
    environ = os.environ if environ is None else environ
    names = {name.upper() for name in environ}
    for name in (f"ECHO_{section}__{key}".upper(), f"ECHO_{section}".upper()):
        if name in names:
            return name
    secret = Path(secrets_dir) / f"{section}__{key}" if secrets_dir is not None else None
    if secret is not None and secret.is_file():
        return f"the secret file {secret}"
    if key in getattr(settings, section).model_fields_set:
        return f"[{section}] {key} in {path}"
    return f"the default of [{section}] {key}"


def _structured() -> dict[str, frozenset[str]]:
    """Each section's keys that hold a list or a table (read as JSON from the environment)."""
    found = {}
    for section, info in Settings.model_fields.items():
        if section == "characters":  # a list of tables: read whole, as JSON
            continue
        model = cast(type[BaseModel], info.annotation)
        found[section] = frozenset(
            key
            for key, field in model.model_fields.items()
            if get_origin(field.annotation) in (list, dict)
        )
    return found


ENV_PREFIX = "ECHO_"
NESTING = "__"

# Keys that moved, (section, key) -> (section, key): the old key is refused with its new place.
# [llm] num_ctx became [context] context_length when the context budget got its own section.
RENAMED: Mapping[tuple[str, str], tuple[str, str]] = {
    ("llm", "num_ctx"): ("context", "context_length"),
}


def env_name(loc: Sequence[str]) -> str:
    """The environment variable that sets the setting at `loc`."""
    return ENV_PREFIX + NESTING.join(loc).upper()


def _from_env(loc: Sequence[str], environ: Mapping[str, str]) -> str | None:
    # pydantic-settings matches names regardless of case; the longest match set the value
    # (ECHO_MEMORY__QUOTAS for an error inside the quotas, ECHO_MEMORY for the whole section).
    by_upper = {name.upper(): name for name in environ}
    for n in range(len(loc), 0, -1):
        found = by_upper.get(env_name(loc[:n]))
        if found is not None:
            return found
    return None


def _from_secret(loc: Sequence[str], secrets_dir: str | Path | None) -> Path | None:
    if secrets_dir is None:
        return None
    for n in range(len(loc), 0, -1):
        candidate = Path(secrets_dir) / NESTING.join(loc[:n])
        if candidate.is_file():
            return candidate
    return None


def _renamed(loc: Sequence[str]) -> tuple[str, str] | None:
    return RENAMED.get((loc[0], loc[1])) if len(loc) == 2 else None


def describe(
    exc: ValidationError,
    path: Path,
    *,
    secrets_dir: str | Path | None,
    environ: Mapping[str, str],
) -> str:
    """One line for every refused value, each blamed on its variable, secret file or file."""
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        field = ".".join(loc) or "(top level)"
        variable = _from_env(loc, environ)
        secret = None if variable else _from_secret(loc, secrets_dir)
        moved = _renamed(loc) if error["type"] == "extra_forbidden" else None
        if variable is not None and moved is not None:
            parts.append(f"{variable} was renamed {env_name(moved)}")
        elif variable is not None:
            unknown = error["type"] == "extra_forbidden"
            parts.append(f"{variable}: " + ("no such setting" if unknown else error["msg"]))
        elif secret is not None:
            parts.append(f"the secret file {secret}: {error['msg']}")
        elif moved is not None:
            parts.append(f"{path}: [{loc[0]}] {loc[1]} is now [{moved[0]}] {moved[1]}")
        elif error["type"] == "extra_forbidden":
            parts.append(f"{path}: unknown setting {field!r}")
        elif not loc:  # a check across sections: its message names the settings
            parts.append(f"{path}: {error['msg'].removeprefix('Value error, ')}")
        else:
            parts.append(f"{path}: {field}: {error['msg']}{_also_set(loc, environ)}")
    return "; ".join(parts)


def _also_set(loc: Sequence[str], environ: Mapping[str, str]) -> str:
    # A check across keys (context_length against response_tokens) may mix the file and the
    # environment: say which variables took part.
    prefix = env_name(loc) + NESTING if loc else ENV_PREFIX
    names = sorted(name for name in environ if name.upper().startswith(prefix))
    return f" (with {', '.join(names)} set)" if names else ""


_SOURCE_ERROR = re.compile(r'field "(?P<field>\w+)" from source "(?P<source>\w+)"')


def describe_source_error(
    exc: SettingsError,
    path: Path,
    *,
    secrets_dir: str | Path | None,
    environ: Mapping[str, str],
    structured: Mapping[str, frozenset[str]],
) -> str:
    """One line for a value pydantic-settings could not decode (a list or table not in JSON);
    `structured` gives each section's keys that hold a list or a table."""
    found = _SOURCE_ERROR.search(str(exc))
    if found is None:
        return f"{path}: {exc}"
    section = found["field"]
    if found["source"].startswith("Env"):
        # Only a whole section, or a list or table key, is read as JSON.
        wanted = {env_name([section])} | {
            env_name([section, key]) for key in structured.get(section, ())
        }
        names = sorted(n for n in environ if n.upper() in wanted and not _is_json(environ[n]))
        where = ", ".join(names) or env_name([section])
    else:
        where = f"a secret file for [{section}] in {secrets_dir}"
    return f"{where}: not valid JSON (a list or a table is written in JSON there: [1, 2])"


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True
