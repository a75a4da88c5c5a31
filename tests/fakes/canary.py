"""A scripted LLM for erasure tests: a canary someone writes ends up everywhere a real model
would copy it.

The reply quotes the canary of the message it answers. The reflection of an exchange turns its
canary into a memory, an anchor, a position and a line of the rolling summary (rewritten whole
from the previous one, as the reflection prompt asks, so every later revision carries it), and
moves the mood. Exchanges without a canary rewrite the summary unchanged; with `copy`, they
also copy the first canary of what they were shown (the summary, the anchors) into a memory of
their own person, an anchor and a position, as a model mixing up who said what would. A message
of `REWORDED` is reflected as a real model would: a memory, an anchor and a position in words
of neither the message nor anything shown, and the summary reworded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory.store import Store
from tests.fakes.ollama import FakeOllama

CANARY = re.compile(r"[A-Z0-9]{3}CANARY\d{4}")


def reflection_request(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The exchange a chat call asks to reflect on, or None for a reply."""
    try:
        asked = json.loads(payload["messages"][-1]["content"])
    except (ValueError, KeyError, IndexError):
        return None
    return asked if isinstance(asked, dict) and "user_message" in asked else None


# Messages a model rewords: (memory, anchor, position's topic, idea and justification).
REWORDED = {
    "J'adore mon jardin.": (
        "Aime jardiner", "On cultive des plantes",
        ("plantes", "Les plantes aiment le soleil", "le potager en a besoin"),
    ),
    "Je lis beaucoup de romans le soir.": (
        "Dévore des livres", "Les livres s'empilent",
        ("lecture", "Lire occupe les veillées", "les intrigues passionnent"),
    ),
}  # fmt: skip


def reflection(asked: dict[str, Any], speaker: str, *, copy: bool = False) -> dict[str, Any]:
    """What a model copying everything would propose for one exchange."""
    previous = str(asked.get("previous_summary") or "")
    reworded = [v for k, v in REWORDED.items() if k in str(asked["user_message"])]
    if reworded:
        memory, anchor, (topic, idea, why) = reworded[0]
        return {
            "memories": [{"text": memory, "kind": "preference", "scope": "global",
                          "confidence": 0.9}],
            "summary": f"{previous.replace('a confié', 'a donné')} La discussion continue.",
            "new_anchors": [anchor],
            "positions": [{"topic": topic, "idea": idea, "justification": why,
                           "action": "create"}],
        }  # fmt: skip
    found = CANARY.findall(str(asked["user_message"]))
    shown = CANARY.findall(previous + json.dumps(asked.get("anchors") or []))
    if not found and copy and shown:
        return {
            "memories": [
                {"text": f"Connaît le code {shown[0]}", "kind": "fact", "scope": "global",
                 "confidence": 0.95}
            ],
            "summary": previous,
            "new_anchors": [f"{speaker} connaît le code {shown[0]}"],
            "positions": [
                {"topic": f"partage {shown[0]}", "idea": f"Le code {shown[0]} circule",
                 "justification": f"{speaker} le connaît", "action": "create"}
            ],
        }  # fmt: skip
    if not found:
        return {"memories": [], "summary": previous or "On discute.", "state": {}}
    canary = found[0]
    return {
        "memories": [
            {"text": f"A pour code de coffre {canary}", "kind": "fact", "scope": "global",
             "confidence": 0.95}
        ],
        "summary": f"{previous} {speaker} a confié le code {canary}.".strip(),
        "state": {"mood": 0.1},
        "new_anchors": [f"Le coffre de {speaker} s'ouvre avec {canary}"],
        "positions": [
            {"topic": f"coffre {canary}", "idea": f"Le code {canary} doit rester secret",
             "justification": f"{speaker} l'a confié en confiance", "action": "create"}
        ],
    }  # fmt: skip


def script(ollama: FakeOllama, *, copy: bool = False) -> None:
    """Answer replies and reflections as described above."""

    def answer(payload: dict[str, Any]) -> str:
        asked = reflection_request(payload)
        if asked is not None:
            # The person's display name is data in the request, never in the instructions.
            speaker = str(asked.get("person") or "someone")
            return json.dumps(reflection(asked, speaker, copy=copy))
        found = CANARY.findall(payload["messages"][-1]["content"])
        return f"Noté : {found[-1]}." if found else "D'accord."

    ollama.chat_reply = answer


def prompts(ollama: FakeOllama) -> list[str]:
    """Every reply prompt sent so far (reflections left out), as text."""
    return [
        json.dumps(p["messages"], ensure_ascii=False)
        for path, p in ollama.calls
        if path == "/api/chat" and reflection_request(p) is None
    ]


def in_files(folder: Path, canary: str) -> int:
    """How many times a canary appears, in any case, in the files of a folder (the database,
    its WAL and shared memory): the keyword index stores words in lower case."""
    return _files_text(folder).count(canary.casefold().encode())


async def rows_text(store: Store) -> str:
    """Every live row of every table of a PostgreSQL database as text, in lower case, with each
    tsvector's words."""
    tables = await store.fetchall(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
    )
    out: list[str] = []
    for (table,) in tables:
        out += [repr(tuple(r)) for r in await store.fetchall(f"SELECT * FROM {table}")]
    return "\n".join(out).lower()


def _files_text(folder: Path) -> bytes:
    return b"\0".join(p.read_bytes().lower() for p in folder.iterdir() if p.is_file())


async def stored_each(store: Store, folder: Path, canaries: Iterable[str]) -> dict[str, int]:
    """`stored` for many canaries, the files (or the rows) read once for all of them."""
    if store.dialect == "sqlite":
        text = _files_text(folder)
        return {c: text.count(c.casefold().encode()) for c in canaries}
    rows = await rows_text(store)
    return {c: rows.count(c.lower()) for c in canaries}


async def stored(store: Store, folder: Path, canary: str) -> int:
    """How many times a canary is still stored: on SQLite, in the bytes of the files of the
    database's folder (`in_files`, which also sees free pages and the WAL); on PostgreSQL,
    whose files a test cannot read as one, in every column of every live row (`rows_text`)."""
    return (await stored_each(store, folder, [canary]))[canary]
