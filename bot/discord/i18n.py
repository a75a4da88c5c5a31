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
    "history": "historique",
    "One of your memories: its versions, with their dates": (
        "Un de tes souvenirs : ses versions, avec leurs dates"
    ),
    "restore": "restaurer",
    "Bring back this memory's version before its last change": (
        "Revenir à la version de ce souvenir d'avant son dernier changement"
    ),
    "summary": "resume",
    "This conversation's summary and anchors": "Le résumé de cette conversation et ses ancres",
    "positions": "positions",
    "What the character thinks, and since when": "Ce que pense le personnage, et depuis quand",
    "context": "contexte",
    "What the character would see for your next message": (
        "Ce que le personnage verrait pour ton prochain message"
    ),
    "message": "message",
    "A draft of your next message (optional)": "Un brouillon de ton prochain message (facultatif)",
    "full": "complet",
    "One line per history message instead of one per run": (
        "Une ligne par message de l'historique au lieu d'une par série"
    ),
    "strategy": "strategie",
    "How this conversation's context is trimmed": (
        "Comment le contexte de cette conversation est réduit"
    ),
    "name": "nom",
    "truncate, summarize, vector-recall, manual, or a plugin's": (
        "truncate, summarize, vector-recall, manual, ou celle d'un plugin"
    ),
    "lore": "lore",
    "World knowledge the character uses when keywords come up": (
        "Connaissances du monde, utilisées quand leurs mots-clés apparaissent"
    ),
    "add": "ajouter",
    "Add a lore entry for this server": "Ajouter une entrée de lore pour ce serveur",
    "keywords": "mots-cles",
    "Words that activate it, separated by commas": (
        "Les mots qui l'activent, séparés par des virgules"
    ),
    "content": "contenu",
    "What the character should know": "Ce que le personnage doit savoir",
    "Any character, or only the one the bot plays now": (
        "N'importe quel personnage, ou seulement celui que le bot joue"
    ),
    "list": "liste",
    "The lore entries that apply here": "Les entrées de lore valables ici",
    "remove": "retirer",
    "Remove one of this server's lore entries": "Retirer une entrée de lore de ce serveur",
    "entry": "entree",
    "The entry's number, from /lore list": "Le numéro de l'entrée, vu dans /lore liste",
    "Exclude from context": "Exclure du contexte",
    "Include in context": "Inclure dans le contexte",
    "Forget this message": "Oublier ce message",
    "Don't remember this": "Ne retiens pas ça",
    "receipts": "recus",
    "A DM when I store something from your message": (
        "Un MP quand je retiens quelque chose de ton message"
    ),
    "forget-me": "oublie-moi",
    "Erase everything I store about you, everywhere": (
        "Effacer tout ce que je garde sur toi, partout"
    ),
    "forget-member": "oublier-membre",
    "Erase what this server holds about a member (one who left)": (
        "Effacer ce que ce serveur garde sur un membre (parti)"
    ),
    "user": "membre",
    "The member, or their user id": "Le membre, ou son identifiant",
    "privacy": "confidentialite",
    "Where your memories are used: where learned, or everywhere": (
        "Où tes souvenirs servent : là où ils ont été appris, ou partout"
    ),
    "Where learned, everywhere, or the default": "Là où appris, partout, ou le réglage par défaut",
    "export": "exporter",
    "Everything I store about you, as a file only you see": (
        "Tout ce que je garde sur toi, dans un fichier que toi seul vois"
    ),
    "anchors": "ancres",
    "Key facts held in this conversation": "Les faits clés gardés dans cette conversation",
    "show": "voir",
    "The anchors held here, and those dropped": "Les ancres gardées ici, et celles retirées",
    "Hold a key fact no reflection can drop": (
        "Garder un fait clé qu'aucune réflexion ne peut retirer"
    ),
    "The fact": "Le fait",
    "drop": "retirer",
    "Drop an anchor; the reason stays in history": (
        "Retirer une ancre ; la raison reste dans l'historique"
    ),
    "anchor": "ancre",
    "The anchor's number": "Le numéro de l'ancre",
    "reason": "raison",
    "Why": "Pourquoi",
    "The character's positions here": "Les positions du personnage ici",
    "Drop a position; the reason stays in history": (
        "Retirer une position ; la raison reste dans l'historique"
    ),
    "position": "position",
    "The position's number": "Le numéro de la position",
    "character": "personnage",
    "Who plays here: per channel in a server, yours in DMs": (
        "Qui joue ici : par salon sur un serveur, le tien en messages privés"
    ),
    "Who plays here, and who else could": "Qui joue ici, et qui d'autre pourrait",
    "set": "choisir",
    "Choose who plays in this channel (Manage Channels), or in your DMs": (
        "Choisir qui joue dans ce salon (Gérer les salons), ou dans tes messages privés"
    ),
    "key": "cle",
    "The character's key; `default` in a channel: the configured one": (
        "La clé du personnage ; `default` dans un salon : celui de la configuration"
    ),
    "Only what this character stores (default: every one)": (
        "Seulement ce que ce personnage garde (par défaut : tous)"
    ),
    "channel": "salon",
    "How the character answers in this channel": "Comment le personnage répond dans ce salon",
    "mode": "mode",
    "Which messages are answered here; set it with Manage Channels": (
        "Quels messages ont une réponse ici ; à changer avec Gérer les salons"
    ),
    "open: every message; mention: mentions and replies; thread: a thread each": (
        "ouvert : chaque message ; mention : mentions et réponses ; fil : un fil pour chacun"
    ),
    "open": "ouvert",
    "mention": "mention",
    "thread": "fil",
    "default": "par défaut",
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
