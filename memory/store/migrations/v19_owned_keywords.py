"""Schema 19: the keyword index holds each word behind its owner's tag: a term is one person's."""

from __future__ import annotations

SQL = """
        -- Keyword recall matched each term over everyone's memories, then kept the person's: a
        -- newcomer's common words cost what the whole database holds. Each word is indexed as
        -- "<owner>x<word>" (echo_owned_words, registered on every store connection), so a term,
        -- prefix or not, reads the asking person's entries only. Contentless: the words are
        -- derived, and each trigger gives the index the same derived words back to delete.
        DROP TRIGGER memories_fts_insert;
        DROP TRIGGER memories_fts_delete;
        DROP TRIGGER memories_fts_update;
        DROP TABLE memories_fts;
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            words, content = '', tokenize = 'unicode61 remove_diacritics 2'
        );
        INSERT INTO memories_fts (rowid, words)
            SELECT id, echo_owned_words(user_id, text) FROM memories;

        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, words)
                VALUES (new.id, echo_owned_words(new.user_id, new.text));
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, words)
                VALUES ('delete', old.id, echo_owned_words(old.user_id, old.text));
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, user_id ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, words)
                VALUES ('delete', old.id, echo_owned_words(old.user_id, old.text));
            INSERT INTO memories_fts (rowid, words)
                VALUES (new.id, echo_owned_words(new.user_id, new.text));
        END;
        """
