"""Off the record, and receipts.

A person keeps one of their messages out of memory with the message menu "Don't remember this"
or a 🤐 reaction on it, before or after it is answered: it is answered and kept in the history
for the conversation, never reflected, and what was already learned from it is taken back
(memory.manage.forgetting.keep_off_record). Only its author may: another person's menu gets one
private line, their reaction does nothing.

Receipts (/privacy receipts:on): when a reflection stores something from a person's message,
they get a direct message saying what, with Undo (forget that memory) and Edit (the edit form)
beside each. A bot can answer privately only inside an interaction, so a receipt is a DM; a
person whose DMs are closed gets none (counted). The buttons are DynamicItems: their custom ids
carry the memory and the id it is kept under, so they work after a restart, for its owner only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.cogs.memories import EditMemory
from bot.discord.ui import Interaction, answer_error, send_ephemeral
from memory import Forbidden, manage
from memory.manage import casting, forgetting
from memory.manage.receipts import Receipt, Receipts

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

log = logging.getLogger(__name__)

ZIPPED = "\N{ZIPPER-MOUTH FACE}"
NOT_YOURS = "Only its author can keep a message off the record."
KEPT = "I'll answer it as usual, but I won't remember it."
TAKEN_BACK = "I won't remember it: what I had learned from it is gone."
# Discord allows five rows of buttons on a message: one row (Undo, Edit) per memory.
RECEIPT_ROWS = 5


class OffRecord(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        self.menu = app_commands.ContextMenu(
            name=_("Don't remember this"), callback=self.dont_remember
        )
        self.receipts = Receipts(bot.runtime.store, bot.runtime.worker, self.send_receipt)

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.menu.name, type=self.menu.type)
        await self.receipts.close()

    async def dont_remember(self, interaction: Interaction, message: discord.Message) -> None:
        if message.author.id != interaction.user.id or message.author.bot:
            await send_ephemeral(interaction, NOT_YOURS)
            return
        done = await self._keep(message.id, message.author.id)
        await send_ephemeral(interaction, TAKEN_BACK if done.taken_back else KEPT)

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        me = self.bot.user
        if str(payload.emoji) != ZIPPED or me is None or payload.user_id == me.id:
            return
        author = payload.message_author_id
        if author is None:  # not sent (an older gateway): the stored message's author
            stored = await forgetting.resolve(
                self.bot.runtime.store, f"discord:{payload.message_id}"
            )
            if stored is None or stored.role != "user" or stored.user_id is None:
                return
            author = (await casting.owner(self.bot.runtime.store, stored.user_id))[0]
        if author != payload.user_id:
            return  # someone else's message: nothing happens
        await self._keep(payload.message_id, author)

    async def _keep(self, message_id: int, author: int) -> forgetting.OffRecord:
        """Keep a message off the record (its turn may still run: its reflection, whenever
        it comes, finds the mark)."""
        return await forgetting.keep_off_record(
            self.bot.runtime.store, f"discord:{message_id}", user_id=author
        )

    async def send_receipt(self, receipt: Receipt) -> bool:
        """DM the person what a reflection stored from their message; False when their DMs
        are closed (or Discord refused it)."""
        where = f"<#{receipt.place_id}>" if receipt.place_id is not None else "our DMs"
        shown = receipt.memories[:RECEIPT_ROWS]
        lines = [f"Noted from your message in {where}:"]
        lines += [f"• #{m.id} {m.text}" for m in shown]
        if len(receipt.memories) > len(shown):
            lines.append(f"(and {len(receipt.memories) - len(shown)} more: see /memories)")
        view = discord.ui.View(timeout=None)
        for row, m in enumerate(shown):
            view.add_item(UndoMemory(receipt.person_id, m.id, row=row))
            view.add_item(EditFromReceipt(receipt.person_id, m.id, row=row))
        text = self.bot.runtime.secrets.remove("\n".join(lines))
        try:
            channel = await self.bot.create_dm(discord.Object(receipt.user_id))
            await channel.send(
                render.split_message(render.defang(text))[0],
                view=view,
                allowed_mentions=discord.AllowedMentions.none(),
            )
        except discord.HTTPException as exc:
            log.info(
                "receipt of exchange %s not delivered: Discord said %d",
                receipt.exchange_id,
                exc.status,
            )
            return False
        return True


async def _owned(interaction: discord.Interaction[Any], person_id: int) -> None:
    """Refuse a receipt's button to anyone but the person it was sent to."""
    store = interaction.client.runtime.store
    if (await casting.owner(store, person_id))[0] != interaction.user.id:
        raise Forbidden("only the person this receipt was sent to can change that memory")


_IDS = r"(?P<person>[0-9]+):(?P<memory>[0-9]+)"


class UndoMemory(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"echo:receipt:undo:{_IDS}"
):
    """Forget the memory a receipt names, for good (as /forget does)."""

    def __init__(self, person_id: int, memory_id: int, *, row: int | None = None) -> None:
        super().__init__(
            discord.ui.Button(
                label=f"Undo #{memory_id}",
                style=discord.ButtonStyle.danger,
                custom_id=f"echo:receipt:undo:{person_id}:{memory_id}",
                row=row,
            )
        )
        self.person_id = person_id
        self.memory_id = memory_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> UndoMemory:
        return cls(int(match["person"]), int(match["memory"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await _owned(interaction, self.person_id)
            forgotten = await forgetting.forget_memory(
                interaction.client.runtime.store, self.person_id, self.memory_id
            )
            await send_ephemeral(interaction, render.render_forgotten(forgotten))
        except Exception as exc:
            await answer_error(interaction, exc, "undo")


class EditFromReceipt(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"echo:receipt:edit:{_IDS}"
):
    """Open the edit form on the memory a receipt names."""

    def __init__(self, person_id: int, memory_id: int, *, row: int | None = None) -> None:
        super().__init__(
            discord.ui.Button(
                label="Edit",
                style=discord.ButtonStyle.secondary,
                custom_id=f"echo:receipt:edit:{person_id}:{memory_id}",
                row=row,
            )
        )
        self.person_id = person_id
        self.memory_id = memory_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: Any, /
    ) -> EditFromReceipt:
        return cls(int(match["person"]), int(match["memory"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await _owned(interaction, self.person_id)
            store = interaction.client.runtime.store
            memory = await manage.get(store, self.person_id, self.memory_id)
            await interaction.response.send_modal(EditMemory(memory, person_id=self.person_id))
        except Exception as exc:
            await answer_error(interaction, exc, "edit")


async def setup(bot: EchoBot) -> None:
    bot.add_dynamic_items(UndoMemory, EditFromReceipt)
    await bot.add_cog(OffRecord(bot))
