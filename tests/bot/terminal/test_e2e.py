"""End to end: `echo-bot chat` driven through stdin, against a loopback fake Ollama."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from tests.bot.cli_runner import echo_bot
from tests.fakes.ollama import FakeOllama

REFLECTION = {
    "memories": [
        {
            "text": "A un chat roux nommé Félix",
            "kind": "fact",
            "scope": "global",
            "confidence": 0.95,
        }
    ],
    "summary": "Marie parle de son chat Félix.",
    "state": {},
    "new_anchors": ["Félix est le chat de Marie"],
    "positions": [
        {
            "topic": "chats",
            "idea": "Les chats roux ont du caractère",
            "justification": "Marie décrit Félix",
            "action": "create",
        }
    ],
}


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\n[storage]\npath = "echo.sqlite3"\n'
        '[character]\nname = "Écho"\npersona = "Tu es Écho."\n'
        # An interactive chat reflects right after each reply, as these tests read it (a
        # script waits for its next line whatever this says).
        "[conversation]\nsettle_seconds = 0\n",
        encoding="utf-8",
    )
    return path


async def _chat(config: Path, lines: list[str], user: str = "Marie") -> tuple[str, str]:
    """`echo-bot chat` with `lines` on its stdin, then the end of input (in this process)."""
    code, out, err = await echo_bot(
        "--config", str(config), "chat", "--user", user, stdin="\n".join(lines).encode()
    )
    assert code == 0, err
    return out, err


async def _chat_process(config: Path, lines: list[str], user: str = "Marie") -> tuple[str, str]:
    """`_chat` in a `python -m bot` process of its own: two at once on one database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), "chat", "--user", user,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate("\n".join(lines).encode()), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


def _script(ollama: FakeOllama) -> None:
    def reply(payload: dict[str, Any]) -> str:
        if "format" in payload:
            return json.dumps(REFLECTION, ensure_ascii=False)
        return "Félix ! Quel joli nom."

    ollama.chat_reply = reply


async def test_a_memory_is_stored_shown_by_why_and_forgotten(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    out, err = await _chat(
        config,
        [
            "J'ai un chat roux qui s'appelle Félix.",
            "Tu te souviens de mon chat ?",
            "/why",
            "/summary",
            "/positions",
            "/forget 1",
            "/memories",
            "/forget 1",
        ],
    )
    lines = out.splitlines()
    assert lines[0] == "Écho: Félix ! Quel joli nom."
    # The message calls for the cat (by the word "chat"): /why lists it as recalled.
    why = out[out.index("Recalled by meaning or keywords") :]
    assert "#1 fact·global" in why and "A un chat roux nommé Félix" in why
    assert "Marie parle de son chat Félix." in out and "#1 Félix est le chat de Marie" in out
    assert "chats — Les chats roux ont du caractère (re-anchored " in out
    assert "Forgotten #1." in out
    assert "No memories here." in out
    assert out.rstrip().endswith("No memory #1.")
    # Memory text never reaches the log at INFO.
    assert "Félix" not in err


async def test_memories_survive_a_restart_and_stay_with_their_owner(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    await _chat(config, ["J'ai un chat roux qui s'appelle Félix."])
    mine, _ = await _chat(config, ["/memories"])
    assert "A un chat roux nommé Félix" in mine
    theirs, _ = await _chat(config, ["/memories", "/forget 1", "/pin 1"], user="Paul")
    assert "No memories here." in theirs
    assert theirs.count("No memory #1.") == 2
    mine_again, _ = await _chat(config, ["/memories"])
    assert "A un chat roux nommé Félix" in mine_again and "📌" not in mine_again


async def test_chat_backend_down_gives_one_clear_line(tmp_path: Path, ollama: FakeOllama) -> None:
    ollama.set("/api/chat", "500")
    out, _ = await _chat(_config(tmp_path, ollama.url), ["Bonjour"])
    [line] = out.splitlines()
    assert line.startswith("[Écho cannot answer right now:")
    # The cause's place in the config, and the command that checks it.
    assert line.endswith(
        f". Is the LLM server at {ollama.url} running? It is [llm] base_url in the config; "
        "`echo-bot doctor` checks it and the models] /retry asks again."
    )


async def test_context_commands_in_the_terminal(tmp_path: Path, ollama: FakeOllama) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    out, err = await _chat(
        config,
        [
            "/lore add phare, lighthouse | Le phare de Brest est hanté.",
            "/lore add sans barre",
            "Mon code secret est 4512.",
            "/history",
            "/exclude 1",
            "/exclude 99",
            "/strategy truncate",
            "/strategy nope",
            "/context Et le PHARE ? full:true",
            "/lore list",
            "/lore remove 1",
        ],
    )
    assert "Lore entry #1 added." in out
    assert "write /lore add KEYWORDS | CONTENT" in out
    assert "#1 Marie: Mon code secret est 4512." in out
    assert "Message #1 excluded from the context." in out
    assert "That message is not in my conversation history." in out
    assert "Strategy here is now truncate." in out and "no context strategy 'nope'" in out
    preview = out[out.index("Context preview") :]
    assert "strategy truncate" in preview
    # The day and hour the model is told, as it is told (not only its token count).
    assert re.search(r"✓ now “Now it is \w+day \d{1,2} \w+ \d{4}, \d\d:\d\d \(", preview)
    assert "✗ history Marie #1 “Marie: Mon code secret est 4512.”" in preview
    assert "excluded from the context by a person" in preview
    assert "✓ lore #1 'PHARE'" in preview or "✓ lore #1 'phare'" in preview
    assert "#1 everywhere (owner) · any character · keys: phare, lighthouse" in out
    assert out.rstrip().endswith("Lore entry #1 removed.")
    assert "4512" not in err and "hanté" not in err


async def test_a_card_character_greets_in_the_terminal(tmp_path: Path, ollama: FakeOllama) -> None:
    from tests.memory.character.test_cards import v2

    _script(ollama)
    (tmp_path / "nyx.json").write_text(json.dumps(v2(alternate_greetings=[])), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nbase_url = "{ollama.url}"\n[storage]\npath = "echo.sqlite3"\n'
        '[character]\ncard = "nyx.json"\n',
        encoding="utf-8",
    )
    out, _ = await _chat(config, ["Bonsoir", "Et la lentille Fresnel ?"])
    lines = out.splitlines()
    assert lines[0] == "Nyx: *Nyx opens the door.* Come in, Marie, before the wind does."
    assert lines[1:] == ["Nyx: Félix ! Quel joli nom.", "Nyx: Félix ! Quel joli nom."]
    system = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p][-1]
    assert "The lens came from Paris in 1902." in system["messages"][0]["content"]


async def test_the_terminal_moderates_its_own_story_and_sets_privacy(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    await _chat(config, ["J'ai un chat roux qui s'appelle Félix."])
    # Paul talks in his own DM meanwhile: two `echo-bot chat` processes on one database (and
    # a chat through the real entry point, its stdin closed after the last line).
    mine, others = await asyncio.gather(
        _chat_process(config, [
            "/anchors", "/anchors add Le phare ferme le lundi", "/anchors drop 1",
            "/anchors drop 1 plus vrai", "/anchors", "/positions drop 1 hors sujet", "/positions",
            "/privacy", "/privacy everywhere", "/privacy partout", "/memories",
        ]),
        _chat_process(config, ["Bonjour", "/anchors", "/anchors drop 1 pas à moi"], user="Paul"),
    )  # fmt: skip
    out = mine[0]
    assert "#1 Félix est le chat de Marie (by a reflection on Marie's message" in out
    # Paul's reflection, in another process at the same time, may take anchor #2 first.
    held = re.search(r"Anchor #(\d+) held\.", out)
    assert held is not None and "say why in 1 to 500 characters" in out
    assert "Anchor #1 dropped." in out
    shown = out[out.rindex("Anchors (") :]
    assert f"#{held.group(1)} Le phare ferme le lundi (added by you" in shown
    assert "Dropped (last 1)" in shown and "dropped by you on " in shown
    assert ": plus vrai\n" in shown
    assert "Position #1 (chats) dropped." in out and "chats — dropped by you on" in out
    # Said in the terminal's terms: its chat, and memories imported from a server.
    assert "imported from a Discord server are used only in their server (the default here)" in out
    assert "imported from a Discord server are used here too (your choice)" in out
    assert "choose where_learned, everywhere or default, not 'partout'." in out
    assert "fact·global · used in this chat ·" in out
    # Paul's story is his own: Marie's anchors are not his to see or drop.
    assert "(by a reflection on Paul's message" in others[0] and "Marie's message" not in others[0]
    assert "No anchor #1 held here." in others[0]


async def test_a_failed_turn_is_retried_not_typed_again(tmp_path: Path, ollama: FakeOllama) -> None:
    """The server answers the first message with nothing; /retry answers that message: the
    history holds it once, with its reply, and what it said is learned."""
    _script(ollama)
    scripted, replies = ollama.chat_reply, []

    def first_empty(payload: dict[str, Any]) -> str:
        if "format" not in payload:
            replies.append(payload)
            if len(replies) == 1:
                return ""
        return scripted(payload)

    ollama.chat_reply = first_empty
    config = _config(tmp_path, ollama.url)
    out, _ = await _chat(config, ["Mon mot est phare.", "/retry", "/history", "/memories"])
    lines = out.splitlines()
    assert lines[0].startswith("[Écho cannot answer right now:")
    assert lines[0].endswith("/retry asks again.")
    assert lines[1] == "Écho: Félix ! Quel joli nom."
    history = [line.split(" ", 1)[1] for line in lines if re.match(r"#\d+ (Marie|Écho): ", line)]
    assert history == [
        "Marie: Mon mot est phare.",
        "Écho: Félix ! Quel joli nom.",
    ]
    assert "No memories here." not in out  # its reflection ran
