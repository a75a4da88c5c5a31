"""The numbered migrations for PostgreSQL: the same numbers, tables and CHECK constraints.

Each PostgreSQL migration is derived from the SQLite one of the same number by `for_postgres`
(column types, GLOB and JSON checks, identity ids), except the few whose meaning needs other
words (`OWN`): full-text search for keyword recall, the `vectors_due` triggers in PL/pgSQL, a
data migration that reads JSON. A new plain SQLite migration (CREATE TABLE, ALTER TABLE ... ADD
COLUMN, CREATE INDEX) needs nothing here; `for_postgres` refuses what it cannot translate, so a
migration that needs its own PostgreSQL words cannot slip through untranslated.

Types: every integer is BIGINT (Discord ids are 64-bit; 0/1 flags stay integers with their
CHECK), REAL is DOUBLE PRECISION, and vectors stay float32 bytes in BYTEA: the read path ranks
a person's vectors in process (numpy) on both backends, so the database keeps bytes it never
computes on, with the same `length = dim * 4` check, and needs no extension for them.
"""

from __future__ import annotations

import re

from memory.store.migrations import MIGRATIONS, v30_truthful_versions

# Keyword recall: a text search configuration that folds accents and case and keeps every word
# as it is (no stemming, no stopwords), as SQLite's unicode61 tokenizer with remove_diacritics
# does for French and English alike; the generated column is deleted with its row.
_FTS = """
CREATE EXTENSION IF NOT EXISTS unaccent;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'echo_folded') THEN
        CREATE TEXT SEARCH CONFIGURATION echo_folded (COPY = simple);
        ALTER TEXT SEARCH CONFIGURATION echo_folded
            ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword,
                hword_asciipart, hword_part, hword_numpart
            WITH unaccent, simple;
    END IF;
END $$;
ALTER TABLE memories ADD COLUMN words tsvector
    GENERATED ALWAYS AS (to_tsvector('echo_folded'::regconfig, text)) STORED;
-- Per person (btree_gin puts user_id in the same index): a term's bitmap holds that person's
-- memories only, not every person's who wrote the word.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX memories_words ON memories USING gin (user_id, words);
"""

# Schema 19: each lexeme behind its owner's tag ("42xtea", as memory.store.sqlite.connect's
# owned_words writes it for FTS5), so a term's GIN entries, a prefix's too, are one person's;
# lexemes too long for a tsvector once tagged are left out, as to_tsvector leaves out longer ones.
# No pending list (fastupdate): every search reads all of it, everyone's recent words (18 of the
# 20 pages one term read beside 50,000 memories of others, 4 without it; tests/pg/test_keywords).
_OWNED_WORDS = """
CREATE FUNCTION echo_owned_words(owner BIGINT, body TEXT) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT coalesce(array_to_tsvector(array_agg(translate(owner::text, '-', 'n') || 'x'
                                                        || lexeme)), ''::tsvector)
            FROM unnest(to_tsvector('echo_folded'::regconfig, body))
            WHERE octet_length(lexeme) <= 2000);
ALTER TABLE memories DROP COLUMN words;
ALTER TABLE memories ADD COLUMN words tsvector
    GENERATED ALWAYS AS (echo_owned_words(user_id, text)) STORED;
CREATE INDEX memories_words ON memories USING gin (words) WITH (fastupdate = off);
"""

_VECTORS_DUE = """
CREATE TABLE vectors_due (
    memory_id BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE
);
CREATE FUNCTION vectors_due_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO vectors_due (memory_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER vectors_due_insert AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION vectors_due_mark();
CREATE TRIGGER vectors_due_update AFTER UPDATE OF text ON memories
    FOR EACH ROW EXECUTE FUNCTION vectors_due_mark();
CREATE TABLE vectors_checked (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    model TEXT NOT NULL CHECK (length(model) > 0),
    document_prefix TEXT NOT NULL,
    checked_at DOUBLE PRECISION NOT NULL
);
"""

_REFLECTION_DAYS_FILL = """
INSERT INTO reflection_days (day, action, reason, candidates)
    SELECT floor(a.applied_at / 86400)::bigint, o.value ->> 'action',
        coalesce(o.value ->> 'reason', ''), count(*)
    FROM applied_exchanges a, jsonb_array_elements(a.report::jsonb -> 'outcomes') o
    WHERE o.value ->> 'action' IN ('created', 'merged', 'absorbed', 'rejected')
    GROUP BY 1, 2, 3;
"""


def _sixteen() -> str:
    sql = dict(MIGRATIONS)[16]
    start = sql.index("INSERT INTO reflection_days")
    end = sql.index("GROUP BY 1, 2, 3;", start) + len("GROUP BY 1, 2, 3;")
    return for_postgres(sql[:start]) + _REFLECTION_DAYS_FILL + for_postgres(sql[end:])


def _fifteen() -> str:
    sql = dict(MIGRATIONS)[15]
    # Everything after the vectors_checked table is plain; the table and triggers are ours.
    end = sql.index(");", sql.index("CREATE TABLE vectors_checked")) + len(");")
    return _VECTORS_DUE + for_postgres(sql[end:])


# SQLite's schema 20 rebuilds the messages table for AUTOINCREMENT; identity sequences never
# give an id twice, and only an explicit id could take one of theirs ahead of them: these ids
# are refused from now on (no statement writes one).
_IDS_ALWAYS = "".join(
    f"ALTER TABLE {table} ALTER COLUMN id SET GENERATED ALWAYS;\n"
    for table in ("messages", "memories", "anchors", "positions", "lore_entries")
)

# The migrations written for PostgreSQL rather than derived (see the module's docstring).
OWN: dict[int, str] = {
    6: _FTS,
    19: _OWNED_WORDS,
    20: _IDS_ALWAYS,
    30: v30_truthful_versions.POSTGRES,
}

_TYPES = (
    (
        re.compile(r"\bid INTEGER PRIMARY KEY(?: AUTOINCREMENT)?(?! REFERENCES)"),
        "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
    (re.compile(r"\)\s*WITHOUT ROWID"), ")"),
    (re.compile(r"\blength\(vector\)"), "octet_length(vector)"),
    # CHECK (json_valid(x) AND json_type(x) = 'array') and CHECK (json_valid(x)).
    (re.compile(r"json_valid\((\w+)\) AND json_type\(\1\) = 'array'"), r"\1 IS JSON ARRAY"),
    (re.compile(r"json_valid\((\w+)\)"), r"\1 IS JSON"),
    (
        re.compile(r"json_array_length\((\w+)\)"),
        r"(CASE WHEN \1 IS JSON ARRAY THEN json_array_length(\1::json) END)",
    ),
    (re.compile(r"NOT GLOB '\*\[\^0-9\]\*'"), "!~ '[^0-9]'"),
    (re.compile(r"GLOB '([a-z:]+)\*'"), r"LIKE '\1%'"),
)

# SQLite words that would reach PostgreSQL untranslated: refuse them instead.
_UNTRANSLATED = re.compile(
    r"\b(GLOB|json_(?!array_length\(\w+::json\))\w+|AUTOINCREMENT|VIRTUAL|fts5|TRIGGER|PRAGMA|"
    r"OR IGNORE|OR REPLACE|julianday|strftime|rowid)\b",
    re.IGNORECASE,
)


def for_postgres(sql: str) -> str:
    """Translate one SQLite migration's DDL for PostgreSQL; raise on what it cannot translate."""
    for pattern, replacement in _TYPES:
        sql = pattern.sub(replacement, sql)
    code = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    code = re.sub(r"'[^']*'", "''", code)
    left = _UNTRANSLATED.search(code)
    if left is not None:
        raise ValueError(f"no PostgreSQL translation for {left.group()!r}: write it in OWN")
    return sql


def _migrations() -> tuple[tuple[int, str], ...]:
    own = {**OWN, 15: _fifteen(), 16: _sixteen()}
    return tuple((version, own.get(version) or for_postgres(sql)) for version, sql in MIGRATIONS)


PG_MIGRATIONS = _migrations()

# Tables whose rows get an id from the database: an INSERT into one returns it (lastrowid).
ID_TABLES = frozenset(
    m.group(1).lower()
    for _, sql in MIGRATIONS
    for m in re.finditer(r"CREATE TABLE (\w+) \(\s*id INTEGER PRIMARY KEY(?! REFERENCES)", sql)
)
