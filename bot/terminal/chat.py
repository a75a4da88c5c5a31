"""The same character in a terminal, with the slash commands typed as lines (/why, /pin 3...).

When stdin is not a terminal (a script, a test), each turn finishes its reflection before the
next line is read, so a scripted conversation is deterministic. Stdin is read by the event loop
itself (bot.terminal.lines): while a line or a y/N answer is awaited, reflections and re-indexing
go on,
and Ctrl-C or the end of input ends the chat at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import shlex
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from bot import files, logs, render
from bot.plain import for_terminal, plain
from bot.runtime import Runtime, start_jobs
from bot.terminal import options
from bot.terminal.lines import LineReader
from bot.terminal.options import HELP
from bot.terminal.options import number as _id
from bot.terminal.options import yes as _yes
from memory import (
    DM_ORIGIN,
    EchoError,
    Forbidden,
    Incoming,
    InvalidInput,
    Kind,
    Language,
    Memory,
    NotFound,
    Regenerating,
    Scope,
    Settled,
    StoreError,
    jobs,
    manage,
)
from memory.manage import context, export, forgetting, privacy, story, versions

log = logging.getLogger(__name__)

PROMPT = "> "
# The commands that change the last reply: a script's reflection of it waits past them.
_VERSIONS = ("/retry", "/swipe")
# Messages per /history page: a screenful.
HISTORY_PAGE = 20
# Seconds without a word from the chat server before the terminal says so, once: a small model
# on a CPU takes 20 to 60 s for its first word, and a server that is down is said at once.
SLOW_SERVER_SECONDS = 15.0
# Back to the start of the line, and the line cleared (ANSI): the status line gives way.
_CLEAR_LINE = "\r\x1b[K"


def name_key(name: str) -> str:
    """The person a terminal user name stands for: `Marie`, `marie` and ` marie ` are one."""
    return " ".join(name.split()).casefold()


def terminal_user_id(name: str) -> int:
    """A stable id for a terminal user name (memories are keyed on it, never on the name);
    names that differ only by case or spaces get the same id."""
    return _hashed(name_key(name))


def spelled_user_id(name: str) -> int:
    """The id this name had when ids were made from the name exactly as typed: a name already
    in its key's form (`marie`) keeps its id; `Marie` had another."""
    return _hashed(name)


def _hashed(name: str) -> int:
    digest = hashlib.sha256(f"terminal-user:{name}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


async def earlier_spelling(runtime: Runtime, name: str) -> str | None:
    """A line for the person when memories are kept under the id this exact spelling had."""
    old = spelled_user_id(name)
    if old == terminal_user_id(name) or not await manage.list_memories(runtime.store, old):
        return None
    key = name_key(name)
    return (
        f"Memories saved as {name!r} before names ignored case and spaces are kept apart from "
        f"{key!r}'s; to bring them here: echo-bot export --user-id {old} old.json, then "
        f"echo-bot import --user {shlex.quote(key)} old.json."
    )


class Terminal:
    """A chat session for one named person; a DM with the character is its own story."""

    def __init__(
        self,
        runtime: Runtime,
        user_name: str,
        *,
        out: TextIO,
        interactive: bool,
        character: str = "",
    ) -> None:
        self.runtime = runtime
        self.user_name = user_name
        # The person, and the ids the character talked to keeps them and this DM under (the
        # same ids for the home character; memory.character.cast): the memory commands use those.
        cast = runtime.characters
        self.playing = cast.need(character) if character else cast.default
        self.person = terminal_user_id(user_name)
        self.user_id = cast.person_id(self.playing.key, self.person)
        self.story_id = cast.story_id(self.playing.key, self.person)
        self.out = out
        self.interactive = interactive
        self._count = 0
        # Message ids must be unique across sessions: the store answers each source id once.
        self._session = uuid.uuid4().hex
        self._background: set[asyncio.Task[None]] = set()
        # The memory's background jobs (memory.jobs) while an interactive chat runs.
        self.jobs: jobs.Background | None = None
        # What the next line answers, after a command asked for a confirmation.
        self._answer: _Question | None = None
        # The last exchange answered (what /retry and /swipe act on) and, in a script, the one
        # whose reflection waits for a line that is neither of them: its answers settle then.
        self._last: str | None = None
        self._unreflected: str | None = None
        # The greetings said before their reply (an interactive chat streams).
        self._greeted: set[str] = set()
        # How the "is writing…" line waits (a test gives its virtual clock's).
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    def say(self, text: str) -> None:
        """Print a command's answer: Discord's markdown shown as the plain text it stands for."""
        self._print(plain(text))

    def _print(self, text: str, end: str = "\n") -> None:
        print(self.runtime.secrets.remove(text), file=self.out, end=end, flush=True)

    def _ask(self, question: str, name: str, act: Callable[[], Awaitable[None]], kept: str) -> None:
        """Ask a y/N question; the next line answers it (y does `act`, anything else keeps)."""
        self.say(f"{question} [y/N]")
        self._answer = _Question(name, act, kept)

    async def handle(self, line: str) -> bool:
        """Handle one input line; return False when the session should end. What it renders
        marks people's texts, so that `say` shows them exactly as written."""
        with for_terminal():
            return await self._handle(line)

    async def _handle(self, line: str) -> bool:
        line = line.strip()
        if self._unreflected is not None and line.split(" ", 1)[0] not in _VERSIONS:
            await self._settle()
        if self._answer is not None:
            # The line answers the question a command asked: y does it, anything else keeps.
            question, self._answer = self._answer, None
            if _yes(line):
                await self._guarded(question.name, question.act)
            else:
                self.say(question.kept)
            return True
        if not line:
            return True
        if line.startswith("/"):
            return await self.command(line)
        await self.talk(line)
        return True

    async def talk(self, text: str) -> None:
        self._count += 1
        source = f"terminal:{self.person}:{self._session}:{self._count}"
        name = self.playing.name
        # Interactive: "is writing…" until the first words, then the reply printed as it
        # arrives. Scripted: each reply on one line.
        writing = _Writing(self, name) if self.interactive else None
        streamed = _Streamed(self, name, writing) if self.interactive else None

        async def greet(greeting: str) -> None:
            # Streamed lines cannot be reordered: the greeting is said before the reply starts.
            if writing is not None:
                writing.clear()
            self._print(f"{name}: {greeting}")
            self._greeted.add(greeting)
            if writing is not None:
                writing.show()

        try:
            said = Incoming(source, self.person, self.user_name, self.person, DM_ORIGIN, text)
            reply = await self.runtime.engine.turn(
                replace(said, character=self.playing.key),
                on_text=streamed,
                on_greeting=greet if streamed is not None else None,
            )
        except EchoError as exc:
            log.warning("turn failed: %s", type(exc).__name__)
            if writing is not None:
                writing.stop()
            if streamed is not None:
                streamed.end()
            url = self.runtime.settings.llm.base_url
            # The message stays in the history: /retry answers it, rather than typing it again.
            self._print(render.cannot_answer(name, exc, base_url=url) + " /retry asks again.")
            self._last = source
            return
        finally:
            if writing is not None:
                writing.stop()
        if reply is None:
            return
        # The character's own words as written (its *actions* are part of the role).
        if reply.greeting and reply.greeting in self._greeted:
            # Said when it was known (after a failed first turn, the reply carries it again).
            reply = replace(reply, greeting=None)
        if streamed is not None and streamed.printed:
            streamed.finish(reply.text)
            if reply.greeting:  # not said before the reply: known only with it
                self._print(f"{name}: {reply.greeting}")
        else:
            if reply.greeting:
                self._print(f"{name}: {reply.greeting}")
            self._print(f"{name}: {reply.text}")
        if reply.cut:
            self.say(render.cut_line(reply.cut))
        if reply.interrupted:
            self.say(render.interrupted_line())
        self._last = reply.exchange_id
        if not self.interactive:
            # Scripted input: the memory is written and indexed before the next line that is
            # not /retry or /swipe (the answer kept then is what it learns).
            self._unreflected = reply.exchange_id
        elif self.runtime.engine.settle > 0:
            # Reflected once its answers settle ([conversation] settle_seconds, the jobs); this
            # message settled the one before it, reflected now.
            self._in_background(self._reflect(None))
        else:
            self._in_background(self._reflect(reply.exchange_id))

    async def _settle(self) -> None:
        """A script moved on from the last reply: reflect on it and index, before the line."""
        exchange_id, self._unreflected = self._unreflected, None
        if exchange_id is not None:
            await self.runtime.worker.reflect_now(exchange_id)
            await self.runtime.indexer.run_once()

    async def cmd_retry(self, arg: str) -> None:
        """/retry: another answer to your last message, shown instead of the one before."""
        if self._last is None:
            self.say("Nothing to answer again yet: say something first.")
            return
        try:
            reply = await self.runtime.engine.regenerate(self._last)
        except (Settled, Regenerating) as exc:
            self.say(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
            return
        except EchoError as exc:
            log.warning("answer again failed: %s", type(exc).__name__)
            name, url = self.playing.name, self.runtime.settings.llm.base_url
            self._print(render.cannot_answer(name, exc, base_url=url))
            return
        if not self.interactive:  # a failed turn answered now: learned before the next line
            self._unreflected = reply.exchange_id
        await self._show_version(reply.exchange_id)

    async def cmd_swipe(self, arg: str) -> None:
        """/swipe N: show answer N (1 is the first) to your last message instead."""
        if self._last is None:
            self.say("Nothing to swipe yet: say something first.")
            return
        try:
            await self.runtime.engine.swipe(self._last, _id(arg) - 1)
        except Settled as exc:
            self.say(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
            return
        await self._show_version(self._last)

    async def _show_version(self, exchange_id: str) -> None:
        answers = await self.runtime.engine.versions(exchange_id)
        shown = answers.current
        self._print(f"{self.playing.name}: {shown.text}")
        if shown.cut:
            self.say(render.cut_line(shown.cut))
        self.say(render.version_line(answers))

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _reflect(self, exchange_id: str | None) -> None:
        """This turn's reflection (after the one running, if any), then those due: a retry, or
        one a previous session's end cut short."""
        try:
            if exchange_id is not None:
                await self.runtime.worker.reflect_now(exchange_id)
            await self.runtime.worker.run_due()
        except EchoError as exc:  # the outbox keeps the exchange for the next try
            log.warning("reflection not run now: %s", type(exc).__name__)

    async def command(self, line: str) -> bool:
        name, _, arg = line[1:].partition(" ")
        if name in ("quit", "exit"):
            return False
        method = f"cmd_{name.replace('-', '_')}"
        handler = getattr(self, method, None) if method.isidentifier() else None
        if handler is None or name not in options.USAGES:
            self.say(f"Unknown command /{name}. {HELP}")
        else:
            await self._guarded(name, lambda: self._checked(name, handler, arg.strip()))
        return True

    async def _checked(
        self, name: str, handler: Callable[[str], Awaitable[None]], arg: str
    ) -> None:
        """Run a command once its line holds only what it takes (options.USAGES)."""
        options.parse(name, arg)
        await handler(arg)

    async def _guarded(self, name: str, act: Callable[[], Awaitable[None]]) -> None:
        """Run a command, turning a person's mistake or a refusing database into one line."""
        try:
            await act()
        except (NotFound, Forbidden) as exc:
            text = str(exc)
            self.say(f"{text[:1].upper()}{text[1:]}.")
        except InvalidInput as exc:
            self.say(f"{exc}.")
        except StoreError as exc:
            log.warning("command /%s failed: %s", name, type(exc).__name__)
            self.say(f"[the database refused this: {exc}]")

    async def cmd_help(self, arg: str) -> None:
        self.say(HELP)

    async def cmd_why(self, arg: str) -> None:
        turn = await manage.why(self.runtime.store, self.user_id, self.story_id)
        used = [s.memory for s in turn.selected] if turn else []
        replaced = await versions.replaced_until(
            self.runtime.store, self.user_id, [m.id for m in used]
        )
        told = await self._told(used)
        self.say(
            render.render_why(
                turn,
                everywhere=await self._everywhere(),
                told=told,
                replaced=replaced,
                language=self.language,
            )
        )

    async def cmd_memories(self, arg: str) -> None:
        """/memories [never|TEXT] · /memories history ID (a memory's versions)."""
        arg, chosen = options.parse("memories", arg)
        word, _, rest = arg.partition(" ")
        if "history" in chosen or (word == "history" and rest.strip()):
            if "history" in chosen and arg:
                raise InvalidInput("write /memories history:ID alone, or /memories TEXT")
            number = _id(chosen.get("history") or rest)
            chain = await versions.history(self.runtime.store, self.user_id, number)
            self.say(render.render_versions(chain, language=self.language))
            return
        store, never = self.runtime.store, arg == "never"
        found = await manage.list_memories(
            store,
            self.user_id,
            never_served=never,
            query="" if never else arg,
        )
        if not found and arg and await manage.list_memories(store, self.user_id):
            self.say(
                "Every memory of yours has been used at least once."
                if never
                else f"None of your memories has the words {arg!r}."
            )
            return
        replaced = await versions.replaced_until(store, self.user_id, [m.id for m in found])
        self.say(
            render.render_memories(
                found,
                page_index=0,
                pages=1,
                total=len(found),
                everywhere=await self._everywhere(),
                told=await self._told(found),
                replaced=replaced,
                language=self.language,
            )
        )

    async def cmd_restore(self, arg: str) -> None:
        """/restore ID: the version before the last replacement comes back."""
        number = _id(options.one("restore", arg, "memory"))
        memory = await versions.restore(self.runtime.store, self.user_id, number)
        self.say(f"#{memory.id} is back to: {render.excerpt(memory.text, 80)}")

    async def cmd_edit(self, arg: str) -> None:
        """/edit ID TEXT: a correction, kept as the memory's new version."""
        number, _, text = arg.partition(" ")
        memory = await versions.edit(
            self.runtime.store,
            self.user_id,
            _id(number),
            text,
            builder=self.runtime.worker.builder,
        )
        self.say(
            f"#{memory.id} now says: {render.excerpt(memory.text, 80)}"
            f" (the old wording: /memories history {memory.id})"
        )

    async def _told(self, found: Sequence[Memory]) -> render.Told:
        engine = self.runtime.engine
        learned = await manage.learned(self.runtime.store, self.user_id, found)
        return render.Told(engine.clock(), engine.character.zone, learned)

    async def _everywhere(self) -> bool:
        default = self.runtime.settings.privacy.memories_served
        found = await privacy.get(self.runtime.store, self.person, default=default)
        return found.everywhere

    async def cmd_pin(self, arg: str, pinned: bool = True) -> None:
        store = self.runtime.store
        number = _id(options.one("pin" if pinned else "unpin", arg, "memory"))
        before = await manage.get(store, self.user_id, number)
        if before.pinned == pinned:
            self.say(f"#{before.id} {'was already pinned' if pinned else 'was not pinned'}.")
            return
        memory = await manage.set_pinned(store, self.user_id, before.id, pinned)
        self.say(f"{'Pinned' if memory.pinned else 'Unpinned'} #{memory.id}.")

    async def cmd_unpin(self, arg: str) -> None:
        await self.cmd_pin(arg, pinned=False)

    async def cmd_forget(self, arg: str) -> None:
        """/forget ID: says at once when there is no such memory; asks first in a terminal."""
        number = _id(options.one("forget", arg, "memory"))
        memory = await manage.get(self.runtime.store, self.user_id, number)

        async def forget() -> None:
            found = await forgetting.forget_memory(self.runtime.store, self.user_id, memory.id)
            self.say(render.render_forgotten(found, terminal=True))

        if not self.interactive:
            await forget()
            return
        excerpt = render.excerpt(memory.text, 60)
        self._ask(f"Forget #{memory.id} ({excerpt}) for good?", "forget", forget, "Kept.")

    async def cmd_forget_message(self, arg: str) -> None:
        """/forget-message ID: the message with this history id (or the reply to one), the
        reply to it, and what was made from it."""
        store = self.runtime.store
        message = await context.message_in_story(store, self.story_id, _id(arg))
        report = await forgetting.forget_message(
            store, message, actor_id=self.person, engine=self.runtime.engine
        )
        self.say(render.render_erasure(report, heading="Forgotten:"))

    async def cmd_forget_me(self, arg: str) -> None:
        """/forget-me [character:KEY]: asks, and the next line answers (y to erase); with a
        character, only what that one stores about the person."""
        _, chosen = options.parse("forget-me", arg)
        cast = self.runtime.characters
        character = cast.need(chosen["character"]) if "character" in chosen else None
        question = render.FORGET_ME_QUESTION
        if character is not None:
            question = (
                f"Erase everything {character.name} ({character.key}) stores about you? The "
                "other characters' memories of you stay. This cannot be undone."
            )
        elif len(cast) > 1:
            question += f" Every character's: {', '.join(c.name for c in cast)}."

        async def forget_me() -> None:
            report = await forgetting.forget_person(
                self.runtime.store,
                self.person,
                engine=self.runtime.engine,
                character=character.key if character is not None else None,
            )
            heading = (
                f"Erased everything {character.name} stored about you:"
                if character is not None
                else "Erased everything about you:"
            )
            self.say(render.render_erasure(report, heading=heading))

        self._ask(question, "forget-me", forget_me, "Kept; nothing was erased.")

    async def cmd_remember(self, arg: str) -> None:
        """/remember TEXT [kind:KIND] [scope:global|story]."""
        text, chosen = options.parse("remember", arg)
        if not text.strip():
            raise InvalidInput(f"write {options.REMEMBER_USAGE} (1 to 500 characters)")
        kind = Kind(chosen.get("kind", Kind.FACT.value))
        outcome = await manage.remember(
            self.runtime.store,
            user_id=self.user_id,
            story_id=self.story_id,
            origin=DM_ORIGIN,
            text=text,
            kind=kind,
            scope=Scope(chosen.get("scope", Scope.GLOBAL.value)),
            builder=self.runtime.worker.builder,
        )
        self.say(
            render.remembered(
                outcome.memory_id, outcome.action, outcome.text, kind=kind, typed=text
            )
        )

    async def cmd_summary(self, arg: str) -> None:
        self.say(render.render_summary(await story.summary(self.runtime.store, self.story_id)))

    async def cmd_positions(self, arg: str) -> None:
        """/positions · /positions drop ID REASON (the terminal's owner moderates their story)."""
        store = self.runtime.store
        action, _, rest = arg.partition(" ")
        if action == "drop":
            number, _, reason = rest.strip().partition(" ")
            topic = await story.drop_position(
                store, self.story_id, _id(number), reason, by=self.user_id
            )
            self.say(f"Position #{_id(number)} ({topic}) dropped.")
        elif action:
            raise InvalidInput("write /positions, or /positions drop ID REASON")
        else:
            found = await story.positions(store, self.story_id)
            self.say(render.render_positions(found, name=self._name, language=self.language))

    async def cmd_anchors(self, arg: str) -> None:
        """/anchors · /anchors add TEXT · /anchors drop ID REASON."""
        store = self.runtime.store
        action, _, rest = arg.partition(" ")
        if action == "add":
            anchor_id = await story.add_anchor(store, self.story_id, rest, by=self.user_id)
            self.say(f"Anchor #{anchor_id} held.")
        elif action == "drop":
            number, _, reason = rest.strip().partition(" ")
            await story.drop_anchor(store, self.story_id, _id(number), reason, by=self.user_id)
            self.say(f"Anchor #{_id(number)} dropped.")
        elif action:
            raise InvalidInput("write /anchors, /anchors add TEXT, or /anchors drop ID REASON")
        else:
            found_anchors = await story.anchors(store, self.story_id)
            self.say(render.render_anchors(found_anchors, name=self._name, language=self.language))

    @property
    def language(self) -> Language:
        """The language dates are shown in here: [terminal] language."""
        return self.runtime.settings.terminal.language

    def _name(self, user_id: int) -> str:
        # Only the terminal's person moderates their story.
        return "you" if user_id == self.user_id else f"person {user_id}"

    async def cmd_privacy(self, arg: str) -> None:
        """/privacy · /privacy where_learned|everywhere|default."""
        store, default = self.runtime.store, self.runtime.settings.privacy.memories_served
        arg = options.one("privacy", arg, "memories")
        if arg:
            found = await privacy.choose(store, self.person, arg, default=default)
        else:
            found = await privacy.get(store, self.person, default=default)
        self.say(found.line(terminal=True))

    async def cmd_stats(self, arg: str) -> None:
        stats = await manage.stats(self.runtime.store)
        self.say(
            render.render_stats(stats, self.runtime.indexer.status(), self.runtime.engine.status())
        )

    async def cmd_context(self, arg: str) -> None:
        """/context [DRAFT] [full:true]: history messages with the same fate on one line each
        run, as in Discord, unless full:true."""
        draft, chosen = options.parse("context", arg)
        plan = await self.runtime.engine.preview(
            user_id=self.person,
            user_name=self.user_name,
            story_id=self.person,
            origin=DM_ORIGIN,
            text=draft,
            character=self.playing.key,
        )
        self.say(render.render_context(plan, full=chosen.get("full") == "true"))

    async def cmd_character(self, arg: str) -> None:
        """/character [show]: who this chat talks to, and the others the bot plays (a terminal
        chat keeps its character: another one is another `echo-bot chat --character KEY`)."""
        if options.parse("character", arg)[0] not in ("", "show"):
            raise InvalidInput(
                "a terminal chat keeps its character: to talk to another, end this one and start"
                " `echo-bot chat --character KEY`"
            )
        line = f"You are talking to {self.playing.name} (key {self.playing.key})."
        others = [f"{c.name} ({c.key})" for c in self.runtime.characters if c != self.playing]
        if others:
            line += f" The others: {', '.join(others)}: `echo-bot chat --character KEY`."
        self.say(line)

    async def cmd_strategy(self, arg: str) -> None:
        engine = self.runtime.engine
        arg = options.one("strategy", arg, "name")
        if not arg:
            self.say((await context.strategies(engine, self.story_id)).line())
            return
        chosen = await context.choose_strategy(engine, self.story_id, arg)
        self.say(f"Strategy here is now `{chosen}`.")

    async def cmd_lore(self, arg: str) -> None:
        """/lore list · /lore add KEYWORDS | CONTENT · /lore remove ID (the owner's entries)."""
        action, _, rest = arg.partition(" ")
        store = self.runtime.store
        if action == "list":
            self.say(render.render_lore(await context.list_lore(store, None), guild_id=None))
        elif action == "add":
            keywords, bar, content = rest.partition("|")
            if not bar:
                raise InvalidInput(
                    "write /lore add KEYWORDS | CONTENT (keywords separated by commas)"
                )
            entry = await context.add_lore(store, keywords=keywords, content=content, guild_id=None)
            self.say(f"Lore entry #{entry.id} added.")
        elif action == "remove":
            await context.remove_lore(store, _id(rest), guild_id=None)
            self.say(f"Lore entry #{_id(rest)} removed.")
        else:
            raise InvalidInput("write /lore list, /lore add KEYWORDS | CONTENT, or /lore remove ID")

    async def cmd_history(self, arg: str) -> None:
        """/history [PAGE]: page 1 is the last HISTORY_PAGE messages, page 2 those before."""
        page = _id(arg) if arg else 1
        store = self.runtime.store
        found = await context.history_page(store, self.story_id, page, size=HISTORY_PAGE)
        self.say(render.render_history(found.messages, page=page, older=found.older))

    async def cmd_export(self, arg: str) -> None:
        """/export [FILE]: everything stored about the person, as `echo-bot export` writes it."""
        settings = self.runtime.settings
        default = settings.privacy.memories_served
        data = await export.export(
            self.runtime.store, self.user_id, default_served=default, cast=self.runtime.characters
        )
        # Not the folder the chat was started in (a git checkout, often): the data folder.
        path = arg or str(files.default_export(settings.storage.path, self.user_id))
        files.write(path, json.dumps(data, ensure_ascii=False))
        self.say(
            f"Everything stored about you is in {Path(path).resolve()} ({files.summary(data)}), "
            "readable by you only."
        )

    async def cmd_exclude(self, arg: str, excluded: bool = True) -> None:
        store = self.runtime.store
        message = await context.message_in_story(store, self.story_id, _id(arg))
        await context.set_excluded(store, message, actor_id=self.person, excluded=excluded)
        self.say(
            f"Message #{_id(arg)} {'excluded from' if excluded else 'included in'} the context."
        )

    async def cmd_include(self, arg: str) -> None:
        await self.cmd_exclude(arg, excluded=False)

    async def run(self, stdin: TextIO) -> None:
        """Read lines until end of input, /quit or Ctrl-C; then stop the background work."""
        reader = LineReader(stdin)
        note = await earlier_spelling(self.runtime, self.user_name)
        if note is not None:
            self.say(note)
        if self.interactive:
            name = self.playing.name
            self.say(f"Talking to {name} as {self.user_name}. {HELP}")
            # The same jobs as the Discord bot's (memory.jobs); the reflections a previous
            # session left waiting are among the first runs.
            self.jobs = start_jobs(self.runtime)
        try:
            while True:
                if self.interactive:
                    with logs.prompt_waiting(PROMPT, self.out):
                        line = await reader.readline()
                else:
                    line = await reader.readline()
                if not line or not await self.handle(line):
                    break
            await self._settle()  # a script's last reply: its answers settle at the end
        finally:
            if self.interactive:
                self._print("")  # the shell's prompt on a line of its own
            # In order: the jobs end (their runs too), then this chat's own reflections. One
            # cut short stays in the outbox, and the next start reflects on it.
            if self.jobs is not None:
                await self.jobs.stop()
            for task in self._background:
                task.cancel()
            await asyncio.gather(*self._background, return_exceptions=True)


class _Writing:
    """The line an interactive chat shows while the character writes ("Écho is writing…", as
    Discord shows typing), and once, past SLOW_SERVER_SECONDS without a word from the server,
    that it is still waiting. It gives way to the first words of the reply, and is cleared when
    the turn ends however it ends."""

    def __init__(self, terminal: Terminal, name: str) -> None:
        self.terminal = terminal
        self.line = f"{name} is writing…"
        self._shown = False
        self._stopped = False
        self.show()
        self._slow = asyncio.create_task(self._wait_for_server())

    async def _wait_for_server(self) -> None:
        await self.terminal.sleep(SLOW_SERVER_SECONDS)
        self.line += (
            f" (no word from the server after {SLOW_SERVER_SECONDS:.0f} s: a model on a CPU"
            " may take a minute; Ctrl-C stops)"
        )
        if self._shown:
            self.clear()
            self.show()

    def show(self) -> None:
        if not self._stopped and not self._shown:
            self.terminal._print(self.line, end="")
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.terminal._print(_CLEAR_LINE, end="")
            self._shown = False

    def stop(self) -> None:
        """The reply begins or the turn ended: the line goes, and never comes back."""
        self.clear()
        self._stopped = True
        self._slow.cancel()


class _Streamed:
    """A reply printed as it arrives: what is new in each text is appended to its line. The
    configured secrets are taken out as for every line printed: the end of the text, where one
    may be still arriving, waits until it is known whole."""

    def __init__(self, terminal: Terminal, name: str, writing: _Writing | None = None) -> None:
        self.terminal = terminal
        self.name = name
        self.printed = ""
        self._open = False
        self._writing = writing

    async def __call__(self, text: str) -> None:
        secrets = self.terminal.runtime.secrets
        safe = secrets.remove(text)
        held = max(0, secrets.longest - 1)
        self._more(safe[: len(safe) - held] if held else safe)

    def _more(self, text: str) -> None:
        if not text.startswith(self.printed) or text == self.printed:
            return
        if not self._open:
            if self._writing is not None:
                self._writing.stop()
            self.terminal._print(f"{self.name}: ", end="")
            self._open = True
        self.terminal._print(text[len(self.printed) :], end="")
        self.printed = text

    def finish(self, text: str) -> None:
        """Print the rest of the reply and end its line."""
        whole = self.terminal.runtime.secrets.remove(text)
        if whole.startswith(self.printed):
            self._more(whole)
            self.end()
        else:  # never expected: the texts shown are prefixes of the reply
            self.end()
            self.terminal._print(f"{self.name}: {whole}")

    def end(self) -> None:
        if self._open:
            self.terminal._print("")
            self._open = False


@dataclass(frozen=True)
class _Question:
    """A y/N question waiting for the next line: what y does, and what is said otherwise."""

    name: str
    act: Callable[[], Awaitable[None]]
    kept: str


def is_interactive(stream: TextIO = sys.stdin) -> bool:
    return stream.isatty()
