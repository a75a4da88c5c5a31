"""What the background loops keep about a story (condensed history, anchors, the character's
positions, state), gathered for the prompt and for /summary."""

from __future__ import annotations

from memory.context.prompt import StoryContext
from memory.store import history
from memory.store import story as shared
from memory.store.db import Store
from memory.write import stances, state


async def story_context(store: Store, story_id: int) -> StoryContext:
    """Gather what the loops keep about a story, for the prompt and for /summary."""
    positions = await stances.for_story(store, story_id)
    speakers = await shared.position_speakers(store, story_id)
    return StoryContext(
        summary=await history.summary(store, story_id),
        anchors=tuple(
            (a.text, "a moderator" if a.added_by is not None else a.speaker or "")
            for a in await shared.anchors(store, story_id)
            if a.dropped_at is None
        ),
        positions=tuple(
            (p.topic, p.idea, ", ".join(speakers.get(p.id, ())))
            for p in positions[: stances.PROMPT_POSITIONS]
        ),
        state=tuple((await state.for_story(store, story_id)).items()),
    )
