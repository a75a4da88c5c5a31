"""How a terminal command's line is read: an id (`/pin 3`), a y/N answer, and the options typed
after a text, named as the Discord command names them: `/remember Call me Sam kind:rule
scope:story`, `/context And the lighthouse? full:true`, `/forget-me character:brann`,
`/pin memory:3`. USAGES says what each command takes; HELP lists them all.

A word at the end of the line is an option when it is `name:value` with one of the command's
option names; the first other word ends the options, and everything before it is the text. To
keep such a word as the text's last word, put a backslash before it (`\\kind:rule`): one
backslash is taken away. A known name with a value it does not take, an option another command
takes but not this one, or anything after a command that takes nothing, is a mistake said in
one line, never ignored and never text stored by surprise.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from memory import InvalidInput, Kind, Scope

# Each option's name and the values it takes (none listed: any one word).
Choices = Mapping[str, Sequence[str]]

REMEMBER: Choices = {"kind": [k.value for k in Kind], "scope": [s.value for s in Scope]}
CONTEXT: Choices = {"full": ["true", "false"]}
PRIVACY: Choices = {"memories": ["where_learned", "everywhere", "default"]}
# An option whose value is one of the person's memories, or a character's key.
MEMORY: Choices = {"memory": []}
FOLLOWUPS: Choices = {"set": ["on", "off"], "drop": []}


@dataclass(frozen=True, slots=True)
class Usage:
    """What a command takes after its name: its options, named as the Discord command's, and
    what else the line may hold, as the help writes it ("": nothing)."""

    options: Choices = field(default_factory=dict)
    rest: str = ""


# Every terminal command, by name. Options as the Discord command names them; a positional
# form the terminal had first (`/pin 3`, `/privacy everywhere`) is read as well.
USAGES: Mapping[str, Usage] = {
    "help": Usage(),
    "why": Usage(),
    "memories": Usage({"history": []}, rest="never|TEXT|history ID"),
    "pin": Usage(MEMORY, rest="ID"),
    "unpin": Usage(MEMORY, rest="ID"),
    "forget": Usage(MEMORY, rest="ID"),
    "restore": Usage(MEMORY, rest="ID"),
    "edit": Usage(rest="ID TEXT"),
    "retry": Usage(),
    "swipe": Usage(rest="N"),
    "remember": Usage(REMEMBER, rest="TEXT"),
    "summary": Usage(),
    "positions": Usage(rest="drop ID REASON"),
    "anchors": Usage(rest="add TEXT|drop ID REASON"),
    "privacy": Usage(PRIVACY, rest="where_learned|everywhere|default"),
    "stats": Usage(),
    "context": Usage(CONTEXT, rest="DRAFT"),
    "strategy": Usage({"name": []}, rest="NAME"),
    "history": Usage(rest="PAGE"),
    "exclude": Usage(rest="ID"),
    "include": Usage(rest="ID"),
    "export": Usage(rest="FILE"),
    "lore": Usage(rest="list|add KEYWORDS | CONTENT|remove ID"),
    "forget-message": Usage(rest="ID"),
    "forget-me": Usage({"character": []}),
    "character": Usage(rest="show"),
    "followups": Usage(FOLLOWUPS, rest="on|off|drop ID"),
    "image": Usage(rest="PATH [TEXT]"),
}
# The names some command takes as an option: at the end of another's line, a mistake.
OPTION_NAMES = frozenset(name for usage in USAGES.values() for name in usage.options)

REMEMBER_USAGE = "/remember TEXT [kind:fact|preference|promise|episode|rule] [scope:global|story]"

HELP = f"""\
Commands: /why · /memories [never|TEXT|history ID] · /pin ID · /unpin ID · /forget ID
          /edit ID TEXT · /restore ID · /retry (another answer) · /swipe N (show answer N)
          {REMEMBER_USAGE}
          /summary · /positions [drop ID REASON] · /anchors [add TEXT|drop ID REASON]
          /privacy [where_learned|everywhere|default] · /stats · /context [DRAFT] [full:true]
          /strategy [NAME] · /history [PAGE] · /exclude ID · /include ID · /export [FILE]
          /lore list|add KEYWORDS | CONTENT|remove ID · /forget-message ID
          /forget-me [character:KEY] · /character (who you talk to) · /help
          /followups [on|off|drop ID] (the character asks how your dated plans went)
          /image PATH [TEXT] (a local picture, sent as one posted on Discord)
          /quit (or Ctrl-D, Ctrl-C)
Options go last, named as in Discord: /remember Call me Sam kind:rule, /pin memory:3 (or
/pin 3). To end a text with such a word, put a backslash before it: /remember I like
\\kind:rule. /context's full:true lists each history message on a line of its own instead of
one line per run (texts stay cut short). An option a command does not take is refused."""


# The shortest head, then the last whitespace-separated word: the head never ends in a space.
_LAST = re.compile(r"(.*?)\s*(\S+)", re.DOTALL)


def parse(command: str, arg: str) -> tuple[str, dict[str, str]]:
    """What follows a command's name: the rest of the line and the options it takes; one
    line (InvalidInput) for an option it does not take or anything after one that takes
    nothing."""
    usage = USAGES[command]
    text, found = split(arg, usage.options, others=OPTION_NAMES, command=command)
    if text and not usage.rest:
        raise InvalidInput(f"/{command} takes nothing after it: write /{command} alone")
    return text, found


def one(command: str, arg: str, name: str) -> str:
    """The value of a command's option given by name or as the line's rest (`/pin memory:3`
    or `/pin 3`); "" when neither."""
    text, found = parse(command, arg)
    if text and name in found:
        raise InvalidInput(f"{name} is given twice ({text} and {name}:{found[name]})")
    return found.get(name, text)


def split(
    line: str, choices: Choices, *, others: Collection[str] = (), command: str = ""
) -> tuple[str, dict[str, str]]:
    """The text and the options written at its end; a word at its end naming an option of
    `others` (another command's) that `choices` lacks is refused (`command` names the one
    whose line it is)."""
    text, found = line.strip(), {}
    while (last := _LAST.fullmatch(text)) is not None:
        name, colon, value = last.group(2).partition(":")
        if colon and name in others and name not in choices:
            takes = ", ".join(f"{n}:" for n in choices) or "no option"
            raise InvalidInput(
                f"/{command} has no option {name}: it takes {takes} (to keep the word in the "
                f"text, write \\{name}:{value})"
            )
        if not colon or name not in choices:
            break
        if not value or (choices[name] and value not in choices[name]):
            listed = f"one of {', '.join(choices[name])}" if choices[name] else "one word"
            raise InvalidInput(
                f"{name}:{value}? {name} is {listed} (to keep the word in the text, write "
                f"\\{name}:{value})"
            )
        if name in found:
            raise InvalidInput(f"{name} is given twice")
        found[name] = value
        text = last.group(1)
    last = _LAST.fullmatch(text)
    shaped = {**{n: () for n in others}, **choices}
    if last is not None and last.group(2).startswith("\\") and _shaped(last.group(2), shaped):
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
