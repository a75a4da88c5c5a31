"""Numbered schema migrations, applied in order and recorded in `schema_migrations`.

One module per migration, holding its SQLite script as `SQL`; the code that applies them is in
memory.store.sqlite.migrate (SQLite) and memory.store.postgres.store (PostgreSQL, from the scripts
memory.store.postgres.migrations derives from these). A published migration is never edited: the
next number is a new module, listed below. CHECK constraints hold every enum and range, so an
invalid row cannot exist whatever the code above does.

There is no 28: the number was skipped when two changes were made side by side (v27 and v29
landed the same day), and no module for it was ever published. Versions are compared, never
counted, so a database at 27 goes to 29 directly. 32 to 35 were written side by side and
land together, in that order.
"""

from __future__ import annotations

from memory.store.migrations import (
    v01_memories,
    v02_applied_exchanges,
    v03_read_counters,
    v04_messages,
    v05_story_loops,
    v06_keyword_index,
    v07_model_calibration,
    v08_matched_words,
    v09_lore_and_context,
    v10_outbox_by_person,
    v11_structured_output,
    v12_provenance,
    v13_privacy,
    v14_moderation,
    v15_vectors_due,
    v16_daily_figures,
    v17_shared_processes,
    v18_conversation_reason,
    v19_owned_keywords,
    v20_message_ids,
    v21_reflection_inputs,
    v22_keyword_rules,
    v23_memory_dates,
    v24_memory_versions,
    v25_reply_versions,
    v26_sent_messages,
    v27_characters,
    v29_chat_streaming,
    v30_truthful_versions,
    v31_chat_one_at_a_time,
    v32_chat_context,
    v33_channel_modes,
    v34_off_the_record,
    v35_joined_lines,
)

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, v01_memories.SQL),
    (2, v02_applied_exchanges.SQL),
    (3, v03_read_counters.SQL),
    (4, v04_messages.SQL),
    (5, v05_story_loops.SQL),
    (6, v06_keyword_index.SQL),
    (7, v07_model_calibration.SQL),
    (8, v08_matched_words.SQL),
    (9, v09_lore_and_context.SQL),
    (10, v10_outbox_by_person.SQL),
    (11, v11_structured_output.SQL),
    (12, v12_provenance.SQL),
    (13, v13_privacy.SQL),
    (14, v14_moderation.SQL),
    (15, v15_vectors_due.SQL),
    (16, v16_daily_figures.SQL),
    (17, v17_shared_processes.SQL),
    (18, v18_conversation_reason.SQL),
    (19, v19_owned_keywords.SQL),
    (20, v20_message_ids.SQL),
    (21, v21_reflection_inputs.SQL),
    (22, v22_keyword_rules.SQL),
    (23, v23_memory_dates.SQL),
    (24, v24_memory_versions.SQL),
    (25, v25_reply_versions.SQL),
    (26, v26_sent_messages.SQL),
    (27, v27_characters.SQL),
    (29, v29_chat_streaming.SQL),
    (30, v30_truthful_versions.SQL),
    (31, v31_chat_one_at_a_time.SQL),
    (32, v32_chat_context.SQL),
    (33, v33_channel_modes.SQL),
    (34, v34_off_the_record.SQL),
    (35, v35_joined_lines.SQL),
)

LATEST = MIGRATIONS[-1][0]
