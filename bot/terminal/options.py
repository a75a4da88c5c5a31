"""How a terminal command's line is read: an id (`/pin 3`), a y/N answer, and the options typed
after a text, named as Discord names them: `/remember Call me Sam kind:rule scope:story`,
`/context And the lighthouse? full:true`. HELP lists them all.

A word at the end of the line is an option when it is `name:value` with one of the command's
option names; the first other word ends the options, and everything before it is the text. To
keep such a word as the text's last word, put a backslash before it (`\\kind:rule`): one
backslash is taken away. A known name with a value it does not take is a mistake said in one
line, never text stored by surprise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memory import InvalidInput, Kind, Scope

Choices = Mapping[str, Sequence[str]]

REMEMBER: Choices = {"kind": [k.value for k in Kind], "scope": [s.value for s in Scope]}
CONTEXT: Choices = {"full": ["true", "false"]}

REMEMBER_USAGE = "/remember TEXT [kind:fact|preference|promise|episode|rule] [scope:global|story]"

HELP = f"""\
Commands: /why · /memories [never|TEXT|history ID] · /pin ID · /unpin ID · /forget ID
          /edit ID TEXT · /restore ID · /retry (another answer) · /swipe N (show answer N)
          {REMEMBER_USAGE}
          /summary · /positions [drop ID REASON] · /anchors [add TEXT|drop ID REASON]
          /privacy [where_learned|everywhere|default] · /stats · /context [DRAFT] [full:true]
          /strategy [NAME] · /history [PAGE] · /exclude ID · /include ID · /export [FILE]
          /lore list|add KEYWORDS | CONTENT|remove ID · /forget-message ID · /forget-me
          /help · /quit (or Ctrl-D, Ctrl-C)
Options go last, as in Discord: /remember Call me Sam kind:rule. To end a text with such a
word, put a backslash before it: /remember I like \\kind:rule. /context's full:true lists each
history message on a line of its own instead of one line per run (texts stay cut short)."""


# The shortest head, then the last whitespace-separated word: the head never ends in a space.
_LAST = re.compile(r"(.*?)\s*(\S+)", re.DOTALL)


def split(line: str, choices: Choices) -> tuple[str, dict[str, str]]:
    """The text and the options written at its end."""
    text, found = line.strip(), {}
    while (last := _LAST.fullmatch(text)) is not None:
        name, colon, value = last.group(2).partition(":")
        if not colon or name not in choices:
            break
        if value not in choices[name]:
            raise InvalidInput(
                f"{name}:{value}? {name} is one of {', '.join(choices[name])} (to keep the "
                f"word in the text, write \\{name}:{value})"
            )
        if name in found:
            raise InvalidInput(f"{name} is given twice")
        found[name] = value
        text = last.group(1)
    last = _LAST.fullmatch(text)
    if last is not None and last.group(2).startswith("\\") and _shaped(last.group(2), choices):
        text = text[: last.start(2)] + last.group(2)[1:]
    return text, found


def join(text: str, options: Mapping[str, str], choices: Choices) -> str:
    """The line `split` reads back as this text and these options (the text stripped)."""
    text = text.strip()
    last = _LAST.fullmatch(text)
    if last is not None and _shaped(last.group(2), choices):
        text = text[: last.start(2)] + "\\" + last.group(2)
    return " ".join([text, *(f"{name}:{value}" for name, value in options.items())]).strip()


def _shaped(word: str, choices: Choices) -> bool:
    """Whether a word, its backslashes aside, would be read as an option."""
    name, colon, _ = word.lstrip("\\").partition(":")
    return bool(colon) and name in choices


def number(arg: str) -> int:
    """The id typed after a command (`3` or `#3`); InvalidInput when it is none."""
    try:
        number = int(arg.lstrip("#"))
    except ValueError:
        number = -1
    # Ids are positive SQLite integers (64 bits): anything else would fail in the query.
    if not 0 < number < 2**63:
        raise InvalidInput(f"{arg or 'nothing'} is not an id (a number, e.g. /pin 3)")
    return number


def yes(answer: str) -> bool:
    """Whether an answer to a y/N question is yes (in English or French)."""
    return answer.strip().casefold() in ("y", "yes", "o", "oui")
