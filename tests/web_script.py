"""A scripted conversation through the Engine and the fake Ollama, for the operator's page tests
(handler tests, the browser test, the benchmark): two people, memories made by reflections and
by /remember, one memory that is never served, one with markup in it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from memory import Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.context.prompt import Character
from memory.model import Turn
from memory.store import Store
from memory.vectors.indexer import Indexer
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

MARIE, PAUL = 1, 2
STORY, ORIGIN = 10, "111"
NEVER_SERVED = "Déteste les brocolis"
MARKUP = '<script>alert("mémoire")</script> aime le jazz'

# The reflection each message makes (found by words of that message only).
REFLECTIONS: dict[str, dict[str, Any]] = {
    "Je joue aussi du piano": {
        "memories": [{"text": "Joue du piano le dimanche", "kind": "fact", "scope": "global",
                      "confidence": 0.9}],
        "summary": "Marie joue du piano.",
    },
    "qui s'appelle Félix": {
        "memories": [{"text": "A un chat roux nommé Félix", "kind": "fact", "scope": "story",
                      "confidence": 0.95},
                     {"text": "Le personnage est gentil", "kind": "fact", "scope": "global",
                      "confidence": 0.3}],
        "summary": "Marie parle de son chat Félix.",
        "state": {"mood": 2},
        "new_anchors": ["Félix est le chat de Marie"],
        "positions": [{"topic": "chats", "idea": "Les chats roux ont du caractère",
                       "justification": "Marie décrit Félix", "action": "create"}],
    },
}  # fmt: skip


def reply(payload: dict[str, Any]) -> str:
    """The fake model: a reflection (asked with a format) or a short answer."""
    if "format" not in payload:
        return "D'accord, je retiens."
    exchange = payload["messages"][-1]["content"]
    for words, reflection in REFLECTIONS.items():
        if words in exchange:
            return json.dumps(reflection, ensure_ascii=False)
    if "souviens de mon chat" in exchange:  # the same memory again: absorbed
        return json.dumps(REFLECTIONS["qui s'appelle Félix"], ensure_ascii=False)
    return json.dumps({"memories": [], "summary": "Une conversation."})


@dataclass(frozen=True, slots=True)
class Scripted:
    engine: Engine
    why: Turn


def engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    return Engine(
        store, embedder=OllamaEmbedder(http, ollama.url, "e"),
        chat=OllamaChat(http, ollama.url, "m"), character=Character("Écho", "Tu es Écho."),
    )  # fmt: skip


async def converse(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Scripted:
    """Run the script; return the engine and Marie's last /why."""
    ollama.chat_reply = reply
    bot = engine(store, ollama, http)
    worker = ReflectionWorker(store, OllamaChat(http, ollama.url, "m"), character_name="Écho")
    indexer = Indexer(store, OllamaEmbedder(http, ollama.url, "e"))

    async def say(n: int, user: int, name: str, text: str) -> None:
        await bot.turn(Incoming(f"m{n}", user, name, STORY, ORIGIN, text))
        await worker.run_due()
        await indexer.run_once()

    await say(1, MARIE, "Marie", "J'ai un chat roux qui s'appelle Félix.")
    await manage.remember(store, user_id=MARIE, story_id=STORY, origin=ORIGIN, text=MARKUP)
    await manage.remember(store, user_id=MARIE, story_id=99, origin="dm", text=NEVER_SERVED)
    await say(2, MARIE, "Marie", "Je joue aussi du piano le dimanche.")
    await say(3, PAUL, "Paul", "Salut, moi c'est Paul.")
    await say(4, MARIE, "Marie", "Tu te souviens de mon chat Félix ?")
    why = await manage.why(store, MARIE, STORY)
    assert why is not None and why.selected
    return Scripted(bot, why)
