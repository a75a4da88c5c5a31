"""French localisations of the slash commands (names and descriptions)."""

from __future__ import annotations

import discord
from discord import app_commands

FRENCH: dict[str, str] = {
    "why": "pourquoi",
    "The memories used for your last message here, and why": (
        "Les souvenirs utilisés pour ton dernier message ici, et pourquoi"
    ),
    "memories": "souvenirs",
    "Your memories, page by page": "Tes souvenirs, page par page",
    "filter": "filtre",
    "Only those never served, or those containing this text": (
        "Seulement ceux jamais servis, ou ceux qui contiennent ce texte"
    ),
    "pin": "epingler",
    "Always keep this memory in the context": "Toujours garder ce souvenir dans le contexte",
    "unpin": "desepingler",
    "Stop always keeping this memory": "Ne plus toujours garder ce souvenir",
    "forget": "oublier",
    "Erase this memory for good": "Effacer ce souvenir pour de bon",
    "memory": "souvenir",
    "One of your memories": "Un de tes souvenirs",
    "remember": "retenir",
    "Add a memory yourself": "Ajouter un souvenir toi-même",
    "text": "texte",
    "What to remember": "Ce qu'il faut retenir",
    "kind": "type",
    "Fact, preference, promise, episode or rule": "Fait, préférence, promesse, épisode ou règle",
    "scope": "portee",
    "Everywhere, or only in this conversation": "Partout, ou seulement dans cette conversation",
    "stats": "stats",
    "Memory figures for this server's operators": "Chiffres de la mémoire pour les admins",
    "never served": "jamais servis",
    "summary": "resume",
    "This conversation's summary and anchors": "Le résumé de cette conversation et ses ancres",
    "positions": "positions",
    "What the character thinks, and since when": "Ce que pense le personnage, et depuis quand",
}


class FrenchTranslator(app_commands.Translator):
    """Translate command names and descriptions to French for French clients."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if locale is not discord.Locale.french:
            return None
        return FRENCH.get(string.message)
