"""Measure your own model's reflection by confidence band (runs only when a real LLM answers).

24 invented exchanges on a deliberate gradient — 6 clear facts, 6 hesitations ("je crois",
"maybe"), 6 facts only suggested, 6 small talk — reflected DRAWS times each; every candidate is
captured before the filters. Reports, per band, how often the model proposed a memory, the
confidence it gave (is there anything in the 0.60-0.85 band?), and the share the code-decided
filters reject (about-the-user rate, inverted negations, character attitudes).
Run: make bench-reflection  (OLLAMA_URL, OLLAMA_CHAT_MODEL; default http://127.0.0.1:11434)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from collections import Counter
from pathlib import Path

import httpx

from memory.backends.chat import OllamaChat
from memory.errors import BackendError
from memory.write import reflection
from memory.write.filters import screen

DRAWS = 2
RESULTS = Path(__file__).parent / "results"

BANDS: dict[str, list[str]] = {
    "clear fact": [
        "J'ai une chienne qui s'appelle Praline.", "I work as a baker, I start at 4 am.",
        "Ma fille a eu son bac la semaine dernière.", "I moved to Bristol in March.",
        "Je suis allergique aux fruits à coque.", "My brother Tom is a firefighter.",
    ],
    "hesitation": [
        "Je crois que je vais peut-être changer de travail.", "Maybe I'll take up running again.",
        "Il se peut que je déménage, je ne sais pas.",
        "I think I might be a bit lactose intolerant.",
        "Peut-être que j'irai voir ma sœur à Noël.", "I'm not sure, but I might adopt a cat.",
    ],
    "suggested": [
        "Encore une nuit blanche avec le petit qui fait ses dents…",
        "Ugh, the commute over the bridge was awful again.",
        "J'ai encore oublié mon badge en partant de l'hôpital.",
        "The choir rehearsal ran late, my voice is gone.",
        "Le potager a encore été ravagé par les limaces.",
        "Another Monday of marking thirty essays.",
    ],
    "small talk": [
        "Salut ! Ça va ?", "Haha, that's funny.", "Il fait beau aujourd'hui.",
        "Ok, thanks!", "Bonne nuit à toi.", "What do you think about the weather?",
    ],
}  # fmt: skip


async def main() -> None:
    url = os.environ.get("OLLAMA_URL", "http://127.0.0.1:11434")
    model = os.environ.get("OLLAMA_CHAT_MODEL", "llama3.1:8b")
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as http:
        try:
            (await http.get(url + "/api/version")).raise_for_status()
        except httpx.HTTPError:
            print(f"No LLM answered at {url}: the reflection bench needs a real model. Skipped.")
            return
        chat = OllamaChat(http, url, model)
        header = (
            "| band | exchanges with a candidate | candidates | confidence (median) |"
            " in 0.60-0.85 | rejected by the filters |"
        )
        lines = [f"# Reflection of {model}", "", header, "|---" * 6 + "|"]
        for band, messages in BANDS.items():
            proposed = 0
            confidences: list[float] = []
            rejected: Counter[str] = Counter()
            for message in messages:
                for _ in range(DRAWS):
                    prompt = reflection.build_messages(
                        user_name="Sam", character_name="Écho", user_message=message,
                        reply="Je vois.",
                    )  # fmt: skip
                    try:
                        result = await chat.chat(
                            prompt, schema=reflection.json_schema(), deadline=300
                        )
                    except BackendError as exc:
                        print(f"reflection failed: {exc}")
                        continue
                    parsed = reflection.parse(result.content)
                    proposed += bool(parsed.candidates)
                    confidences += [c.confidence for c in parsed.candidates]
                    screening = screen(parsed.candidates, user_message=message,
                                       character_name="Écho", user_name="Sam")  # fmt: skip
                    rejected.update(reason for _, reason in screening.rejected)
            median = f"{statistics.median(confidences):.2f}" if confidences else "—"
            band_count = sum(1 for c in confidences if 0.60 <= c < 0.85)
            lines.append(
                f"| {band} | {proposed}/{len(messages) * DRAWS} | {len(confidences)} | {median} |"
                f" {band_count} | {dict(rejected) or 0} |"
            )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reflection.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
