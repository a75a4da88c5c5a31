"""What a turn shows of a story: read once (memory.store.queries.story_snapshot) for the prompt
and the conversation query, and what the background loops keep of it (condensed history,
anchors, the character's positions, state) laid out for the prompt."""

from __future__ import annotations

from memory.context.prompt import StoryContext
from memory.recall.conversation import CONVERSATION_WINDOW
from memory.store import Store
from memory.store.queries import story_snapshot
from memory.store.queries.story_snapshot import StorySnapshot
from memory.write import stances


async def read_story(
    store: Store, story_id: int, *, before_id: int | None, history_messages: int
) -> StorySnapshot:
    """Read what a turn shows of a story, in one go: the last `history_messages` before
    `before_id` (None: all stored) for the prompt, the conversation query's window, the rest."""
    return await story_snapshot.read(
        store,
        story_id,
        before_id=before_id,
        history=history_messages,
        conversation=CONVERSATION_WINDOW,
        positions=stances.PROMPT_POSITIONS,
    )


def story_context(story: StorySnapshot) -> StoryContext:
    """What the loops keep about a story, as the prompt shows it."""
    return StoryContext(
        summary=story.summary,
        anchors=tuple(
            (a.text, "a moderator" if a.added_by is not None else a.speaker or "")
            for a in story.anchors
        ),
        positions=tuple(
            (p.topic, p.idea, ", ".join(story.speakers.get(p.id, ())))
            for p in story.positions[: stances.PROMPT_POSITIONS]
        ),
        state=story.state,
    )
