"""Build the engine and its resources from the settings; shared by the bot and the terminal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

import memory
from bot import heartbeat, logs
from bot.config import CastSettings, CharacterSettings, ConfigError, Settings, value_source
from memory import (
    DEFAULT_KEY,
    BackendError,
    Card,
    CardError,
    Character,
    Characters,
    ChatBackend,
    ContextConfig,
    Echo,
    Embedder,
    Mode,
    Negotiator,
    Options,
    Registry,
    Server,
    load_card,
    load_registry,
    valid_name,
)
from memory.manage import setup
from memory.manage.followups import Deliverer


@dataclass
class Runtime:
    """Everything a front end (Discord or terminal) talks to: the memory, opened from the
    settings (memory.open), and the settings themselves."""

    settings: Settings
    echo: Echo

    @property
    def store(self) -> memory.Store:
        return self.echo.store

    @property
    def http(self) -> httpx.AsyncClient:
        return self.echo.http

    @property
    def chat(self) -> ChatBackend:
        return self.echo.chat

    @property
    def embedder(self) -> Embedder:
        return self.echo.embedder

    @property
    def engine(self) -> memory.Engine:
        return self.echo.engine

    @property
    def worker(self) -> memory.ReflectionWorker:
        return self.echo.worker

    @property
    def indexer(self) -> memory.Indexer:
        return self.echo.indexer

    @property
    def intake(self) -> memory.Intake:
        """Reads the pictures posted with a message, within their bounds."""
        return self.echo.intake

    @property
    def secrets(self) -> memory.Secrets:
        """What no answer, log line or stored error holds (the settings' keys, tokens, password)."""
        return self.echo.secrets

    @property
    def characters(self) -> Characters:
        """The characters it plays, and where each plays."""
        return self.echo.characters


def server(settings: Settings) -> Server:
    """The [llm] section as the memory takes it."""
    llm = settings.llm
    return Server(
        base_url=llm.base_url,
        chat_model=llm.chat_model,
        embedding_model=llm.embedding_model,
        backend=llm.backend,
        embeddings_url=llm.embeddings_url,
        api_key=llm.api_key.get_secret_value() if llm.api_key else None,
        context_length=settings.context.context_length,
        structured_output=override(settings),
        query_prefix=llm.query_prefix,
        document_prefix=llm.document_prefix,
        reflection_timeout=llm.reflection_timeout,
        max_concurrent_chats=settings.limits.max_concurrent_chats,
    )


def backends(
    settings: Settings, http: httpx.AsyncClient, modes: Negotiator | None = None
) -> tuple[ChatBackend, Embedder]:
    """Return the chat backend and the embedder the settings name."""
    return memory.server_backends(server(settings), http, modes, secrets=settings.secrets())


def override(settings: Settings) -> Mode | None:
    """The structured-output mode `[llm] structured_output` imposes (None: auto, learned)."""
    chosen = settings.llm.structured_output
    return None if chosen == "auto" else Mode(chosen)


def played_as(settings: Settings, cast: CharacterSettings | None = None) -> str | None:
    """The name a card is played under: the character's table's, when it sets one."""
    c = cast or settings.default_character
    return c.name if "name" in c.model_fields_set else None


# What `doctor` sends to learn the structured-output mode: a server judges response_format and
# builds its grammar before it writes a token, so a short probe answers as a reflection would.
_PROBE = (
    {"role": "system", "content": "Answer with JSON only."},
    {"role": "user", "content": "Nothing happened today."},
)
_PROBE_TOKENS = 8


async def structured_output(settings: Settings, http: httpx.AsyncClient) -> tuple[bool, str]:
    """Learn or check the chat server's structured-output mode, saved nowhere (the bot learns
    it again at its first reflection, and keeps it); one line for `doctor`, and whether the
    mode works."""
    return await _probe(settings, http, Negotiator(override=override(settings)))


async def _probe(
    settings: Settings, http: httpx.AsyncClient, modes: Negotiator
) -> tuple[bool, str]:
    llm = settings.llm
    chat, _ = backends(settings, http, modes)
    where = f"structured output at {llm.base_url} ({llm.chat_model})"
    try:
        await chat.chat(
            _PROBE,
            schema=setup.reflection_schema(),
            deadline=llm.reflection_timeout,
            max_tokens=_PROBE_TOKENS,
        )
    except BackendError as exc:
        fix = (
            'try [llm] structured_output = "auto"'
            if modes.override
            else "is the chat server running, with this model?"
        )
        return False, f"{where}: {exc} → {fix}"
    mode = modes.mode(llm.base_url, llm.chat_model)
    source = "set in [llm] structured_output" if modes.override else "learned from the server"
    refused = "".join(
        f"; {m} refused: {detail}"
        for m, detail in modes.refusals(llm.base_url, llm.chat_model).items()
    )
    note = " (the schema is in the prompt)" if mode in (Mode.JSON_OBJECT, Mode.NONE) else ""
    return True, f"{where}: {mode}{note} ({source}{refused})"


def _setting(settings: Settings, cast: CharacterSettings | None) -> str:
    """The setting a character's table is (for errors): [character] or characters[i]."""
    if settings.alone or not isinstance(cast, CastSettings) or cast not in settings.characters:
        return "character"
    return f"characters[{settings.characters.index(cast)}]"


def configured_card(settings: Settings, cast: CharacterSettings | None = None) -> Card | None:
    """A character's card (the default one's unless `cast` names another), read; ConfigError
    says what is wrong with it."""
    c = cast or settings.default_character
    if c.card is None:
        return None
    try:
        return load_card(c.card, played_as=played_as(settings, c))
    except CardError as exc:
        raise ConfigError(f"{_setting(settings, c)}.card: {exc}") from None


def character(
    settings: Settings, card: Card | None = None, cast: CharacterSettings | None = None
) -> Character:
    """A character (the default one unless `cast` names another): its table, completed by the
    card where the table is silent (the table wins where both say something)."""
    c = cast or settings.default_character
    key = c.key if isinstance(c, CastSettings) else DEFAULT_KEY
    if card is None:
        return Character(
            name=valid_name(c.name),
            persona=c.persona,
            rules=tuple(c.rules),
            zone=c.zone(),
            language=c.language,
            key=key,
            adult=c.adult is True,
            followups=c.followups,
        )
    given = c.model_fields_set
    return Character(
        name=valid_name(c.name) if "name" in given else card.name,
        persona=c.persona if "persona" in given else card.persona,
        rules=tuple(c.rules),
        system=card.system,
        post_history=card.post_history,
        examples=card.examples,
        greetings=card.greetings,
        zone=c.zone(),
        language=c.language,
        key=key,
        avatar=card.picture,
        adult=card.adult if c.adult == "auto" else c.adult,
        followups=c.followups,
    )


def cast(settings: Settings) -> tuple[Characters, list[Card]]:
    """Every configured character, read (their cards too); ConfigError names a bad card."""
    built, cards = [], []
    tables = settings.tables()
    for c in tables:
        card = configured_card(settings, c)
        built.append(character(settings, card, c))
        if card is not None:
            cards.append(card)
    # A channel several characters list is a scene: the first listed is its default.
    channels: dict[int, str] = {}
    for c in tables:
        for channel in c.channels:
            channels.setdefault(channel, c.key)
    return (
        Characters(
            built,
            default=settings.default_character.key,
            channels=channels,
            shared=settings.memory.shared_between_characters,
        ),
        cards,
    )


def _adult_note(
    settings: Settings, playing: Character, card: Card | None, c: CharacterSettings
) -> str:
    """What describe_character adds of a character for adults: where it plays, and why."""
    if not playing.adult:
        return ""
    why = "its card's tags" if c.adult == "auto" and card is not None else "adult = true"
    dms = "and DMs" if settings.discord.adult_in_dms else "not in DMs"
    return f"; for adults ({why}): plays only in age-restricted channels, {dms}"


def describe_character(
    settings: Settings,
    card: Card | None,
    config_path: str | Path,
    cast: CharacterSettings | None = None,
) -> str:
    """One line: the character that will play, and where its name and persona come from."""
    c = cast or settings.default_character
    playing = character(settings, card, c)
    given = c.model_fields_set
    card_file = c.card.name if c.card else ""
    section = _setting(settings, c)

    def source(key: str) -> str:
        if key in given and section == "character":
            return value_source(settings, config_path, "character", key)
        if key in given:
            return f"[[characters]] {key} in {config_path}"
        return f"the card {card_file}" if card is not None else "the default (no card)"

    line = (
        f"Character {playing.name!r}: name from {source('name')}, persona from {source('persona')}"
    ) + _adult_note(settings, playing, card, c)
    if card is None:
        return line
    parts = [
        label
        for label, text in (
            ("system prompt", card.system),
            ("post-history instructions", card.post_history),
            ("greetings", "".join(card.greetings)),
            ("example dialogue", card.examples),
            ("lorebook", "x" if card.lore else ""),
        )
        if text
    ]
    if parts:
        line += f"; {', '.join(parts)} from the card {card_file}"
    if "name" in given and card.name != playing.name:
        line += f" (the card's own name, {card.name!r}, is not used)"
    return line


def character_lines(settings: Settings, config_path: str | Path) -> list[str]:
    """What check-config and doctor say of the characters: each one, where its name and
    persona come from, and (several) where each plays."""
    lines = [
        describe_character(settings, configured_card(settings, c), config_path, c)
        for c in settings.tables()
    ]
    if len(settings.characters) > 1:
        lines += cast(settings)[0].describe()
    return lines


def followups_line(settings: Settings) -> str:
    """What check-config says of follow-ups: allowed or not, for whom by default, the quiet
    hours and their time zone, and the characters that never follow up."""
    f = settings.followups
    if not f.enabled:
        return "Follow-ups: never ([followups] enabled = false)"
    if f.on_by_default:
        default = "on for people who chose nothing"
    elif f.servers_on:
        servers = ", ".join(str(s) for s in f.servers_on)
        default = f"off for people who chose nothing, except in servers {servers}"
    else:
        default = "off until a person turns them on (/followups on)"
    zone = settings.default_character.zone()
    if f.quiet_from == f.quiet_until:
        quiet = "no quiet hours"
    else:
        name = getattr(zone, "key", None) or str(zone)
        quiet = f"none sent {f.quiet_from:02d}:00-{f.quiet_until:02d}:00 ({name})"
    line = f"Follow-ups: allowed, {default}; {quiet}"
    silent = [c.key for c in settings.tables() if not c.followups]
    if silent:
        line += f"; never by {', '.join(repr(k) for k in silent)} (followups = false)"
    return line


def with_prefixes(settings: Settings, embedder: Embedder) -> memory.Prefixed:
    """The embedder with its task prefixes: [llm] query_prefix and document_prefix, each one
    left unset taken from the model's family."""
    return memory.with_prefixes(server(settings), embedder)


def context_config(settings: Settings, *cards: Card | None) -> ContextConfig:
    """The [context] section, with the cards' lorebook budgets where they give one."""
    budgets = {c.source: c.lore_budget for c in cards if c and c.lore_budget}
    return settings.context.engine_config(budgets)


def strategies(settings: Settings) -> Registry:
    """The context strategies, built in and plugged in; the configured one must be among them."""
    registry = load_registry()
    if settings.context.strategy not in registry.strategies:
        raise ConfigError(
            f"context.strategy: no strategy {settings.context.strategy!r} "
            f"(available: {', '.join(registry.names())})"
        )
    return registry


def options(settings: Settings) -> Options:
    """The settings as the memory is opened with them; ConfigError names a bad card or an
    unknown context strategy."""
    registry = strategies(settings)
    characters, cards = cast(settings)
    return Options(
        database=settings.storage.database,
        password=settings.storage.database_password(),
        server=server(settings),
        characters=characters,
        cards=cards,
        memory=settings.memory_config(),
        context=context_config(settings, *cards),
        strategies=registry,
        # [character] timezone: where "yesterday" is read, the prompt's day is said.
        zone=settings.default_character.zone(),
        # [conversation] settle_seconds: a reply's answers settle before it is reflected.
        settle=settings.conversation.settle_seconds,
        secrets=settings.secrets(),
        # [followups]: whether characters follow up, the default, the quiet hours.
        followups=settings.followups.policy(),
        reindex_every=settings.memory.reindex_interval,
        history_days=settings.privacy.history_days,
        # [privacy] rewrite_mb, rewrite_hours: when an erasure rewrites an SQLite file.
        rewrite=settings.privacy.rewrite(),
        # [images] enabled: pictures shown to a model that sees them, or only named.
        pictures=settings.images.enabled,
    )


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Open the memory as the settings say, with the logs redacted and the heartbeat beating;
    close everything on exit."""
    opened = options(settings)
    async with (
        logs.redacting(opened.secrets),
        memory.open(opened) as echo,
        heartbeat.beating(heartbeat.path_for(settings.storage.path, settings.discord.file_tag)),
    ):
        yield Runtime(settings, echo)


def listed_jobs(runtime: Runtime, deliver: Deliverer | None = None) -> tuple[memory.jobs.Job, ...]:
    """The memory's background jobs (memory.jobs), timed as the settings say; the follow-ups'
    only with a front end's `deliver` to post them through."""
    return runtime.echo.jobs(deliver)


def start_jobs(runtime: Runtime, deliver: Deliverer | None = None) -> memory.jobs.Background:
    """Start every background job in the running loop; the caller ends them with `stop`. Both
    front ends start theirs here (the Discord bot with its way of posting follow-ups)."""
    return runtime.echo.start_jobs(deliver)
