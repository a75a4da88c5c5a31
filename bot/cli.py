"""The `echo-bot` command line: run | chat | sync | doctor | reindex | calibrate | export |
import | card show/import | lore import | check-config. What doctor and calibrate check is
bot/doctor.py."""

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

from bot import doctor, files, logs, render
from bot.config import ConfigError, Settings, load_settings, token_source
from bot.runtime import (
    Runtime,
    cast,
    character_lines,
    open_runtime,
    played_as,
    start_jobs,
    strategies,
)
from bot.terminal.chat import Terminal, earlier_spelling, is_interactive, terminal_user_id
from memory import EchoError, load_card, load_lorebook, open_store, redact
from memory.manage import casting, export
from memory.manage.context import same_character, sync_card_lore

log = logging.getLogger(__name__)

DEFAULT_SECRETS_DIR = Path("/run/secrets")
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
    chat.add_argument(
        "--user",
        default=None,
        help="your name (default: your login name); memories are keyed on an id made from it",
    )
    chat.add_argument(
        "--character",
        default="",
        metavar="KEY",
        help="the [[characters]] key to talk to (default: the default)",
    )
    command("sync", "send the slash commands to Discord now (`run` sends them when they change)")
    command("doctor", "check the configuration, database and backends")
    command("reindex", "embed every memory whose vector is missing or stale")
    command("calibrate", "read how the embedding model separates French and English")
    command("check-config", "load the settings and say what is wrong, if anything")
    command("web", "serve the operator's page on its own against the database ([web])")
    card = command("card", "read a Character Card (V2/V3, .json or .png)")
    card_commands = card.add_subparsers(dest="card_command", required=True)
    show = card_commands.add_parser(
        "show", help="print what Écho understands of a card", parents=[common]
    )
    show.add_argument("path", nargs="?", help="the card (default: [character] card)")
    load = card_commands.add_parser(
        "import",
        help="store a card's lorebook as lore entries and print what was understood",
        parents=[common],
    )
    load.add_argument("path", help="the card file")
    lore = command("lore", "read a lorebook file (SillyTavern world info, a character_book)")
    lore_commands = lore.add_subparsers(dest="lore_command", required=True)
    lore_import = lore_commands.add_parser(
        "import",
        help="store a lorebook's entries as lore (a second import replaces them)",
        parents=[common],
    )
    lore_import.add_argument("path", help="the lorebook file (.json)")
    lore_import.add_argument(
        "--character",
        default=None,
        metavar="KEY",
        help="only while this configured character plays: its key or name (default: all)",
    )
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
        screen=sys.stderr,  # the stream now, not the one there when bot.logs was imported
        # Doctor's lines are its report: what it learns on the way (a server's structured-output
        # mode) is one of them, not a log line between them.
        warnings_only=args.command == "doctor",
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
        # Ctrl-C is the documented way to stop: everything above closed cleanly on the way
        # out, and `make run` would print "Error 130" for anything but 0.
        return 0
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
        # Each card read before anything is said: a card that cannot be played is the one line
        # said, never after an "OK".
        characters = character_lines(settings, args.config)
        print(
            f"{args.config}: OK (context strategy {settings.context.strategy!r} of "
            f"{', '.join(registry.names())})"
        )
        for line in characters + await _mode_lines(settings):
            print(line)
        return 0
    if command == "doctor":
        return await doctor.doctor(settings, args.config, secrets_dir=_secrets_dir(args))
    if command == "calibrate":
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
            checked = await doctor.calibration(settings, http)
        print("\n".join(line for _, line in checked))
        return 0 if all(ok for ok, _ in checked) else 1
    if command == "card":
        return await _card(args, settings)
    if command == "lore":
        return await _lore(args, settings)
    # aiohttp is imported only when the page may be served.
    from bot.web import server as operator_page

    if command == "web":
        return await operator_page.serve_alone(settings)
    if command == "run" and settings.discord.token is None and not is_interactive(sys.stdin):
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
        print(
            f"echo-bot: no database at {settings.storage.path} ([storage] path): {then}",
            file=sys.stderr,
        )
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
            given = getattr(args, "user", None)
            name = given if given and given.strip() else getpass.getuser()
            terminal = Terminal(
                runtime,
                name,
                out=sys.stdout,
                interactive=is_interactive(sys.stdin),
                character=getattr(args, "character", ""),
            )
            print(f"Log: {args.log}", file=sys.stderr)
            await terminal.run(sys.stdin)
            return 0
        if command == "reindex":
            written = await runtime.indexer.run_once()
            status = runtime.indexer.status()
            print(
                f"embedded {render.count(written, 'memory', 'memories')}; "
                f"{status.pending} still pending"
            )
            return 0 if status.last_error is None else 1
        user_id = args.user_id if args.user_id is not None else terminal_user_id(args.user)
        default = settings.privacy.memories_served
        if command == "export":
            data = await export.export(
                runtime.store, user_id, default_served=default, cast=runtime.characters
            )
            if export.nothing_stored(data):
                print(f"echo-bot: {await _nobody(runtime, args)}", file=sys.stderr)
                return 1
            files.write(args.file, json.dumps(data, ensure_ascii=False))
            who = (
                f"user id {user_id}" if args.user is None else f"{args.user!r} (user id {user_id})"
            )
            if args.file == "-":  # stdout holds the data: the line goes beside it
                print(f"Exported {files.summary(data)} about {who}.", file=sys.stderr)
            else:
                print(
                    f"Wrote {files.summary(data)} about {who} to {Path(args.file).resolve()} "
                    "(readable by you only)."
                )
            return 0
        done = await export.import_memories(runtime.store, user_id, exported)
        print(render.render_import(done))
        return 0


async def _nobody(runtime: Runtime, args: argparse.Namespace) -> str:
    """Why `export` wrote nothing: no such person, or memories under an earlier spelling."""
    if args.user_id is not None:
        return f"nothing is stored about user id {args.user_id}: no such person here"
    said = f"nothing is stored about {args.user!r} (user id {terminal_user_id(args.user)})"
    note = await earlier_spelling(runtime, args.user)
    return f"{said}. {note}" if note else f"{said}: no such person here"


async def _mode_lines(settings: Settings) -> list[str]:
    """The channel modes moderators set (/channel mode), read from the database as it is (never
    created nor migrated here); nothing when there is none yet, or it cannot be read (doctor
    says why)."""
    database = settings.storage.database
    if not files.database_exists(database):
        return []
    try:
        password = settings.storage.database_password()
        async with await open_store(database, migrate_to=0, password=password) as store:
            if await store.schema_version() < casting.MODES_SCHEMA:
                return []
            found = await casting.modes_set(store)
    except (EchoError, OSError) as exc:
        log.debug("channel modes not read: %s", type(exc).__name__)
        return []
    return [
        f"Channel {channel} is in {mode.value!r} mode (/channel mode, by user {by} on "
        f"{time.strftime('%Y-%m-%d', time.gmtime(at))})"
        for channel, mode, by, at in found
    ]


async def _card(args: argparse.Namespace, settings: Settings) -> int:
    """`card show [PATH]` reads only; `card import PATH` also stores the lorebook."""
    path = args.path or settings.default_character.card
    if path is None:
        raise ConfigError("no card given and no [character] card configured")
    playing = next(
        (c for c in settings.tables() if c.card and c.card.resolve() == Path(path).resolve()),
        None,
    )
    # A card other than a configured one is read as its own character: its lore is its own,
    # not that of a character the config plays now.
    named = played_as(settings, playing) if playing else None
    card = load_card(path, played_as=named)
    print(render.render_card(card))
    if args.card_command == "import":
        async with await open_store(
            settings.storage.database, password=settings.storage.database_password()
        ) as store:
            changed = await sync_card_lore(store, card)
        who = named or card.name
        said = render.count(len(card.lore), "entry", "entries")
        print(f"Lore: {said} stored for {who}" if changed else "Lore: already up to date")
        if card.lore:
            print(
                f"They fire only while {who} plays; {{{{char}}}} in them becomes the playing "
                "character's name when one fires."
            )
        if not playing:
            print(f'To play this character, set [character] card = "{path}" in {args.config}.')
    return 0


async def _lore(args: argparse.Namespace, settings: Settings) -> int:
    """`lore import PATH [--character KEY]`: a lorebook file's entries as stored lore."""
    playing = None
    if args.character is not None:
        playing = _character_named(settings, args.character)
        if playing is None:
            # Lore kept for a character nobody plays would never fire: nothing is stored.
            keys = ", ".join(f"{c.key} ({c.name})" for c in cast(settings)[0])
            print(
                f"echo-bot: lore import --character {args.character!r}: no such character in "
                f"{args.config}; give one of its keys: {keys}; nothing imported",
                file=sys.stderr,
            )
            return 2
    book = load_lorebook(args.path, character=playing)
    async with await open_store(
        settings.storage.database, password=settings.storage.database_password()
    ) as store:
        changed = await sync_card_lore(store, book)
    who = f"only while {playing!r} plays" if playing else "for every character"
    said = render.count(len(book.lore), "entry", "entries")
    print(
        f"Lorebook {book.name!r} ({book.format}): {said} "
        + (f"stored, {who}" if changed else "already up to date")
    )
    for label, reason in book.skipped:
        print(f"  skipped {label}: {reason}")
    for warning in book.warnings:
        print(f"Warning: {warning}")
    return 0


def _character_named(settings: Settings, given: str) -> str | None:
    """The name a configured character plays under, found by its key or by that name (case
    and accents aside, as lore compares them); None when no character is either."""
    for c in cast(settings)[0]:
        if given.strip() == c.key or same_character(c.name, given):
            return c.name
    return None


async def _run_discord(runtime: Runtime, source: str, *, sync_only: bool = False) -> int:
    """`run`: stay connected; `sync`: send the slash commands, whether they changed or not."""
    # discord.py is only imported when the bot really runs.
    from bot.discord import startup
    from bot.discord.app import EchoBot, Sync, make_bot

    discord_settings = runtime.settings.discord
    token = discord_settings.token
    if token is None:
        raise ConfigError(NO_TOKEN)
    startup.point_at(discord_settings)
    llm = runtime.settings.llm
    log.info(
        "starting %s as %s: database %s; %s LLM at %s (chat %s, embeddings %s at %s)",
        "`sync`" if sync_only else "the Discord bot",
        runtime.engine.character.name,
        redact(str(runtime.settings.storage.database)),
        llm.backend,
        redact(llm.base_url),
        llm.chat_model,
        llm.embedding_model,
        redact(llm.embeddings_url),
    )
    try:
        if sync_only:
            bot = EchoBot(runtime, sync=Sync.ALWAYS, background=False)
            await startup.login_once(bot, token.get_secret_value(), token_source=source)
            print(
                f"{bot.commands_sent} slash commands sent to Discord (clients may take a "
                "minute to show them)"
            )
            return 0
        await startup.start(
            lambda: make_bot(runtime),
            token.get_secret_value(),
            token_source=source,
            first_delay=discord_settings.login_retry,
            background=lambda: start_jobs(runtime),
        )
    except startup.StartupFault as exc:
        print(f"echo-bot: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
