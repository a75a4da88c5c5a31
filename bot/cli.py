"""The `echo-bot` command line: run | chat | sync | doctor | reindex | calibrate | export |
import | card show/import | check-config."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import io
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from bot import files, logs, render
from bot.config import ConfigError, Settings, load_settings, token_source
from bot.runtime import (
    Runtime,
    backends,
    open_runtime,
    played_as,
    strategies,
    structured_output,
    with_prefixes,
)
from bot.terminal import Terminal, is_interactive, terminal_user_id
from memory import manage_context, manage_export
from memory.cards import load_card
from memory.errors import BackendError, EchoError
from memory.llm import ollama_health
from memory.manage_setup import Store
from memory.read.calibrate import LanguageReport, calibrate
from memory.read.calibrate import save as save_calibration
from memory.redact import redact

log = logging.getLogger(__name__)

DEFAULT_SECRETS_DIR = Path("/run/secrets")
# A doctor line is OK, FAIL (the exit code is 1) or WARN: it may work, and the fix is given.
_MARKS: dict[bool | None, str] = {True: "OK  ", False: "FAIL", None: "WARN"}
# How long doctor waits for Discord's API: it answers within a second from anywhere it is
# reachable; a black-holed route would otherwise hold doctor for the OS's connect timeout.
DISCORD_DEADLINE = 5.0
NO_TOKEN = "no Discord token (ECHO_DISCORD__TOKEN or [discord] token)"


def _parser() -> argparse.ArgumentParser:
    # The common options are accepted before or after the command: `echo-bot chat --config X`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help="TOML settings file")
    common.add_argument("--secrets-dir", default=argparse.SUPPRESS, help="secret files directory")
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)
    parser = argparse.ArgumentParser(
        prog="echo-bot", description="A character who remembers.", parents=[common]
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=text, parents=[common])

    command("run", "start the Discord bot (the terminal chat without a token)")
    chat = command("chat", "talk to the character in this terminal")
    chat.add_argument("--user", default=None, help="your name (default: your login name); "
                      "memories are keyed on an id made from it")  # fmt: skip
    command("sync", "send the slash commands to Discord now (`run` sends them when they change)")
    command("doctor", "check the configuration, database and backends")
    command("reindex", "embed every memory whose vector is missing or stale")
    command("calibrate", "read how the embedding model separates French and English")
    command("check-config", "load the settings and say what is wrong, if anything")
    command("web", "serve the operator's page on its own against the database ([web])")
    card = command("card", "read a Character Card (V2/V3, .json or .png)")
    card_commands = card.add_subparsers(dest="card_command", required=True)
    show = card_commands.add_parser("show", help="print what Écho understands of a card",
                                    parents=[common])  # fmt: skip
    show.add_argument("path", nargs="?", help="the card (default: [character] card)")
    load = card_commands.add_parser(
        "import",
        help="store a card's lorebook as lore entries and print what was understood",
        parents=[common],
    )
    load.add_argument("path", help="the card file")
    for name, text in (
        ("export", "everything stored about one person, as JSON"),
        ("import", "a person's memories from an export file (checked whole first)"),
    ):
        sub = command(name, text)
        who = sub.add_mutually_exclusive_group(required=True)
        who.add_argument("--user", help="a terminal user name")
        who.add_argument("--user-id", type=int, help="a Discord user id")
        sub.add_argument("file", nargs="?", default="-", help="JSON file (default: stdout/stdin)")
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    args = _parser().parse_args(argv)
    for name, default in (("config", "config.toml"), ("secrets_dir", None), ("verbose", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    return args


def _secrets_dir(args: argparse.Namespace) -> Path | None:
    if args.secrets_dir:
        return Path(args.secrets_dir)
    return DEFAULT_SECRETS_DIR if DEFAULT_SECRETS_DIR.is_dir() else None


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.config, secrets_dir=_secrets_dir(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args = _parse(argv)
    for stream in (sys.stdin, sys.stdout):
        # Bytes that are not text (a pasted binary, a Latin-1 terminal) become U+FFFD, not a
        # crash; so does text that cannot be printed.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    try:
        settings = _settings(args)
    except ConfigError as exc:
        print(f"echo-bot: {exc}", file=sys.stderr)
        return 2
    chat = args.command == "chat" or (args.command == "run" and settings.discord.token is None)
    # The terminal chat's screen is the conversation: its log goes to a file.
    args.log = logs.configure(
        verbose=args.verbose,
        file=logs.chat_log(settings.storage.path, settings.discord.file_tag) if chat else None,
    )
    try:
        return asyncio.run(_dispatch(args, settings))
    except ConfigError as exc:  # found when the runtime is built (a strategy plugin missing)
        print(f"echo-bot: {args.config}: {exc}", file=sys.stderr)
        return 2
    except EchoError as exc:
        print(f"echo-bot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader left early (`echo-bot export | head`): not a traceback. What is still
        # buffered for stdout goes nowhere, so the exit does not raise it again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


# Commands that only make sense on a database that is there, and what to say when it is not.
_NEEDS_DATABASE = {
    "export": "nobody's memories to export yet",
    "reindex": "no memory to embed yet",
    "import": "`echo-bot run` or `chat` creates it (a new install: start it once, then import)",
}


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    command = args.command
    if command == "check-config":
        registry = strategies(settings)  # the configured strategy must exist (plugins too)
        print(f"{args.config}: OK (character {settings.character.name!r}, context strategy "
              f"{settings.context.strategy!r} of {', '.join(registry.names())})")  # fmt: skip
        return 0
    if command == "doctor":
        return await doctor(settings, args.config)
    if command == "calibrate":
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
            checked = await _calibration(settings, http)
        print("\n".join(line for _, line in checked))
        return 0 if all(ok for ok, _ in checked) else 1
    if command == "card":
        return await _card(args, settings)
    # aiohttp is imported only when the page may be served.
    from bot.web import server as operator_page

    if command == "web":
        return await operator_page.serve_alone(settings)
    if command == "run" and settings.discord.token is None and not is_interactive():
        # A container or a service: no terminal to chat in. A chat on an empty stdin would end
        # at once with exit code 0, and a restart policy would start it again, forever.
        raise ConfigError(f"{NO_TOKEN}, and no terminal for the chat: set the token")
    if command == "run" and settings.discord.token is None:
        print(
            "No Discord token configured (ECHO_DISCORD__TOKEN or [discord] token): "
            "starting the terminal chat instead.",
            file=sys.stderr,
        )
        command = "chat"
    if command == "sync" and settings.discord.token is None:
        # Said before the database is opened: a sync that cannot log in makes none.
        raise ConfigError(NO_TOKEN)
    # A file that is not an export is said before the database is even opened.
    exported = files.exported(files.read(args.file), args.file) if command == "import" else None
    if command in _NEEDS_DATABASE and not files.database_exists(settings.storage.database):
        # An empty database made here would only hide a wrong path ([storage] path).
        then = _NEEDS_DATABASE[command]
        print(f"echo-bot: no database at {settings.storage.path} ([storage] path): {then}",
              file=sys.stderr)  # fmt: skip
        return 1
    async with (
        open_runtime(settings) as runtime,
        operator_page.if_enabled(
            settings, runtime.store, runtime.indexer.status, here=command in ("run", "chat")
        ),
    ):
        if command in ("run", "sync"):
            source = token_source(args.config, secrets_dir=_secrets_dir(args), environ=os.environ)
            return await _run_discord(runtime, source, sync_only=command == "sync")
        if command == "chat":
            name = args.user if getattr(args, "user", None) else getpass.getuser()
            terminal = Terminal(runtime, name, out=sys.stdout, interactive=is_interactive())
            print(f"Log: {args.log}", file=sys.stderr)
            await terminal.run(sys.stdin)
            return 0
        if command == "reindex":
            written = await runtime.indexer.run_once()
            status = runtime.indexer.status()
            print(f"embedded {render.count(written, 'memory', 'memories')}; "
                  f"{status.pending} still pending")  # fmt: skip
            return 0 if status.last_error is None else 1
        user_id = args.user_id if args.user_id is not None else terminal_user_id(args.user)
        default = settings.privacy.memories_served
        if command == "export":
            data = await manage_export.export(runtime.store, user_id, default_served=default)
            files.write(args.file, json.dumps(data, ensure_ascii=False))
            return 0
        print(json.dumps(await manage_export.import_memories(runtime.store, user_id, exported)))
        return 0


async def _card(args: argparse.Namespace, settings: Settings) -> int:
    """`card show [PATH]` reads only; `card import PATH` also stores the lorebook."""
    path = args.path or settings.character.card
    if path is None:
        raise ConfigError("no card given and no [character] card configured")
    card = load_card(path, played_as=played_as(settings))
    print(render.render_card(card))
    if args.card_command == "import":
        async with await Store.open(
            settings.storage.database, password=settings.storage.database_password()
        ) as store:
            changed = await manage_context.sync_card_lore(store, card)
        print(f"Lore: {len(card.lore)} entries stored" if changed else "Lore: already up to date")
        configured = settings.character.card
        if configured is None or configured.resolve() != Path(path).resolve():
            print(f'To play this character, set [character] card = "{path}" in {args.config}.')
    return 0


async def _run_discord(runtime: Runtime, source: str, *, sync_only: bool = False) -> int:
    """`run`: stay connected; `sync`: send the slash commands, whether they changed or not."""
    # discord.py is only imported when the bot really runs.
    from bot import startup
    from bot.app import EchoBot, Sync, make_bot, start_background

    discord_settings = runtime.settings.discord
    token = discord_settings.token
    if token is None:
        raise ConfigError(NO_TOKEN)
    startup.point_at(discord_settings)
    try:
        if sync_only:
            bot = EchoBot(runtime, sync=Sync.ALWAYS, background=False)
            await startup.login_once(bot, token.get_secret_value(), token_source=source)
            print(f"{bot.commands_sent} slash commands sent to Discord (clients may take a "
                  "minute to show them)")  # fmt: skip
            return 0
        await startup.start(
            lambda: make_bot(runtime), token.get_secret_value(), token_source=source,
            first_delay=discord_settings.login_retry,
            background=lambda: start_background(runtime),
        )  # fmt: skip
    except startup.StartupFault as exc:
        print(f"echo-bot: {exc}", file=sys.stderr)
        return 2
    return 0


async def doctor(settings: Settings, config_path: str) -> int:
    """Check each thing the bot needs; print one line each, OK or the fix (calibration too)."""
    results: list[tuple[bool | None, str]] = [(True, f"config {config_path} is valid")]
    results.append(await _check_database(settings.storage.database, settings))
    llm = settings.llm
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as http:
        for label, url, model in (
            ("chat", llm.base_url, llm.chat_model),
            ("embedding", llm.embeddings_url, llm.embedding_model),
        ):
            results.append(await _check_model(http, llm.backend, label, url, model))
        results.extend(await _calibration(settings, http, checking=True))
        structured = await structured_output(settings, http)
    try:
        registry = strategies(settings)
        results.append((True, f"context strategies: {', '.join(registry.names())}"))
        results.extend((False, f"strategy plugin {error}") for error in registry.errors)
    except ConfigError as exc:
        results.append((False, str(exc)))
    results.append(structured)
    if settings.discord.token is None:
        # No token is a working setup (`run` starts the terminal chat), not a failure.
        results.append((None, "Discord token not set: `run` starts the terminal chat → set "
                              "ECHO_DISCORD__TOKEN for Discord"))  # fmt: skip
    else:
        results.append((True, "Discord token is set"))
        results.append(await _check_discord(settings.discord.api_url))
    for status, line in results:
        # Its lines name the servers as configured: a user:password in a URL is not shown.
        print(f"{_MARKS[status]} {redact(line)}")
    return 0 if all(status is not False for status, _ in results) else 1


async def _check_database(path: Path | str, settings: Settings) -> tuple[bool | None, str]:
    """Open the database as it is: a check neither creates one nor migrates it."""
    if isinstance(path, Path) and not files.database_exists(path):
        folder = next(p for p in path.absolute().parents if p.exists())
        if os.access(folder, os.W_OK | os.X_OK):
            return None, f"database {path} does not exist yet → `echo-bot run` or `chat` creates it"
        return False, f"database {path} does not exist, and {folder} is not writable → " \
            "choose another [storage] path or fix the permissions"  # fmt: skip
    try:
        password = settings.storage.database_password()
        async with await Store.open(path, migrate_to=0, password=password) as store:
            await store.check_writable()
    except (EchoError, OSError) as exc:
        fix = (
            "check the path and its permissions ([storage] path)"
            if isinstance(path, Path)
            else "check the server, the URL and ECHO_STORAGE__PASSWORD ([storage] url)"
        )
        return False, f"database {path}: {exc} → {fix}"
    return True, f"database {path} is writable"


async def _check_discord(api_url: str) -> tuple[bool | None, str]:
    """Reach Discord's API as `run` will (the token is not sent: only the route is tested)."""
    url = api_url.rstrip("/") + "/gateway"
    try:
        # trust_env=False: discord.py's aiohttp ignores HTTPS_PROXY, so the test does too.
        timeout = httpx.Timeout(DISCORD_DEADLINE)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as http:
            response = await http.get(url)
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        return False, (f"Discord API {api_url} unreachable ({reason}) → check the network, DNS "
                       "and firewall; `run` retries until it answers")  # fmt: skip
    if response.status_code >= 500:
        return None, f"Discord API {api_url} answered {response.status_code} → Discord may be down"
    return True, f"Discord API {api_url} is reachable"


async def _calibration(
    settings: Settings, http: httpx.AsyncClient, *, checking: bool = False
) -> list[tuple[bool, str]]:
    """Embed the built-in probes; one line per language, fit or not, and the fix if any. The
    verdict is saved in the database; when `checking` (doctor), only in one that is already
    there and at its current schema."""
    _, raw = backends(settings, http)
    embedder = with_prefixes(settings, raw)
    try:
        reports = await calibrate(embedder)
    except BackendError as exc:
        return [(False, f"calibration skipped: the embedding backend failed ({exc})")]
    path, password = settings.storage.database, settings.storage.database_password()
    try:
        if not checking or files.database_exists(path):
            opened = (
                Store.open(path, migrate_to=0, password=password)
                if checking
                else Store.open(path, password=password)
            )
            async with await opened as store:
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


async def _check_model(
    http: httpx.AsyncClient, backend: str, label: str, url: str, model: str
) -> tuple[bool | None, str]:
    try:
        if backend == "ollama":
            models = await ollama_health(http, url, deadline=10.0)
        else:
            response = await http.get(url.rstrip("/") + "/v1/models")
            response.raise_for_status()
            models = [str(m.get("id")) for m in response.json().get("data", [])]
    except (BackendError, httpx.HTTPError, ValueError) as exc:
        setting = "[llm] base_url" if label == "chat" else "[llm] embedding_base_url or base_url"
        return (
            False,
            f"{label} backend {url} unreachable ({exc}) → is the server running? ({setting})",
        )
    names = {m.split(":")[0] for m in models} | set(models)
    if model in names or model.split(":")[0] in names:
        return True, f"{label} model {model} is available at {url}"
    if backend == "ollama":
        return False, f"{label} model {model} is missing at {url} → ollama pull {model}"
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
        f"{label} model {model} is missing at {url}, which lists {listed} → load it in the "
        f"server, or set {setting}"
    )


def _is_model_file(model_id: str) -> bool:
    """Tell whether a listed model id is a file path (a GGUF file, an absolute path)."""
    return model_id.lower().endswith((".gguf", ".bin")) or model_id.startswith(
        ("/", "./", "../", "~")
    )


if __name__ == "__main__":
    sys.exit(main())
