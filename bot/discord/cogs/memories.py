"""Slash commands over a person's own memories: /why /memories /pin /unpin /forget /restore
/remember, and the Edit action on the memories /why and /memories show.

Each command parses the interaction, calls one engine function with the caller's id, renders.
Another person's memory id answers exactly like a missing one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.cogs.answers import without_buttons
from bot.discord.ui import (
    EchoView,
    Interaction,
    answer_error,
    language_of,
    origin_of,
    person_here,
    playing_here,
    send_ephemeral,
    story_here,
    whose_memories,
)
from memory import Kind, Language, Memory, Scope, Store, Turn, manage
from memory.manage import followups, forgetting, privacy, story, versions

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


async def memory_choices(interaction: Interaction, current: str) -> list[app_commands.Choice[int]]:
    """The caller's own memories that hold what was typed so far (or have that id)."""
    store = interaction.client.runtime.store
    found = await manage.list_memories(store, person_here(interaction), query=current)
    return [app_commands.Choice(name=f"#{m.id} {m.text}"[:100], value=m.id) for m in found[:25]]


class EditMemory(discord.ui.Modal, title="Edit a memory"):
    """The memory's text, prefilled; what is submitted becomes its new version (the old one kept
    as history). The memory is looked up with the submitter's id: another's answers as missing.
    `person_id`: the id it is kept under, when the form opens away from where it was learned
    (a receipt's Edit, in DMs), its owner checked by the caller."""

    def __init__(self, memory: Memory, *, person_id: int | None = None) -> None:
        super().__init__(timeout=600)
        self.memory_id = memory.id
        self.person_id = person_id
        self.text: discord.ui.TextInput[EditMemory] = discord.ui.TextInput(
            label=f"Memory #{memory.id}",
            style=discord.TextStyle.paragraph,
            default=memory.text,
            max_length=versions.MAX_CHARS,
        )
        self.add_item(self.text)

    async def on_submit(self, interaction: Interaction) -> None:  # type: ignore[override]
        runtime = interaction.client.runtime
        edited = await versions.edit(
            runtime.store,
            self.person_id if self.person_id is not None else person_here(interaction),
            self.memory_id,
            self.text.value,
            builder=runtime.worker.builder,
        )
        await send_ephemeral(
            interaction,
            f"#{edited.id} now says: {edited.text}\n(The old wording: /memories history:"
            f"{edited.id}; /restore brings it back.)",
        )

    async def on_error(  # type: ignore[override]
        self, interaction: Interaction, error: Exception
    ) -> None:
        await answer_error(interaction, error, "edit")


class EditChoice(discord.ui.Select["EchoView"]):
    """ "Edit…": pick one of the memories shown, and its text opens in a form."""

    def __init__(self, items: Sequence[Memory]) -> None:
        super().__init__(placeholder="Edit…", row=1)
        self.show(items)

    def show(self, items: Sequence[Memory]) -> None:
        self.options = [
            discord.SelectOption(label=f"#{m.id} {m.text}"[:100], value=str(m.id))
            for m in items[:25]
        ]
        self.disabled = not self.options
        if not self.options:  # Discord refuses a select without options
            self.options = [discord.SelectOption(label="—", value="0")]

    async def callback(self, interaction: Interaction) -> None:  # type: ignore[override]
        store = interaction.client.runtime.store
        memory = await manage.get(store, person_here(interaction), int(self.values[0]))
        await interaction.response.send_modal(EditMemory(memory))


class Editable(EchoView):
    """An Edit action on the memories an answer shows; only their owner can use it."""

    def __init__(self, owner_id: int, items: Sequence[Memory]) -> None:
        super().__init__(timeout=600)
        self.owner_id = owner_id
        self.add_item(EditChoice(items))

    async def interaction_check(self, interaction: Interaction) -> bool:  # type: ignore[override]
        return interaction.user.id == self.owner_id


class MemoryPages(EchoView):
    """Buttons to page through one person's memories, and an Edit action on the page's; only
    they can press them."""

    def __init__(
        self,
        owner_id: int,
        items: list[Memory],
        *,
        everywhere: bool = False,
        told: render.Told | None = None,
        replaced: Mapping[int, float] | None = None,
        language: Language = "en",
    ) -> None:
        super().__init__(timeout=600)
        self.owner_id = owner_id
        self.everywhere = everywhere
        # The owner's language, the only one who may turn the pages.
        self.language = language
        self.told = told
        self.replaced = replaced or {}
        self.pages = render.paginate(items)
        self.total = len(items)
        self.index = 0
        self.edit = EditChoice(self.pages[0])
        self.add_item(self.edit)
        self._update_buttons()

    def text(self) -> str:
        return render.render_memories(
            self.pages[self.index],
            page_index=self.index,
            pages=len(self.pages),
            total=self.total,
            everywhere=self.everywhere,
            told=self.told,
            replaced=self.replaced,
            language=self.language,
        )

    def _update_buttons(self) -> None:
        self.previous.disabled = self.index == 0
        self.next.disabled = self.index >= len(self.pages) - 1
        self.edit.show(self.pages[self.index])

    async def interaction_check(self, interaction: Interaction) -> bool:  # type: ignore[override]
        return interaction.user.id == self.owner_id

    async def _show(self, interaction: Interaction, step: int) -> None:
        self.index = max(0, min(len(self.pages) - 1, self.index + step))
        self._update_buttons()
        await interaction.response.edit_message(
            content=render.defang(self.text()), view=self, allowed_mentions=None
        )

    @discord.ui.button(label="◀", style=discord.ButtonStyle.secondary)
    async def previous(
        self, interaction: Interaction, button: discord.ui.Button[MemoryPages]
    ) -> None:
        await self._show(interaction, -1)

    @discord.ui.button(label="▶", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: Interaction, button: discord.ui.Button[MemoryPages]) -> None:
        await self._show(interaction, +1)


class ConfirmForget(EchoView):
    """Asks before erasing for good."""

    def __init__(self, owner_id: int, memory_id: int) -> None:
        super().__init__(timeout=120)
        self.owner_id = owner_id
        self.memory_id = memory_id

    async def interaction_check(self, interaction: Interaction) -> bool:  # type: ignore[override]
        return interaction.user.id == self.owner_id

    @discord.ui.button(label="Forget", style=discord.ButtonStyle.danger)
    async def confirm(
        self, interaction: Interaction, button: discord.ui.Button[ConfirmForget]
    ) -> None:
        forgotten = await forgetting.forget_memory(
            interaction.client.runtime.store, person_here(interaction), self.memory_id
        )
        self.stop()
        await interaction.response.edit_message(
            content=render.render_forgotten(forgotten), view=None
        )

    @discord.ui.button(label="Keep", style=discord.ButtonStyle.secondary)
    async def cancel(
        self, interaction: Interaction, button: discord.ui.Button[ConfirmForget]
    ) -> None:
        self.stop()
        await interaction.response.edit_message(content="Kept.", view=None)


class MemoryCommands(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @property
    def store(self) -> Store:
        return self.bot.runtime.store

    async def served_everywhere(self, interaction: Interaction) -> bool:
        """Whether the caller's memories are served everywhere (their choice or the default)."""
        default = self.bot.runtime.settings.privacy.memories_served
        found = await privacy.get(self.store, interaction.user.id, default=default)
        return found.everywhere

    async def told(self, interaction: Interaction, found: Sequence[Memory]) -> render.Told:
        """When and where each of these memories of the caller's was learned, dated now."""
        engine = self.bot.runtime.engine
        learned = await manage.learned(self.store, person_here(interaction), found)
        return render.Told(engine.clock(), engine.character.zone, learned)

    @app_commands.command(
        name=_("why"), description=_("The memories used for your last message here, and why")
    )
    async def why(self, interaction: Interaction) -> None:
        text, view = await self.why_answer(interaction)
        await send_ephemeral(interaction, text, view=view)

    async def why_answer(self, interaction: Interaction) -> tuple[str, discord.ui.View | None]:
        """/why's text for the caller here (the selection behind the answer shown) and its
        view: Edit, and beside each memory a button answering again without it."""
        turn = await manage.why(self.store, person_here(interaction), story_here(interaction))
        everywhere = await self.served_everywhere(interaction)
        used = [s.memory for s in turn.selected] if turn else []
        replaced = await versions.replaced_until(
            self.store, person_here(interaction), [m.id for m in used]
        )
        told = await self.told(interaction, used)
        text = render.render_why(
            turn,
            everywhere=everywhere,
            told=told,
            replaced=replaced,
            language=language_of(interaction),
            pictured=await manage.from_pictures(self.store, person_here(interaction), used),
        )
        text = whose_memories(interaction) + await self.followup_line(interaction, turn) + text
        if not used or turn is None:
            return text, None
        view = Editable(interaction.user.id, used)
        line = without_buttons(view, turn)
        return (f"{text}\n{line}" if line else text), view

    async def followup_line(self, interaction: Interaction, turn: Turn | None) -> str:
        """The line naming the memory a follow-up came from, when the character's last message
        here was one (sent after the last turn /why explains), else ""."""
        sent = await followups.last_sent(self.store, interaction.user.id, story_here(interaction))
        if sent is None or (turn is not None and (sent.sent_at or 0.0) <= turn.created_at):
            return ""
        return render.render_followup_why(sent, playing_here(interaction).zone) + "\n"

    @app_commands.command(name=_("memories"), description=_("Your memories, page by page"))
    @app_commands.describe(
        filter=_("Only those never served, or those containing this text"),
        history=_("One of your memories: its versions, with their dates"),
    )
    @app_commands.autocomplete(history=memory_choices)
    async def memories(
        self, interaction: Interaction, filter: str | None = None, history: int | None = None
    ) -> None:
        if history is not None:
            chain = await versions.history(self.store, person_here(interaction), history)
            await send_ephemeral(
                interaction,
                render.render_versions(chain, language=language_of(interaction)),
                view=Editable(interaction.user.id, [chain.memory]),
            )
            return
        never = (filter or "").strip().casefold() in ("never", "never served", "jamais")
        found = await manage.list_memories(
            self.store,
            person_here(interaction),
            never_served=never,
            query="" if never or filter is None else filter,
        )
        replaced = await versions.replaced_until(
            self.store, person_here(interaction), [m.id for m in found]
        )
        view = MemoryPages(
            interaction.user.id,
            found,
            everywhere=await self.served_everywhere(interaction),
            told=await self.told(interaction, found),
            replaced=replaced,
            language=language_of(interaction),
        )
        await interaction.response.send_message(
            render.defang(whose_memories(interaction) + view.text()),
            view=view,
            ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none(),
        )

    @app_commands.command(name=_("pin"), description=_("Always keep this memory in the context"))
    @app_commands.describe(memory=_("One of your memories"))
    @app_commands.autocomplete(memory=memory_choices)
    async def pin(self, interaction: Interaction, memory: int) -> None:
        found = await manage.set_pinned(self.store, person_here(interaction), memory, True)
        await send_ephemeral(interaction, f"Pinned #{found.id}.")

    @app_commands.command(name=_("unpin"), description=_("Stop always keeping this memory"))
    @app_commands.describe(memory=_("One of your memories"))
    @app_commands.autocomplete(memory=memory_choices)
    async def unpin(self, interaction: Interaction, memory: int) -> None:
        found = await manage.set_pinned(self.store, person_here(interaction), memory, False)
        await send_ephemeral(interaction, f"Unpinned #{found.id}.")

    @app_commands.command(name=_("forget"), description=_("Erase this memory for good"))
    @app_commands.describe(memory=_("One of your memories"))
    @app_commands.autocomplete(memory=memory_choices)
    async def forget(self, interaction: Interaction, memory: int) -> None:
        target = await manage.get(self.store, person_here(interaction), memory)
        await interaction.response.send_message(
            render.defang(f"Forget this for good?\n{render.memory_line(target)}"),
            view=ConfirmForget(interaction.user.id, memory),
            ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none(),
        )

    @app_commands.command(
        name=_("restore"), description=_("Bring back this memory's version before its last change")
    )
    @app_commands.describe(memory=_("One of your memories"))
    @app_commands.autocomplete(memory=memory_choices)
    async def restore(self, interaction: Interaction, memory: int) -> None:
        found = await versions.restore(self.store, person_here(interaction), memory)
        await send_ephemeral(interaction, f"#{found.id} is back to: {found.text}")

    @app_commands.command(
        name=_("summary"), description=_("This conversation's summary and anchors")
    )
    async def summary(self, interaction: Interaction) -> None:
        found = await story.summary(self.store, story_here(interaction))
        await send_ephemeral(interaction, render.render_summary(found))

    @app_commands.command(name=_("remember"), description=_("Add a memory yourself"))
    @app_commands.describe(
        text=_("What to remember"),
        kind=_("Fact, preference, promise, episode or rule"),
        scope=_("Everywhere, or only in this conversation"),
    )
    async def remember(
        self,
        interaction: Interaction,
        text: str,
        kind: Literal["fact", "preference", "promise", "episode", "rule"] = "fact",
        scope: Literal["global", "story"] = "global",
    ) -> None:
        outcome = await manage.remember(
            self.store,
            user_id=person_here(interaction),
            story_id=story_here(interaction),
            origin=origin_of(interaction),
            text=text,
            kind=Kind(kind),
            scope=Scope(scope),
            builder=self.bot.runtime.worker.builder,
            # "tomorrow" is read on the engine's clock, in the zone reflections read dates in.
            now=self.bot.runtime.engine.clock(),
            zone=self.bot.runtime.engine.zone,
        )
        await send_ephemeral(
            interaction,
            render.remembered(
                outcome.memory_id, outcome.action, outcome.text, kind=Kind(kind), typed=text
            ),
        )


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(MemoryCommands(bot))
