"""What `echo-bot doctor` checks, one line each with its fix: the database, the chat and
embedding models, the context the chat server takes against [context] context_length, the
calibration (also `echo-bot calibrate`), the context strategies, the structured-output mode,
the route to Discord.

Apart from bot/cli.py, which parses the command line and runs each command, because these
checks reach outside (the database, the model servers, Discord) and say what to do about each
answer; the command line only prints their lines.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from bot import files
from bot.config import ConfigError, Settings, token_source, value_source
from bot.runtime import (
    backends,
    character_lines,
    strategies,
    structured_output,
    with_prefixes,
)
from memory import (
    BackendError,
    EchoError,
    LanguageReport,
    Secrets,
    calibrate,
    now_line,
    ollama_health,
    open_store,
    save_calibration,
)
from memory.manage import setup

log = logging.getLogger(__name__)

# A doctor line is OK, FAIL (the exit code is 1) or WARN: it may work, and the fix is given.
_MARKS: dict[bool | None, str] = {True: "OK  ", False: "FAIL", None: "WARN"}
# How long doctor waits for Discord's API: it answers within a second from anywhere it is
# reachable; a black-holed route would otherwise hold doctor for the OS's connect timeout.
DISCORD_DEADLINE = 5.0


async def doctor(
    settings: Settings,
    config_path: str,
    *,
    secrets_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Check each thing the bot needs; print one line each, OK or the fix (calibration too).
    It only reads: the database is left as found. A fault is said once: what depends on a
    server that does not answer is not checked, and each fix names where the value came from
    (the config file, an ECHO_* variable, a secret file, the default)."""

    def source(key: str) -> str:
        return value_source(
            settings,
            config_path,
            "llm",
            key,
            secrets_dir=secrets_dir,
            environ=os.environ if environ is None else environ,
        )

    results: list[tuple[bool | None, str]] = [(True, f"config {config_path} is valid")]
    try:
        results += [(True, line) for line in character_lines(settings, config_path)]
    except ConfigError as exc:
        results.append((False, f"{exc} → fix or unset the card"))
    results.append((True, _zone_line(settings, config_path)))
    database = await _check_database(settings.storage.database, settings)
    results.append(database)
    if database[0] is True:
        results.extend(await _learned_lines(settings.storage.database, settings))
    llm = settings.llm
    embedding_key = "embedding_base_url" if llm.embedding_base_url else "base_url"
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as http:
        chat = await _check_model(
            http,
            llm.backend,
            "chat",
            llm.base_url,
            llm.chat_model,
            where=source("base_url"),
            named=source("chat_model"),
        )
        results.append(chat.line)
        if chat.reached:
            learned = await _learned(settings.storage.database, settings)
            results.append(await _context_line(settings, http, learned.context))
            results.append(await _vision_line(settings, http, learned.sight))
        if chat.reached or llm.embeddings_url != llm.base_url:
            embedding = await _check_model(
                http,
                llm.backend,
                "embedding",
                llm.embeddings_url,
                llm.embedding_model,
                where=source(embedding_key),
                named=source("embedding_model"),
            )
            results.append(embedding.line)
        else:
            embedding = chat  # the same server, already said to be unreachable
        if embedding.line[0] is not False:
            results.extend(await calibration(settings, http, checking=True))
        if chat.line[0] is not False:
            # A model that is missing or a server that is down is the fault: a probe of its
            # structured output could only fail, or succeed on another model.
            structured: tuple[bool, str] | None = await structured_output(settings, http)
        else:
            structured = None
    try:
        registry = strategies(settings)
        results.append((True, f"context strategies: {', '.join(registry.names())}"))
        results.extend((False, f"strategy plugin {error}") for error in registry.errors)
    except ConfigError as exc:
        results.append((False, str(exc)))
    if structured is not None:
        results.append(structured)
    if settings.discord.token is None:
        # No token is a working setup (`run` starts the terminal chat), not a failure.
        results.append(
            (
                None,
                "Discord token not set: `run` starts the terminal chat → set "
                "ECHO_DISCORD__TOKEN for Discord",
            )
        )
    else:
        read_from = token_source(
            config_path,
            secrets_dir=secrets_dir,
            environ=os.environ if environ is None else environ,
        )
        token = settings.discord.token.get_secret_value()
        results.append(await _check_discord(settings.discord.api_url, token, read_from))
    secrets = settings.secrets()
    for status, line in results:
        # Its lines name the servers as configured: a user:password in a URL is not shown,
        # nor a key a server quoted back.
        print(f"{_MARKS[status]} {secrets.redact(line)}")
    return 0 if all(status is not False for status, _ in results) else 1


def _zone_line(settings: Settings, config_path: str) -> str:
    """The character's time zone, where it came from, and what its prompt says now."""
    if settings.default_character.timezone is None:
        where = "the machine's ([character] timezone unset)"
    else:
        where = value_source(settings, config_path, "character", "timezone")
    c = settings.default_character
    return f"time zone from {where}: {now_line(time.time(), c.zone(), c.language)}"


async def _check_database(path: Path | str, settings: Settings) -> tuple[bool | None, str]:
    """Open the database as it is: a check neither creates one nor migrates it."""
    if isinstance(path, Path) and not files.database_exists(path):
        folder = next(p for p in path.absolute().parents if p.exists())
        if os.access(folder, os.W_OK | os.X_OK):
            return None, f"database {path} does not exist yet → `echo-bot run` or `chat` creates it"
        return (
            False,
            f"database {path} does not exist, and {folder} is not writable → "
            "choose another [storage] path or fix the permissions",
        )
    try:
        password = settings.storage.database_password()
        async with await open_store(path, migrate_to=0, password=password) as store:
            await store.check_writable()
    except (EchoError, OSError) as exc:
        fix = (
            "check the path and its permissions ([storage] path)"
            if isinstance(path, Path)
            else "check the server, the URL and ECHO_STORAGE__PASSWORD ([storage] url)"
        )
        return False, f"database {path}: {exc} → {fix}"
    return True, f"database {path} is writable"


async def _learned_lines(path: Path | str, settings: Settings) -> list[tuple[bool | None, str]]:
    """What the bot learned of its chat server that changes how it is used (read only)."""
    llm = settings.llm
    try:
        password = settings.storage.database_password()
        async with await open_store(path, migrate_to=0, password=password) as store:
            if await store.schema_version() < setup.ONE_AT_A_TIME_SCHEMA:
                return []  # an older schema: nothing of this learned yet
            alone = await setup.one_at_a_time(store, llm.base_url, llm.chat_model)
    except (EchoError, OSError):  # said by the database line already
        return []
    if not alone:
        return []
    return [
        (
            None,
            (
                f"chat server {llm.base_url} ({llm.chat_model}) takes one request at a time "
                "(learned: it stopped a reply when another request came); Écho sends it one at a "
                "time, the replies first → with llama-cpp-python's server, --interrupt_requests "
                "false lets it queue them"
            ),
        )
    ]


@dataclass(frozen=True)
class _Learned:
    """What the bot learned of its chat server and kept in the database: the context it takes,
    and whether its model sees images (None: not learned, or no database yet)."""

    context: tuple[int, str] | None = None
    sight: bool | None = None


async def _learned(path: Path | str, settings: Settings) -> _Learned:
    """What the bot learned of its chat server, from the database (read only, opened once)."""
    llm = settings.llm
    try:
        password = settings.storage.database_password()
        if isinstance(path, Path) and not files.database_exists(path):
            return _Learned()
        async with await open_store(path, migrate_to=0, password=password) as store:
            version = await store.schema_version()
            context = sight = None
            if version >= setup.CONTEXT_SCHEMA:
                context = await setup.learned_context(store, llm.base_url, llm.chat_model)
            if version >= setup.VISION_SCHEMA:
                sight = await setup.learned_sight(store, llm.base_url, llm.chat_model)
            return _Learned(context, sight)
    except (EchoError, OSError):  # said by the database line already
        return _Learned()


async def _vision_line(
    settings: Settings, http: httpx.AsyncClient, learned: bool | None
) -> tuple[bool | None, str]:
    """Whether the chat model sees the pictures people post: as the server says, or as the bot
    learned it from the first picture it sent."""
    llm = settings.llm
    where = f"chat model {llm.chat_model}"
    if not settings.images.enabled:
        return None, f"{where}: pictures are off ([images] enabled = false): only named to it"
    key = llm.api_key.get_secret_value() if llm.api_key else None
    try:
        said = await setup.server_sight(
            http, llm.backend, llm.base_url, llm.chat_model, api_key=key, secrets=settings.secrets()
        )
    except BackendError as exc:
        said, how = None, f"not asked ({exc})"
    else:
        how = "the server says so"
    if said is None and learned is not None:
        said, how = learned, "learned from the first picture sent"
    if said is True:
        return True, f"{where} sees images ({how}): pictures posted are shown to it"
    if said is False:
        return None, (
            f"{where} does not see images ({how}): it is told a picture's name and size only "
            "→ for pictures, use a vision model (docs/operating.md#pictures)"
        )
    return None, (
        f"{where}: the server does not say whether it sees images; learned from the first "
        "picture posted (see docs/operating.md#pictures)"
    )


async def _context_line(
    settings: Settings, http: httpx.AsyncClient, learned: tuple[int, str] | None
) -> tuple[bool | None, str]:
    """The context the chat server says it takes (or the bot learned from its refusal), and
    a warning with the value to set when [context] context_length is larger."""
    llm, configured = settings.llm, settings.context.context_length
    where = f"chat server {llm.base_url} ({llm.chat_model})"
    key = llm.api_key.get_secret_value() if llm.api_key else None
    try:
        said = await setup.server_context(
            http, llm.backend, llm.base_url, llm.chat_model, api_key=key, secrets=settings.secrets()
        )
    except BackendError as exc:
        return None, f"{where}: its context could not be asked ({exc})"
    if said is not None:
        size, how = said, "it says so"
    elif learned is not None:
        size, how = learned[0], "learned when it refused a longer prompt"
    else:
        return None, (
            f"{where} does not say its context (llama-cpp-python's server does not): a prompt "
            f"over it is refused, then Écho keeps within it → make sure the server was started "
            f"with a context of at least [context] context_length = {configured} (--n_ctx), or "
            "set context_length to the server's"
        )
    if configured <= size:
        return True, (
            f"{where} takes {size:,} tokens of context ({how}); [context] context_length "
            f"{configured:,} fits"
        )
    return None, (
        f"{where} takes {size:,} tokens of context ({how}), fewer than [context] "
        f"context_length = {configured:,}: Écho keeps its prompts and replies within "
        f"{size:,} → set [context] context_length = {size}, or start the server with a "
        "larger context"
    )


async def _check_discord(api_url: str, token: str, read_from: str) -> tuple[bool | None, str]:
    """Ask Discord who the token belongs to, as `run` does first: a token Discord refuses is a
    FAIL here rather than at the bot's start. The token is in the request only; the line is
    redacted by the caller, a server quoting the token back included."""
    url = api_url.rstrip("/") + "/users/@me"
    try:
        # trust_env=False: discord.py's aiohttp ignores HTTPS_PROXY, so the test does too.
        timeout = httpx.Timeout(DISCORD_DEADLINE)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as http:
            response = await http.get(url, headers={"Authorization": f"Bot {token}"})
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        return False, (
            f"Discord API {api_url} unreachable ({reason}) → check the network, DNS "
            "and firewall; `run` retries until it answers (the token is not checked)"
        )
    status = response.status_code
    if status == 401:
        return False, (
            f"Discord refuses this token (read from {read_from}) → reset it in the Developer "
            f"Portal, Bot page, and put the new one in {read_from}"
        )
    if status >= 500:
        return None, (
            f"Discord API {api_url} answered {status}: the token is not checked → Discord may "
            "be down; `run` retries until it answers"
        )
    bot = _bot_user(response, token) if status == 200 else None
    if bot is None:
        return None, (
            f"Discord API {api_url} answered {status} to /users/@me: the token is not checked "
            "→ is [discord] api_url Discord's API (or a proxy in front of it)?"
        )
    return True, f"Discord accepts the token: the bot is {bot} at {api_url}"


# Discord's user names are at most 32 characters; a longer one is cut, not trusted.
_NAME_CHARS = 32


def _bot_user(response: httpx.Response, token: str) -> str | None:
    """The bot's user name and id from /users/@me, made one plain line (None: not a user)."""
    try:
        user = response.json()
    except ValueError:
        return None
    if not isinstance(user, dict) or not str(user.get("id", "")).isdigit():
        return None
    # Printed on the operator's terminal: no control character or line break from the server,
    # and the token taken out before the name is cut (a part of it would escape redaction).
    name = Secrets.of(token).remove(str(user.get("username", "")))
    name = " ".join("".join(c if c.isprintable() else " " for c in name).split())
    return f"{name[:_NAME_CHARS]} (id {user['id']})"


async def calibration(
    settings: Settings, http: httpx.AsyncClient, *, checking: bool = False
) -> list[tuple[bool, str]]:
    """Embed the built-in probes; one line per language, fit or not, and the fix if any. The
    verdict is saved in the database, unless `checking` (doctor, which only reads)."""
    _, raw = backends(settings, http)
    embedder = with_prefixes(settings, raw)
    try:
        reports = await calibrate(embedder)
    except BackendError as exc:
        return [(False, f"calibration skipped: the embedding backend failed ({exc})")]
    path, password = settings.storage.database, settings.storage.database_password()
    try:
        if not checking:
            async with await open_store(path, password=password) as store:
                await save_calibration(store, embedder.model, reports, now=time.time())
    except EchoError as exc:
        log.warning("calibration not saved: %s", exc)
    checked = [(r.fit, r.line(embedder.model)) for r in reports]
    unfit = [r.language for r in reports if not r.fit]
    if unfit:
        checked.append((False, _calibration_fix(embedder.model, reports)))
    return checked


def _calibration_fix(model: str, reports: list[LanguageReport]) -> str:
    """What to do about the languages the model does not separate."""
    unfit = [r.language for r in reports if not r.fit]
    said = f"→ {model} is unfit for {', '.join(unfit)}: memory recalls by keywords only there; "
    english = next((r for r in reports if r.language == "en"), None)
    if english is not None and english.fit and all(r.fit == (r is english) for r in reports):
        return said + "prefer a multilingual embedding model ([llm] embedding_model)"
    # The model reads a language other than English, or none: a multilingual model is no fix.
    return said + (
        "check its task prefixes ([llm] query_prefix, document_prefix) or choose another "
        "embedding model ([llm] embedding_model)"
    )


@dataclass(frozen=True, slots=True)
class _ModelCheck:
    line: tuple[bool | None, str]
    reached: bool  # the server answered


async def _check_model(
    http: httpx.AsyncClient,
    backend: str,
    label: str,
    url: str,
    model: str,
    *,
    where: str,
    named: str,
) -> _ModelCheck:
    """The model's line; `where` and `named` say where the URL and the model name came from."""
    try:
        if backend == "ollama":
            models = await ollama_health(http, url, deadline=10.0)
        else:
            response = await http.get(url.rstrip("/") + "/v1/models")
            response.raise_for_status()
            models = [str(m.get("id")) for m in response.json().get("data", [])]
    except (BackendError, httpx.HTTPError, ValueError) as exc:
        server = (
            "Ollama installed and running (README, Set up)"
            if backend == "ollama"
            else ("the server running")
        )
        return _ModelCheck(
            (
                False,
                (
                    f"{label} backend {url} unreachable ({exc}) → is {server}? (the address is "
                    f"from {where})"
                ),
            ),
            reached=False,
        )
    return _ModelCheck(_model_line(backend, label, url, model, models, named), reached=True)


def _model_line(
    backend: str, label: str, url: str, model: str, models: list[str], named: str
) -> tuple[bool | None, str]:
    names = {m.split(":")[0] for m in models} | set(models)
    if model in names or model.split(":")[0] in names:
        return True, f"{label} model {model} is available at {url}"
    if backend == "ollama":
        return False, (
            f"{label} model {model} (from {named}) is missing at {url} → ollama pull {model}"
        )
    if not models:
        return False, f"{label} model {model}: the server at {url} lists no model → load one"
    listed = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
    setting = f'[llm] {label}_model = "{models[0]}"'
    if any(_is_model_file(m) for m in models):
        # llama.cpp's servers (llama-server, llama-cpp-python) list the file they were started
        # with and answer to any model name: the name may work, but cannot be checked here.
        return None, (
            f"{label} model {model} is not listed at {url}, which lists {listed} (servers such "
            f"as llama-cpp-python answer to any name) → to match, set {setting}"
        )
    return False, (
        f"{label} model {model} (from {named}) is missing at {url}, which lists {listed} → "
        f"load it in the server, or set {setting}"
    )


def _is_model_file(model_id: str) -> bool:
    """Tell whether a listed model id is a file path (a GGUF file, an absolute path)."""
    return model_id.lower().endswith((".gguf", ".bin")) or model_id.startswith(
        ("/", "./", "../", "~")
    )
