"""How values cross between Python and PostgreSQL: each parameter converted to the type
PostgreSQL inferred for it (learned once per statement), numeric results read back as int or
float, the rows a statement changed read from its status.

The store modules pass values as SQLite takes them (any type in any column); PostgreSQL wants
each as its column's type. Apart from memory.store.postgres.store because this is the one place
that knows both type systems: the store above it speaks only of transactions, pools and locks.
"""

from __future__ import annotations

import operator
from typing import Any

import asyncpg

from memory.store.db import Params

_INTS = frozenset({"int2", "int4", "int8"})
_FLOATS = frozenset({"float4", "float8"})
_TEXTS = frozenset({"text", "varchar", "bpchar", "name"})


def _number(text: str) -> int | float:
    """A numeric result (sum, avg of integers) as SQLite returns it: int or float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _coerce(value: Any, type_name: str) -> Any:
    """One parameter as PostgreSQL's inferred type wants it (SQLite takes any)."""
    if value is None:
        return None
    if type_name in _INTS:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
        if not isinstance(value, (float, str, bytes)):
            return operator.index(value)
    elif type_name in _FLOATS or type_name == "numeric":
        if not isinstance(value, (str, bytes)):
            return float(value)
    elif type_name in _TEXTS:
        if isinstance(value, str) and "\x00" in value:
            # PostgreSQL's text holds no NUL (SQLite's does); what is stored was cleaned before,
            # so this is a search term or a name: a NUL in it matches nothing either way.
            return value.replace("\x00", "\ufffd")
        if isinstance(value, bool):
            return str(int(value))
        if isinstance(value, (int, float)):
            return str(value)
    elif type_name == "bytea":
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
    elif type_name == "bool":
        return bool(value)
    return value


class Statements:
    """Each translated statement's parameter types, learned once per statement."""

    def __init__(self) -> None:
        self._types: dict[str, tuple[str, ...]] = {}

    async def args(self, conn: asyncpg.Connection, sql: str, params: Params) -> list[Any]:
        if isinstance(params, dict):
            raise TypeError("named parameters are not supported on PostgreSQL")
        if not params:
            return []
        types = self._types.get(sql)
        if types is None:
            statement = await conn.prepare(sql)
            types = tuple(t.name for t in statement.get_parameters())
            self._types[sql] = types
        return [_coerce(v, t) for v, t in zip(params, types, strict=True)]


def changed_rows(status: str) -> int | None:
    """The rows an INSERT/UPDATE/DELETE changed, from its status ('UPDATE 3'); None otherwise."""
    word, _, rest = status.partition(" ")
    if word not in ("INSERT", "UPDATE", "DELETE", "MERGE"):
        return None
    return int(rest.rsplit(" ", 1)[-1])


async def prepare_connection(conn: asyncpg.Connection) -> None:
    """Read `numeric` results on this new pooled connection as SQLite gives them: int or float."""
    await conn.set_type_codec(
        "numeric", encoder=str, decoder=_number, schema="pg_catalog", format="text"
    )
