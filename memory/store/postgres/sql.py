"""The store's SQL, written for SQLite, as PostgreSQL runs it.

The store modules keep one text per statement; this module rewrites the few SQLite spellings
that PostgreSQL spells differently, token by token (string literals and comments untouched):

- placeholders `?` and `?N` become `$N` (a plain `?` takes the highest number so far plus one,
  as SQLite numbers them);
- `x IS ?` / `x IS NOT ?` become `IS [NOT] DISTINCT FROM $N` (PostgreSQL's IS takes no value);
- scalar `max(a, b)` / `min(a, b)` become `greatest` / `least`; `instr(a, b)` becomes `strpos`;
- `CAST(x AS INTEGER)` truncates as SQLite does (PostgreSQL rounds);
- `LIMIT -1` (no limit) becomes `LIMIT ALL`; `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`.

Statements whose meaning differs more than this (full-text search, JSON, upserts that replace a
row) have a PostgreSQL variant of their own next to the SQLite one, chosen by `dialect`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?")
_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(\w+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Translated:
    """A statement for PostgreSQL: its text and how many parameters it numbers."""

    sql: str
    params: int
    # The table an INSERT writes (lower case), '' for any other statement.
    inserts_into: str


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> Translated:
    """Rewrite one SQLite statement for PostgreSQL (see the module's docstring)."""
    tokens = _tokens(sql)
    highest = 0
    out: list[str] = []
    for kind, text in tokens:
        if kind == "param":
            number = int(text[1:]) if len(text) > 1 else highest + 1
            highest = max(highest, number)
            out.append(f"${number}")
        else:
            out.append(text)
    out = _rewrite(out)
    text = "".join(out)
    ignore = re.search(r"\bINSERT\s+OR\s+IGNORE\b", text, re.IGNORECASE)
    if ignore:
        text = text[: ignore.start()] + "INSERT" + text[ignore.end() :]
        if not re.search(r"\bON\s+CONFLICT\b", text, re.IGNORECASE):
            text = text.rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
    match = _INSERT.match(sql)
    return Translated(text, highest, match.group(1).lower() if match else "")


def _tokens(sql: str) -> list[tuple[str, str]]:
    """Split SQL into (kind, text): str, ident, param, space, comment, punct."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'" or c == '"':
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            tokens.append(("str", sql[i : j + 1]))
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            tokens.append(("comment", sql[i:j]))
            i = j
        elif c == "?":
            j = i + 1
            while j < n and sql[j].isdigit():
                j += 1
            tokens.append(("param", sql[i:j]))
            i = j
        elif c.isspace():
            j = i
            while j < n and sql[j].isspace():
                j += 1
            tokens.append(("space", sql[i:j]))
            i = j
        elif (m := _IDENT.match(sql, i)) is not None:
            tokens.append(("ident", m.group()))
            i = m.end()
        elif (m := _NUMBER.match(sql, i)) is not None:
            tokens.append(("number", m.group()))
            i = m.end()
        else:
            tokens.append(("punct", c))
            i += 1
    return tokens


def _rewrite(parts: list[str]) -> list[str]:
    """The token-level rewrites after placeholders are numbered."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        word = parts[i]
        low = word.lower()
        following = _next_word(parts, i)
        if low in ("max", "min") and following is not None and parts[following] == "(":
            close = _closing(parts, following)
            if _top_level_comma(parts, following, close):
                out.append("greatest" if low == "max" else "least")
                i += 1
                continue
        if low == "instr" and following is not None and parts[following] == "(":
            out.append("strpos")
            i += 1
            continue
        if low == "cast" and following is not None and parts[following] == "(":
            close = _closing(parts, following)
            inner = "".join(parts[following + 1 : close])
            m = re.fullmatch(r"\s*(.*?)\s+AS\s+INTEGER\s*", inner, re.IGNORECASE | re.DOTALL)
            if m is not None:
                value = m.group(1)
                if re.fullmatch(r"\$\d+", value):
                    out.append(f"CAST({value} AS BIGINT)")
                else:
                    out.append(f"CAST(trunc({''.join(_rewrite(_split(value)))}) AS BIGINT)")
                i = close + 1
                continue
        if low == "limit" and following is not None and parts[following] == "-":
            number = _next_word(parts, following)
            if number is not None and parts[number] == "1":
                out.append("LIMIT ALL")
                i = number + 1
                continue
        if low == "is" and following is not None:
            negated = parts[following].lower() == "not"
            target = _next_word(parts, following) if negated else following
            if target is not None and parts[target].startswith("$"):
                out.append("IS DISTINCT FROM " if negated else "IS NOT DISTINCT FROM ")
                out.append(parts[target])
                i = target + 1
                continue
        out.append(word)
        i += 1
    return out


def _split(sql: str) -> list[str]:
    return [text for _, text in _tokens(sql)]


def _next_word(parts: list[str], i: int) -> int | None:
    j = i + 1
    while j < len(parts) and (parts[j].isspace() or parts[j].startswith("--")):
        j += 1
    return j if j < len(parts) else None


def _closing(parts: list[str], opening: int) -> int:
    depth = 0
    for j in range(opening, len(parts)):
        if parts[j] == "(":
            depth += 1
        elif parts[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses in SQL")


def _top_level_comma(parts: list[str], opening: int, close: int) -> bool:
    depth = 0
    for j in range(opening + 1, close):
        if parts[j] == "(":
            depth += 1
        elif parts[j] == ")":
            depth -= 1
        elif parts[j] == "," and depth == 0:
            return True
    return False
