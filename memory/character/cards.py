"""Character Cards (the format SillyTavern, RisuAI, Agnai and NeoTavern share): V2 and V3, as
JSON or inside a PNG, read into our character, its greetings, example dialogue and lore entries.

A PNG card carries its JSON base64-encoded in a text chunk: `chara` (V2) or `ccv3` (V3, preferred
when both exist), read by memory.character.png without decoding the image. Every string of the card
is made well-formed Unicode before anything else, and a card larger than the caps below is
refused in one line naming the cap. The card's text is persona, never memory: nothing here
writes about a user. `{{char}}` is replaced by the character's name at import in the persona,
greetings and examples; in lore entries and their keys it stays a placeholder, filled with the
playing character's name when an entry is matched and shown, as `{{user}}` everywhere is with the
speaker's display name each time a prompt is built (a lore entry is stored once and shared by
everyone who talks to the character).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory.character.names import valid_name
from memory.character.png import PNG_SIGNATURE, png_payload, utf8
from memory.context.lore import (
    CHAR_PLACEHOLDER,
    MAX_CONTENT_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    character_key,
)
from memory.context.prompt import USER_PLACEHOLDER
from memory.errors import CardError
from memory.model import LoreEntry, LoreScope
from memory.text import clean, clean_message, well_formed

# A card is text and one portrait: an SDXL portrait (832x1216) is about 2 MB, a 2x upscale 6 MB.
MAX_CARD_BYTES = 20 * 1024 * 1024
# Every entry is matched against every message: 1,000 entries cost ~33 ms per turn in
# activate() on the dev machine (100,000 took 4.3 s and blocked the event loop each turn).
MAX_LORE_ENTRIES = 1000
# The persona and system prompt are never cut from a prompt: 32,000 characters is ~8k tokens,
# the whole default context_length, so a longer one leaves no room for the conversation.
MAX_PERSONA_CHARS = 32_000
PRIORITY_LIMIT = 10**9
# How a card's lore entries are written, in their digest: a card stored by an older way (with
# {{char}} already filled) is stored again at the next start.
LORE_FORMAT = 2

# The spellings the specs give, case ignored: V1 lists {{char}}/<BOT> and {{user}}/<USER>, V3
# adds <char>.
_CHAR_MACRO = re.compile(r"\{\{\s*char\s*\}\}|<BOT>|<CHAR>", re.IGNORECASE)
_USER_MACRO = re.compile(r"\{\{\s*user\s*\}\}|<USER>", re.IGNORECASE)
_START = re.compile(r"^\s*<START>\s*$", re.IGNORECASE | re.MULTILINE)

# The V1 fields. SillyTavern and most editors also write them next to `data` in a V2 or V3 card,
# for V1 readers: those copies are read from `data` and not reported as unknown.
_V1_FIELDS = frozenset(
    {
        "name",
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
    }
)
# Fields the specs define; anything else is kept in `extra` and counted as unknown.
_DATA_FIELDS = _V1_FIELDS | frozenset(
    {
        "creator_notes",
        "system_prompt",
        "post_history_instructions",
        "alternate_greetings",
        "character_book",
        "tags",
        "creator",
        "character_version",
        "extensions",
        # V3
        "assets",
        "nickname",
        "creator_notes_multilingual",
        "source",
        "group_only_greetings",
        "creation_date",
        "modification_date",
    }
)
_BOOK_FIELDS = frozenset(
    {
        "name",
        "description",
        "scan_depth",
        "token_budget",
        "recursive_scanning",
        "extensions",
        "entries",
    }
)
_ENTRY_FIELDS = frozenset(
    {
        "keys",
        "content",
        "extensions",
        "enabled",
        "insertion_order",
        "case_sensitive",
        "name",
        "priority",
        "id",
        "comment",
        "selective",
        "secondary_keys",
        "constant",
        "position",
        "use_regex",
    }
)


@dataclass(frozen=True, slots=True)
class CardReport:
    """What an import understood, for `echo-bot card show`."""

    spec: str
    container: str
    fields: dict[str, int]
    entries: int = 0
    constant: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Card:
    """A character card as Écho uses it."""

    name: str
    persona: str
    system: str
    post_history: str
    greetings: tuple[str, ...]
    examples: str
    lore: tuple[LoreEntry, ...]
    lore_budget: int | None
    source: str
    digest: str
    report: CardReport
    extra: dict[str, Any] = field(default_factory=dict)
    # The PNG file the card came in (its picture), None for a JSON card.
    picture: bytes | None = field(default=None, repr=False, compare=False)
    # Its tags (`data.tags`), as the card wrote them.
    tags: tuple[str, ...] = ()

    @property
    def adult(self) -> bool:
        """Whether its tags mark it for adults only."""
        return any(t.strip().casefold() in ADULT_TAGS for t in self.tags)


# The tags that mark a card for adults only, in any case. The specs define `tags` as free
# strings; the card sites and front ends that share cards mark adult ones "NSFW" (most), and
# some "adult" or "18+". Known miss: a card whose adult content no tag says.
ADULT_TAGS = frozenset({"nsfw", "adult", "18+"})


# What to do about a file that is not a card, said after what is wrong with it.
GIVE_A_CARD = "give a Character Card V2/V3 file (.json, or a .png with the card inside)"
# What to do about a file that is not a lorebook.
GIVE_A_LOREBOOK = "give a lorebook .json file (SillyTavern world info, or a character_book)"


def load_card(path: str | Path, *, played_as: str | None = None) -> Card:
    """Read a card file (.json or .png); raise CardError saying what is wrong."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_CARD_BYTES:
            raise CardError(
                f"{path}: {size:,} bytes, over the {MAX_CARD_BYTES:,}-byte cap for a character card"
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise CardError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        if raw.startswith(PNG_SIGNATURE):
            payload, container = png_payload(raw, max_bytes=MAX_CARD_BYTES)
        else:
            payload, container = raw.removeprefix(b"\xef\xbb\xbf"), "JSON file"
        text, replaced = utf8(payload)
        try:
            card = parse_card(
                text,
                container=container,
                played_as=played_as,
                notes=("invalid UTF-8 replaced by \ufffd",) if replaced else (),
            )
            return replace(card, picture=raw) if raw.startswith(PNG_SIGNATURE) else card
        except CardError:
            if replaced and container == "JSON file":
                raise CardError(f"neither a PNG image nor UTF-8 JSON text: {GIVE_A_CARD}") from None
            raise
    except CardError as exc:
        raise CardError(f"{path}: {exc}") from None


def parse_card(
    text: str,
    *,
    container: str = "JSON",
    played_as: str | None = None,
    notes: tuple[str, ...] = (),
) -> Card:
    """Read a card's JSON text. `played_as` is the name the bot plays it under (the config's
    when it sets one): `{{char}}` and the lore's character scope use it. `notes` are warnings
    about how the text was read."""
    try:
        document = _well_formed(json.loads(well_formed(text)))
    except json.JSONDecodeError as exc:
        raise CardError(f"not valid JSON ({exc.msg}, line {exc.lineno}): {GIVE_A_CARD}") from None
    except RecursionError:
        raise CardError(f"not a card: its JSON is nested too deeply: {GIVE_A_CARD}") from None
    if not isinstance(document, dict):
        raise CardError(f"not a character card (its JSON is not an object): {GIVE_A_CARD}")
    spec = document.get("spec")
    warned: list[str] = list(notes)
    if spec in ("chara_card_v2", "chara_card_v3"):
        data = document.get("data")
        if not isinstance(data, dict):
            raise CardError(f"a {spec} card without its 'data' object")
    elif spec is None and "name" in document:
        spec, data = "chara_card_v1", document
        warned.append("a V1 card (no 'spec'): read with the V2 field names")
    elif is_lorebook(document):
        raise CardError(
            "a lorebook (world info), not a character card → import it with "
            "`echo-bot lore import FILE` (add --character KEY to keep it to one character)"
        )
    elif spec is None:
        raise CardError(
            'not a character card (no "spec": "chara_card_v2" or "chara_card_v3", and no '
            f'"name"): {GIVE_A_CARD}'
        )
    else:
        shown = spec if isinstance(spec, str) and len(spec) <= 40 else type(spec).__name__
        raise CardError(
            f'not a card Écho reads ("spec": {shown!r}, where "chara_card_v2" or '
            f'"chara_card_v3" was expected): {GIVE_A_CARD}'
        )
    name = clean(_text(data, "name"))
    if not name:
        raise CardError("the card has no name")
    # Played under a name Discord takes (memory/character/names.py): in {{char}} too.
    me = valid_name(played_as or name)
    if played_as is None and me != name:
        shown = name if len(name) <= 40 else f"{name[:39]}…"
        warned.append(f"the name {shown!r} ({len(name):,} characters) is played as {me!r}")
    unknown = [f"data.{k}" for k in data if k not in _DATA_FIELDS]
    if spec != "chara_card_v1":
        known = {"spec", "spec_version", "data", *_V1_FIELDS}
        unknown += [k for k in document if k not in known]

    def filled(key: str) -> str:
        return _macros(_text(data, key), me)

    persona = "\n\n".join(
        part
        for part in (
            filled("description"),
            f"Personality: {filled('personality')}" if _text(data, "personality").strip() else "",
            f"Scenario: {filled('scenario')}" if _text(data, "scenario").strip() else "",
        )
        if part.strip()
    )
    system = filled("system_prompt")
    if len(persona) + len(system) > MAX_PERSONA_CHARS:
        raise CardError(
            f"the persona and system prompt are {len(persona) + len(system):,} characters, over "
            f"the {MAX_PERSONA_CHARS:,}-character cap (they are in every prompt)"
        )
    if re.search(r"\{\{\s*original\s*\}\}", system, re.IGNORECASE):
        system = re.sub(r"\{\{\s*original\s*\}\}", "", system, flags=re.IGNORECASE).strip()
        warned.append("system_prompt's {{original}} removed (Écho has no default to insert)")
    alternates = data.get("alternate_greetings") or []
    if not isinstance(alternates, list):
        warned.append("alternate_greetings is not a list: ignored")
        alternates = []
    others = [_macros(a, me) for a in alternates if isinstance(a, str)]
    greetings = tuple(g for g in (filled("first_mes"), *others) if g.strip())
    examples = _START.sub("", filled("mes_example")).strip()
    entries, skipped, budget, book_unknown, book_warnings, constant = _lorebook(
        data.get("character_book"), me
    )
    fields = {k: len(v) for k in sorted(_DATA_FIELDS) if isinstance(v := data.get(k), str) and v}
    if alternates:
        fields["alternate_greetings"] = len(alternates)
    # The name it is played under is part of what the lore entries say: a new name, new entries.
    digest = hashlib.sha256(
        json.dumps([LORE_FORMAT, me, data], sort_keys=True).encode()
    ).hexdigest()
    source = f"card:{character_key(name)}"
    lore = tuple(replace(e, source=source, extra={**e.extra, "card": digest}) for e in entries)
    report = CardReport(
        spec=spec,
        container=container,
        fields=fields,
        entries=len(lore),
        constant=constant,
        skipped=tuple(skipped),
        unknown=tuple(unknown + book_unknown),
        warnings=tuple(warned + book_warnings),
    )
    return Card(
        name=valid_name(name),
        persona=persona,
        system=system,
        post_history=filled("post_history_instructions"),
        greetings=greetings,
        examples=examples,
        lore=lore,
        lore_budget=budget,
        source=source,
        digest=digest,
        report=report,
        extra={k: v for k, v in data.items() if k not in _DATA_FIELDS},
        tags=_tags(data.get("tags")),
    )


def _tags(value: Any) -> tuple[str, ...]:
    """A card's tags: its strings, in order (a card with no list has none)."""
    if not isinstance(value, list):
        return ()
    return tuple(clean(t) for t in value if isinstance(t, str) and t.strip())


def _well_formed(value: Any) -> Any:
    """The parsed JSON with every string (keys too) made encodable: a card's "\\ud800" escape
    would otherwise reach the database and the chat backend."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [_well_formed(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(k): _well_formed(v) for k, v in value.items()}
    return value


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _macros(text: str, name: str) -> str:
    """{{char}} and <BOT> become the name; {{user}} and <USER> one placeholder, filled with the
    speaker's name in each prompt. Invisible characters go, as from every text Écho keeps."""
    return clean_message(_USER_MACRO.sub(USER_PLACEHOLDER, _named(text, name)))


def _named(text: str, name: str) -> str:
    return _CHAR_MACRO.sub(lambda _: name, text)


def _lorebook(
    book: object, me: str | None
) -> tuple[list[LoreEntry], list[tuple[str, str]], int | None, list[str], list[str], int]:
    """The enabled entries as lore entries, bound to the character `me` (None: to every
    character); skipped ones with a reason; unknown field paths."""
    if book is None:
        return [], [], None, [], [], 0
    if not isinstance(book, dict):
        return [], [], None, [], ["character_book is not an object: no lore imported"], 0
    unknown = [f"data.character_book.{k}" for k in book if k not in _BOOK_FIELDS]
    warned = []
    if book.get("recursive_scanning"):
        warned.append("recursive_scanning is not supported: entries are matched on the chat only")
    depth = _int(book.get("scan_depth"))
    depth = depth if depth is not None and 0 <= depth <= 1000 else None
    budget = _int(book.get("token_budget"))
    budget = budget if budget is not None and budget > 0 else None
    raw_entries = book.get("entries")
    if not isinstance(raw_entries, list):
        return [], [], budget, unknown, [*warned, "character_book has no entries list"], 0
    if len(raw_entries) > MAX_LORE_ENTRIES:
        raise CardError(
            f"the lorebook has {len(raw_entries):,} entries, over the {MAX_LORE_ENTRIES:,}-entry "
            "cap (each is matched against every message)"
        )
    entries: list[LoreEntry] = []
    skipped: list[tuple[str, str]] = []
    constant = 0
    for index, raw in enumerate(raw_entries):
        label = f"entry {index + 1}"
        if not isinstance(raw, dict):
            skipped.append((label, "not an object"))
            continue
        if isinstance(raw.get("name") or raw.get("comment"), str):
            label += f" {str(raw.get('name') or raw.get('comment'))[:40]!r}"
        unknown += [
            f"data.character_book.entries[{index}].{k}" for k in raw if k not in _ENTRY_FIELDS
        ]
        found = raw.get("extensions")
        extensions: dict[str, Any] = found if isinstance(found, dict) else {}
        unknown += [f"data.character_book.entries[{index}].extensions.{k}" for k in extensions]
        reason = _unusable(raw)
        if reason:
            skipped.append((label, reason))
            continue
        # A key may name the character ("{{char}}"): it fires when the conversation does.
        keys = tuple(
            dict.fromkeys(k for k in (clean(_named(k, CHAR_PLACEHOLDER)) for k in raw["keys"]) if k)
        )
        listed = raw.get("secondary_keys")
        listed = listed if isinstance(listed, list) else []
        secondary = tuple(
            k
            for k in (clean(_named(s, CHAR_PLACEHOLDER)) for s in listed if isinstance(s, str))
            if k
        )
        content = _macros(raw["content"], CHAR_PLACEHOLDER)
        if len(content) > MAX_CONTENT_CHARS:
            skipped.append((label, f"content over {MAX_CONTENT_CHARS} characters"))
            continue
        if len(keys) > MAX_KEYWORDS or len(secondary) > MAX_KEYWORDS:
            warned.append(f"{label}: keys beyond the first {MAX_KEYWORDS} ignored")
        own_depth = _int(extensions.get("scan_depth"))
        is_constant = raw.get("constant") is True
        constant += is_constant
        priority = _int(raw.get("priority"))
        order = _int(raw.get("insertion_order"))
        entries.append(
            LoreEntry(
                id=0,
                content=content,
                keywords=keys[:MAX_KEYWORDS],
                scope=LoreScope.CHARACTER if me else LoreScope.GLOBAL,
                character=character_key(me) if me else None,
                priority=_clamp(priority if priority is not None else order or 0),
                constant=is_constant,
                case_sensitive=raw.get("case_sensitive") is True,
                secondary_keywords=secondary[:MAX_KEYWORDS],
                selective=raw.get("selective") is True,
                scan_depth=own_depth if own_depth is not None and 0 <= own_depth <= 1000 else depth,
                extra={
                    k: v for k, v in raw.items() if k not in ("keys", "content", "secondary_keys")
                },
            )
        )
    return entries, skipped, budget, unknown, warned, constant


def _int(value: object) -> int | None:
    # JSON true is not a number here, whatever Python thinks of bool.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _clamp(value: int) -> int:
    # SQLite integers are 64-bit; a card may say anything.
    return max(-PRIORITY_LIMIT, min(PRIORITY_LIMIT, value))


def _unusable(raw: Mapping[str, Any]) -> str:
    """Why an entry cannot become a lore entry ('' when it can)."""
    if raw.get("enabled") is False:
        return "disabled"
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        return "no content"
    if len(content) > MAX_CONTENT_CHARS:
        return f"content over {MAX_CONTENT_CHARS} characters"
    keys = raw.get("keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        return "keys is not a list of strings"
    if raw.get("use_regex") is True:
        return "regex keys are not supported"
    if not raw.get("constant") and not any(k.strip() for k in keys):
        return "no keys and not constant: it could never activate"
    if any(len(k) > MAX_KEYWORD_CHARS for k in keys):
        return f"a key longer than {MAX_KEYWORD_CHARS} characters"
    return ""


@dataclass(frozen=True, slots=True)
class Lorebook:
    """A lorebook file read as lore entries, all from one source (a second import replaces)."""

    name: str
    lore: tuple[LoreEntry, ...]
    source: str
    digest: str
    format: str
    skipped: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()


def is_lorebook(document: Mapping[str, Any]) -> bool:
    """Tell a lorebook (SillyTavern's world info, a card's character_book saved alone) from a
    card: entries, and none of a card's own fields."""
    return "entries" in document and not any(
        k in document for k in ("spec", *_V1_FIELDS - {"name"})
    )


# SillyTavern's world-info entry fields and the character_book field each one is.
_WORLD_INFO_FIELDS = {
    "key": "keys",
    "keysecondary": "secondary_keys",
    "content": "content",
    "constant": "constant",
    "selective": "selective",
    "order": "insertion_order",
    "caseSensitive": "case_sensitive",
    "comment": "name",
    "uid": "id",
}


def load_lorebook(path: str | Path, *, character: str | None = None) -> Lorebook:
    """Read a lorebook file (SillyTavern world info, or a character_book object); its entries
    are for `character` alone, or for every character when None. CardError says what is
    wrong."""
    path = Path(path)
    # A card's lorebook is stored by `card import`, which reads the card whole.
    as_card = f"its lorebook is imported with `echo-bot card import {path}`"
    try:
        if path.stat().st_size > MAX_CARD_BYTES:
            raise CardError(f"over the {MAX_CARD_BYTES:,}-byte cap for a lorebook")
        raw = path.read_bytes()
        if raw.startswith(PNG_SIGNATURE):
            raise CardError(f"a PNG (a character card's picture), not a lorebook: {as_card}")
        text, _ = utf8(raw.removeprefix(b"\xef\xbb\xbf"))
        document = _well_formed(json.loads(well_formed(text)))
    except OSError as exc:
        raise CardError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise CardError(
            f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}): {GIVE_A_LOREBOOK}"
        ) from None
    except (CardError, RecursionError) as exc:
        raise CardError(f"{path}: {exc or 'nested too deeply'}") from None
    if not isinstance(document, dict) or not is_lorebook(document):
        if isinstance(document, dict) and ("spec" in document or "data" in document):
            raise CardError(f"{path}: a character card, not a lorebook: {as_card}")
        raise CardError(f"{path}: not a lorebook (no 'entries' of world info): {GIVE_A_LOREBOOK}")
    raw = document["entries"]
    if isinstance(raw, dict):  # SillyTavern: {"0": {...}, "1": {...}}
        book_format = "SillyTavern world info"
        entries = [_from_world_info(e) if isinstance(e, dict) else e for e in raw.values()]
    else:
        book_format = "character_book"
        entries = raw
    me = character.strip() if character else None
    lore, skipped, _budget, _unknown, warned, _constant = _lorebook(
        {**{k: v for k, v in document.items() if k in _BOOK_FIELDS}, "entries": entries}, me
    )
    name = clean(_text(document, "name")) or path.stem
    digest = hashlib.sha256(
        json.dumps([LORE_FORMAT, me, document], sort_keys=True).encode()
    ).hexdigest()
    source = f"lorebook:{character_key(path.stem)}"
    return Lorebook(
        name=name,
        source=source,
        digest=digest,
        format=book_format,
        lore=tuple(replace(e, source=source, extra={**e.extra, "card": digest}) for e in lore),
        skipped=tuple(skipped),
        warnings=tuple(warned),
    )


def _from_world_info(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A SillyTavern world-info entry in the character_book's field names."""
    out = {ours: entry[theirs] for theirs, ours in _WORLD_INFO_FIELDS.items() if theirs in entry}
    out["enabled"] = entry.get("disable") is not True
    out.setdefault("keys", [])
    depth = _int(entry.get("scanDepth"))
    out["extensions"] = {"scan_depth": depth} if depth is not None else {}
    return out
