"""The SQLite statements as PostgreSQL runs them, and the PostgreSQL migrations derived from the
SQLite ones: pure text, checked without a server (the PostgreSQL suite runs them for real)."""

from __future__ import annotations

import pytest

from memory.errors import StoreError
from memory.store import open_store
from memory.store.migrations import MIGRATIONS
from memory.store.postgres.migrations import OWN, PG_MIGRATIONS, for_postgres
from memory.store.postgres.sql import translate
from memory.store.postgres.store import redacted


@pytest.mark.parametrize(
    ("sqlite_sql", "postgres_sql"),
    [
        ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = $2"),
        # Numbered ones keep their number; a plain one after them takes the next.
        (
            "UPDATE t SET a = ?2 WHERE b = ?1 AND c = ?",
            "UPDATE t SET a = $2 WHERE b = $1 AND c = $3",
        ),
        # A question mark in a literal or a comment is text, not a parameter.
        ("SELECT '?' || ? -- who?\n", "SELECT '?' || $1 -- who?\n"),
        ("DELETE FROM t WHERE g IS ?", "DELETE FROM t WHERE g IS NOT DISTINCT FROM $1"),
        ("SELECT 1 WHERE g IS NOT ?", "SELECT 1 WHERE g IS DISTINCT FROM $1"),
        ("SELECT 1 WHERE g IS NULL", "SELECT 1 WHERE g IS NULL"),
        (
            "SELECT max(a, min(b, ?)), max(c) FROM t",
            "SELECT greatest(a, least(b, $1)), max(c) FROM t",
        ),
        ("SELECT instr(lower(a), ?)", "SELECT strpos(lower(a), $1)"),
        # SQLite's CAST truncates; PostgreSQL's rounds.
        ("SELECT CAST(x / 2.0 AS INTEGER)", "SELECT CAST(trunc(x / 2.0) AS BIGINT)"),
        ("SELECT CAST(? AS INTEGER)", "SELECT CAST($1 AS BIGINT)"),
        ("SELECT a FROM t LIMIT -1 OFFSET ?", "SELECT a FROM t LIMIT ALL OFFSET $1"),
        (
            "INSERT OR IGNORE INTO t (a) VALUES (?)",
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING",
        ),
    ],
)
def test_a_statement_reads_the_same_on_postgresql(sqlite_sql: str, postgres_sql: str) -> None:
    assert translate(sqlite_sql).sql == postgres_sql


def test_a_statement_counts_its_parameters_and_names_the_table_it_inserts_into() -> None:
    translated = translate("INSERT INTO memories (a, b) VALUES (?, ?2)")
    assert (translated.params, translated.inserts_into) == (2, "memories")
    assert translate("SELECT ?3").params == 3


def test_every_migration_has_its_postgresql_twin_with_the_same_number() -> None:
    assert [v for v, _ in PG_MIGRATIONS] == [v for v, _ in MIGRATIONS]
    for version, sql in PG_MIGRATIONS:
        if version not in OWN:
            assert "REAL" not in sql.replace("DOUBLE PRECISION", "")
            assert "GLOB" not in sql and "json_valid" not in sql


def test_a_plain_new_migration_needs_no_postgresql_words() -> None:
    sqlite = """
        ALTER TABLE outbox ADD COLUMN leased_until REAL;
        CREATE TABLE person_generations (
            user_id INTEGER PRIMARY KEY,
            generation INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
            ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(ids) AND json_type(ids) = 'array')
        ) WITHOUT ROWID;
    """
    assert (
        for_postgres(sqlite)
        == """
        ALTER TABLE outbox ADD COLUMN leased_until DOUBLE PRECISION;
        CREATE TABLE person_generations (
            user_id BIGINT PRIMARY KEY,
            generation BIGINT NOT NULL DEFAULT 0 CHECK (generation >= 0),
            ids TEXT NOT NULL DEFAULT '[]' CHECK (ids IS JSON ARRAY)
        );
    """
    )


@pytest.mark.parametrize(
    "sqlite",
    [
        "CREATE TRIGGER t AFTER INSERT ON m BEGIN SELECT 1; END;",
        "CREATE TABLE t (a TEXT CHECK (json_extract(a, '$.x') > 0));",
        "INSERT OR REPLACE INTO t VALUES (1);",
        "CREATE TABLE t (a TEXT CHECK (a GLOB '[a-z]?'));",
    ],
)
def test_a_migration_it_cannot_translate_is_refused_not_passed_on(sqlite: str) -> None:
    with pytest.raises(ValueError, match="no PostgreSQL translation"):
        for_postgres(sqlite)


def test_a_url_is_shown_without_its_password() -> None:
    assert redacted("postgresql://echo:s3cret@db.local:5433/echo") == (
        "postgresql://echo@db.local:5433/echo"
    )
    assert redacted("postgresql:///echo?host=/run/pg") == "postgresql:///echo?host=/run/pg"


async def test_a_database_that_cannot_be_reached_is_one_line_without_the_password() -> None:
    # Port 1 on loopback: refused at once, no server needed.
    with pytest.raises(StoreError) as caught:
        await open_store("postgresql://echo:s3cret@127.0.0.1:1/echo", password="hunter22")
    message = str(caught.value)
    assert message.startswith("cannot open the database at postgresql://echo@127.0.0.1:1/echo")
    assert "s3cret" not in message and "hunter22" not in message and "\n" not in message
