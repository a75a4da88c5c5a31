"""The answers to one message: under the character's reply, "Another answer" and ◀ n/N ▶; in
/why, an "Answer again without #id" button beside each memory (that answer leaves the memory out,
so the person sees what it changes).

The buttons are discord.ui.DynamicItem: their custom ids carry the exchange (the message's source
id), and the bot registers their templates at start, so a button posted before a restart still
works. Who may press: the person the reply answered, or someone with Manage Messages; the others
get one private line. A version longer than one Discord message is shown as its opening with
the whole answer attached as a text file: no text is lost.
"""

from __future__ import annotations

import io
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, cast

import discord
from discord.ext import commands

from bot import render
from bot.discord import faces
from bot.discord.ui import answer_error, send_ephemeral
from memory import (
    AnswerSet,
    EchoError,
    NotFound,
    Overloaded,
    Regenerating,
    Settled,
    Turn,
    manage,
    unexpected,
)

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

log = logging.getLogger(__name__)

_EXCHANGE = r"(?P<exchange>[a-z]+:[0-9]+)"
NOT_YOURS = "Only the person this answered, or someone with Manage Messages, can change its answer."
BUSY = "I'm already writing another answer to this message."
SETTLED = (
    "The answers to this message can no longer change: what I learned from it, I learned from "
    "the one shown."
)
UNAVAILABLE = "I can't reach my language model right now — please try again in a moment."
SLOW_DOWN = "I'm still answering your earlier messages here; try again in a moment."
GONE = "This message is no longer stored."
# Buttons beside the memories in /why: Discord allows 25 components in 5 rows of 5, and the
# Edit list takes a whole row; past it, a line says which memories have no button.
WITHOUT_BUTTONS = 20
# Where the reply of each recent exchange is on Discord (the message with the buttons), so an
# answer asked for from /why edits it too; after a restart, a press on it teaches it again.
POSTS_REMEMBERED = 4096

_NONE = discord.AllowedMentions.none()


def reply_view(versions: AnswerSet) -> discord.ui.View:
    """The buttons under a reply: ◀ n/N ▶ and Another answer (◀ ▶ only once there are two)."""
    view = discord.ui.View(timeout=None)
    ex = versions.exchange_id
    if versions.count > 1:
        view.add_item(Swipe(ex, "prev", disabled=versions.shown == 0))
        view.add_item(
            discord.ui.Button(
                label=f"{versions.shown + 1}/{versions.count}",
                disabled=True,
                custom_id=f"echo:count:{ex}",
            )
        )
        view.add_item(Swipe(ex, "next", disabled=versions.shown >= versions.count - 1))
    view.add_item(AnotherAnswer(ex))
    return view


def version_message(
    versions: AnswerSet, limit: int = render.DISCORD_LIMIT
) -> tuple[str, list[discord.File]]:
    """The message showing the version shown: its text (and the cut line), or, when longer
    than one message (`limit` characters), its opening and the whole answer as a file."""
    shown = versions.current
    text = shown.text + ("\n" + render.cut_line(shown.cut) if shown.cut else "")
    chunks = render.split_message(render.defang(text), limit)
    if len(chunks) <= 1:
        return (chunks[0] if chunks else "…"), []
    note = "\n(The whole answer is in the attached file.)"
    opening = render.split_message(chunks[0], limit - len(note))[0]
    name = f"answer-{versions.shown + 1}.txt"
    return opening + note, [discord.File(io.BytesIO(text.encode()), filename=name)]


def shown_on(
    versions: AnswerSet, message: discord.Message | None
) -> tuple[str, list[discord.File]]:
    """`version_message` for the message that shows the reply: its first line kept (a
    character's: what it answers, or who speaks; bot.discord.faces), the rest within it."""
    header = faces.header_of(message.content) if message is not None else ""
    content, files = version_message(versions, render.DISCORD_LIMIT - len(header))
    return header + content, files


def _may_change(interaction: discord.Interaction[Any], versions: AnswerSet) -> bool:
    return interaction.user.id == versions.user_id or bool(interaction.permissions.manage_messages)


def _cog(client: discord.Client) -> Answers | None:
    """The Answers cog (by name: an extension's module is its own copy, so not isinstance)."""
    cog = client.get_cog("Answers") if isinstance(client, commands.Bot) else None
    return cast("Answers", cog) if cog is not None and hasattr(cog, "posted_at") else None


def posted(client: discord.Client, exchange_id: str, message: discord.Message) -> None:
    """Remember where the reply of an exchange was posted (the message with the buttons)."""
    if (cog := _cog(client)) is not None:
        cog.posted_at(exchange_id, message)


async def _versions(
    interaction: discord.Interaction[Any], exchange_id: str, *, settled: bool = False
) -> AnswerSet | None:
    """The answers to the exchange, if this person may change them; otherwise say why.
    `settled`: settled answers are taken too (a failed turn's message has none to settle: the
    engine says whether it can still be answered)."""
    try:
        versions: AnswerSet = await interaction.client.runtime.engine.versions(exchange_id)
    except NotFound:
        await send_ephemeral(interaction, GONE)
        return None
    if not _may_change(interaction, versions):
        await send_ephemeral(interaction, NOT_YOURS)
        return None
    if versions.settled and not settled:
        await send_ephemeral(interaction, SETTLED)
        return None
    return versions


async def _shown_in_place(
    interaction: discord.Interaction[Any], exchange_id: str, versions: AnswerSet
) -> None:
    """Edit the pressed message (after a deferred press) to the answer shown, with the reply's
    buttons, and remember it as where the exchange's reply is."""
    content, files = shown_on(versions, interaction.message)
    await interaction.edit_original_response(
        content=content,
        attachments=files,
        view=reply_view(versions),
        allowed_mentions=_NONE,
    )
    if interaction.message is not None:
        posted(interaction.client, exchange_id, interaction.message)


async def _again(
    interaction: discord.Interaction[Any], exchange_id: str, without: frozenset[int]
) -> AnswerSet | None:
    """Write another answer (the interaction already acknowledged); say it when none came."""
    engine = interaction.client.runtime.engine
    try:
        await engine.regenerate(exchange_id, without=without)
    except Regenerating:
        await send_ephemeral(interaction, BUSY)
        return None
    except Settled:
        await send_ephemeral(interaction, SETTLED)
        return None
    except Overloaded:
        await send_ephemeral(interaction, SLOW_DOWN)
        return None
    except EchoError as exc:
        log.warning("no other answer to %s: %s", exchange_id, type(exc).__name__)
        await send_ephemeral(interaction, UNAVAILABLE)
        return None
    versions: AnswerSet = await engine.versions(exchange_id)
    return versions


class AnotherAnswer(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"echo:again:{_EXCHANGE}"
):
    """Ask the character for another answer to the message; the reply is edited to it."""

    def __init__(self, exchange_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="Another answer",
                style=discord.ButtonStyle.secondary,
                custom_id=f"echo:again:{exchange_id}",
            )
        )
        self.exchange_id = exchange_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> AnotherAnswer:
        return cls(match["exchange"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            versions = await _versions(interaction, self.exchange_id)
            if versions is None:
                return
            await interaction.response.defer()  # the answer takes longer than Discord waits
            versions = await _again(interaction, self.exchange_id, frozenset())
            if versions is not None:
                await _shown_in_place(interaction, self.exchange_id, versions)
        except Exception as exc:
            await answer_error(interaction, exc, "another answer")


def retry_view(exchange_id: str) -> discord.ui.View:
    """The button under the line saying a message could not be answered."""
    view = discord.ui.View(timeout=None)
    view.add_item(TryAgain(exchange_id))
    return view


class TryAgain(discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"echo:retry:{_EXCHANGE}"):
    """Under "I can't reach my language model": answer that message now (the server is back),
    the line edited to the reply with its buttons. The message is in the history once: nothing
    to type again."""

    def __init__(self, exchange_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="Try again",
                style=discord.ButtonStyle.primary,
                custom_id=f"echo:retry:{exchange_id}",
            )
        )
        self.exchange_id = exchange_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> TryAgain:
        return cls(match["exchange"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            if await _versions(interaction, self.exchange_id, settled=True) is None:
                return
            await interaction.response.defer()  # the answer takes longer than Discord waits
            # A message answered since (another press, a restart's replay) is Settled: the
            # presser is told privately, and the line stays as it is.
            answered = await _again(interaction, self.exchange_id, frozenset())
            if answered is None:
                return
            await _shown_in_place(interaction, self.exchange_id, answered)
            if interaction.message is not None:
                store = interaction.client.runtime.store
                await manage.record_sent(store, self.exchange_id, [interaction.message.id])
            # Learned from as a turn's reply is: the reflection, after its answers settle.
            await interaction.client.after_turns()
        except Exception as exc:
            await answer_error(interaction, exc, "try again")


class Swipe(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=rf"echo:swipe:(?P<step>prev|next):{_EXCHANGE}",
):
    """◀ or ▶: show the answer before or after the one shown."""

    def __init__(self, exchange_id: str, step: str, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                label="◀" if step == "prev" else "▶",
                style=discord.ButtonStyle.secondary,
                custom_id=f"echo:swipe:{step}:{exchange_id}",
                disabled=disabled,
            )
        )
        self.exchange_id = exchange_id
        self.step = step

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> Swipe:
        return cls(match["exchange"], match["step"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            versions = await _versions(interaction, self.exchange_id)
            if versions is None:
                return
            target = versions.shown + (1 if self.step == "next" else -1)
            engine = interaction.client.runtime.engine
            if 0 <= target < versions.count:
                try:
                    await engine.swipe(self.exchange_id, target)
                except Settled:
                    await send_ephemeral(interaction, SETTLED)
                    return
                versions = await engine.versions(self.exchange_id)
            content, files = shown_on(versions, interaction.message)
            await interaction.response.edit_message(
                content=content,
                attachments=files,
                view=reply_view(versions),
                allowed_mentions=_NONE,
            )
            if interaction.message is not None:
                posted(interaction.client, self.exchange_id, interaction.message)
        except Exception as exc:
            await answer_error(interaction, exc, "swipe")


class Without(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=rf"echo:without:(?P<memory>[0-9]+):{_EXCHANGE}",
):
    """In /why: answer the message again without this memory (for that answer only); /why's
    answer then shows that answer's selection, and the reply in the channel shows it."""

    def __init__(self, exchange_id: str, memory_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label=f"Without #{memory_id}",
                style=discord.ButtonStyle.secondary,
                custom_id=f"echo:without:{memory_id}:{exchange_id}",
            )
        )
        self.exchange_id = exchange_id
        self.memory_id = memory_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> Without:
        return cls(match["exchange"], int(match["memory"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            versions = await _versions(interaction, self.exchange_id)
            if versions is None:
                return
            if interaction.user.id != versions.user_id:  # the memories are theirs alone
                await send_ephemeral(interaction, NOT_YOURS)
                return
            await interaction.response.defer()
            versions = await _again(interaction, self.exchange_id, frozenset({self.memory_id}))
            if versions is None:
                return
            cog = _cog(interaction.client)
            shown = await cog.show(versions) if cog is not None else False
            text, view = await why_answer(interaction, interaction.user.id)
            where = "shown under the reply" if shown else "press ◀ or ▶ under the reply to see it"
            head = (
                f"Answered again without #{self.memory_id} ({where}):\n"
                f"{render.excerpt(versions.current.text, 300)}\n\n"
            )
            await interaction.edit_original_response(
                content=render.defang(head + text)[: render.DISCORD_LIMIT],
                view=view,
                allowed_mentions=_NONE,
            )
        except Exception as exc:
            await answer_error(interaction, exc, "without")


def without_buttons(view: discord.ui.View, turn: Turn) -> str:
    """Add an "Answer again without" button beside each memory of the turn's, as many as
    Discord allows; return the line to add to /why's answer ('' when none is needed)."""
    if not turn.exchange_id:
        return ""
    used = [s.memory.id for s in turn.selected]
    for memory_id in used[:WITHOUT_BUTTONS]:
        view.add_item(Without(turn.exchange_id, memory_id))
    if not used:
        return ""
    line = "Without #…: the same message answered again without that memory, to compare."
    if len(used) > WITHOUT_BUTTONS:
        line += f" (Buttons for the first {WITHOUT_BUTTONS}: Discord allows no more.)"
    return line


async def why_answer(
    interaction: discord.Interaction[Any], user_id: int
) -> tuple[str, discord.ui.View | None]:
    """/why's answer for the caller here, and its view (Edit, and the Without buttons)."""
    cog = interaction.client.get_cog("MemoryCommands")
    assert cog is not None
    found: tuple[str, discord.ui.View | None] = await cog.why_answer(interaction)
    return found


class Answers(commands.Cog):
    """Holds where each recent reply is on Discord, and registers the answers' buttons."""

    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        # By exchange: the channel, the message and, until a restart, the message itself (a
        # webhook's is edited through its webhook, and keeps its first line).
        self._posted: OrderedDict[str, tuple[int, int, discord.Message | None]] = OrderedDict()

    def posted_at(self, exchange_id: str, message: discord.Message) -> None:
        """Remember the message that shows this exchange's reply (the one with the buttons)."""
        self._posted[exchange_id] = (message.channel.id, message.id, message)
        self._posted.move_to_end(exchange_id)
        while len(self._posted) > POSTS_REMEMBERED:
            self._posted.popitem(last=False)

    async def show(self, versions: AnswerSet) -> bool:
        """Edit the reply on Discord to the version shown; False when it is not known here."""
        where = self._posted.get(versions.exchange_id)
        if where is None:
            return False
        channel_id, message_id, held = where
        content, files = shown_on(versions, held)
        target: discord.Message | discord.PartialMessage = (
            held
            if held is not None
            else self.bot.get_partial_messageable(channel_id).get_partial_message(message_id)
        )
        try:
            await target.edit(
                content=content,
                attachments=files,
                view=reply_view(versions),
                allowed_mentions=_NONE,
            )
        except discord.HTTPException as exc:
            log.info("reply of %s not edited (%s)", versions.exchange_id, exc.status)
            return False
        except Exception as exc:
            log.error("reply of %s not edited: %s", versions.exchange_id, unexpected(exc))
            return False
        return True


async def setup(bot: EchoBot) -> None:
    bot.add_dynamic_items(AnotherAnswer, TryAgain, Swipe, Without)
    await bot.add_cog(Answers(bot))
