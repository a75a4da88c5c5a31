"""A character's name as the places it speaks in take it, made so once, where the character is
built (from its card, the config, the terminal): the name in its prompt, in its replies'
headings and as the username of its messages is then one and the same.

The rules are Discord's for a webhook's username, the strictest of the places Écho speaks in:
1 to 80 characters; none of "discord" or "clyde" anywhere (case ignored), nor "@", "#", ":" or
"```"; not "everyone" or "here" alone. A name is adjusted, never refused:
- its line breaks, tabs and runs of spaces become one space, control characters go, and it is
  trimmed;
- "@", "#" and ":" become the look-alikes "＠" (full-width), "＃" (full-width) and "꞉"
  (U+A789, a modifier letter colon);
- "discord" and "clyde", anywhere, get a hair space (U+200A) inside them ("Disc ord"), and so
  does each pair of backticks ("```" cannot form);
- it is cut to 80 characters;
- "everyone" or "here" alone gets a hair space inside too; an empty name becomes "Écho".
"""

from __future__ import annotations

import re

# Discord's limit on a webhook's name and on a message's username.
NAME_LIMIT = 80
# What a name with nothing left in it is played as.
FALLBACK_NAME = "Écho"
_HAIR_SPACE = "\u200a"
# Whitespace but the hair space this module puts in (kept: a valid name stays as it is).
_SPACES = re.compile("[^\\S\u200a]+")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_LOOK_ALIKES = str.maketrans({"@": "\uff20", "#": "\uff03", ":": "\ua789"})
# Refused anywhere in a name, broken inside. Searched again after each pass: breaking one may
# leave another that overlapped it ("discordiscord").
_INSIDE = re.compile(r"(disc)(ord)|(cly)(de)|(`)(`)", re.IGNORECASE)
# Refused as the whole name.
_ALONE = re.compile(r"(every)(one)|(he)(re)", re.IGNORECASE)


def valid_name(name: str) -> str:
    """The name as Discord takes it for a webhook's username (the module's rules say how it is
    adjusted); a valid name comes back unchanged."""
    text = _CONTROL.sub("", _SPACES.sub(" ", name)).translate(_LOOK_ALIKES)
    while _INSIDE.search(text):
        text = _INSIDE.sub(_broken, text)
    text = text[:NAME_LIMIT].strip()
    if _ALONE.fullmatch(text):
        text = _ALONE.sub(_broken, text)
    return text or FALLBACK_NAME


def _broken(found: re.Match[str]) -> str:
    return _HAIR_SPACE.join(g for g in found.groups() if g is not None)
