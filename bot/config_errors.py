"""One line for a configuration that cannot be used, naming where the bad value came from.

A value may come from an ECHO_* environment variable, a secret file or the TOML file: the line
names the one that set it, so nobody searches the file for a value the environment gave. A key
that moved names its new place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError
from pydantic_settings import SettingsError

ENV_PREFIX = "ECHO_"
NESTING = "__"

# Keys that moved, (section, key) -> (section, key): the old key is refused with its new place.
# [llm] num_ctx became [context] context_length when the context budget got its own section.
RENAMED: Mapping[tuple[str, str], tuple[str, str]] = {
    ("llm", "num_ctx"): ("context", "context_length"),
}


def env_name(loc: Sequence[str]) -> str:
    """The environment variable that sets the setting at `loc`."""
    return ENV_PREFIX + NESTING.join(loc).upper()


def _from_env(loc: Sequence[str], environ: Mapping[str, str]) -> str | None:
    # pydantic-settings matches names regardless of case; the longest match set the value
    # (ECHO_MEMORY__QUOTAS for an error inside the quotas, ECHO_MEMORY for the whole section).
    by_upper = {name.upper(): name for name in environ}
    for n in range(len(loc), 0, -1):
        found = by_upper.get(env_name(loc[:n]))
        if found is not None:
            return found
    return None


def _from_secret(loc: Sequence[str], secrets_dir: str | Path | None) -> Path | None:
    if secrets_dir is None:
        return None
    for n in range(len(loc), 0, -1):
        candidate = Path(secrets_dir) / NESTING.join(loc[:n])
        if candidate.is_file():
            return candidate
    return None


def _renamed(loc: Sequence[str]) -> tuple[str, str] | None:
    return RENAMED.get((loc[0], loc[1])) if len(loc) == 2 else None


def describe(
    exc: ValidationError,
    path: Path,
    *,
    secrets_dir: str | Path | None,
    environ: Mapping[str, str],
) -> str:
    """One line for every refused value, each blamed on its variable, secret file or file."""
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        field = ".".join(loc) or "(top level)"
        variable = _from_env(loc, environ)
        secret = None if variable else _from_secret(loc, secrets_dir)
        moved = _renamed(loc) if error["type"] == "extra_forbidden" else None
        if variable is not None and moved is not None:
            parts.append(f"{variable} was renamed {env_name(moved)}")
        elif variable is not None:
            unknown = error["type"] == "extra_forbidden"
            parts.append(f"{variable}: " + ("no such setting" if unknown else error["msg"]))
        elif secret is not None:
            parts.append(f"the secret file {secret}: {error['msg']}")
        elif moved is not None:
            parts.append(f"{path}: [{loc[0]}] {loc[1]} is now [{moved[0]}] {moved[1]}")
        elif error["type"] == "extra_forbidden":
            parts.append(f"{path}: unknown setting {field!r}")
        else:
            parts.append(f"{path}: {field}: {error['msg']}{_also_set(loc, environ)}")
    return "; ".join(parts)


def _also_set(loc: Sequence[str], environ: Mapping[str, str]) -> str:
    # A check across keys (context_length against response_tokens) may mix the file and the
    # environment: say which variables took part.
    prefix = env_name(loc) + NESTING if loc else ENV_PREFIX
    names = sorted(name for name in environ if name.upper().startswith(prefix))
    return f" (with {', '.join(names)} set)" if names else ""


_SOURCE_ERROR = re.compile(r'field "(?P<field>\w+)" from source "(?P<source>\w+)"')


def describe_source_error(
    exc: SettingsError,
    path: Path,
    *,
    secrets_dir: str | Path | None,
    environ: Mapping[str, str],
    structured: Mapping[str, frozenset[str]],
) -> str:
    """One line for a value pydantic-settings could not decode (a list or table not in JSON);
    `structured` gives each section's keys that hold a list or a table."""
    found = _SOURCE_ERROR.search(str(exc))
    if found is None:
        return f"{path}: {exc}"
    section = found["field"]
    if found["source"].startswith("Env"):
        # Only a whole section, or a list or table key, is read as JSON.
        wanted = {env_name([section])} | {
            env_name([section, key]) for key in structured.get(section, ())
        }
        names = sorted(n for n in environ if n.upper() in wanted and not _is_json(environ[n]))
        where = ", ".join(names) or env_name([section])
    else:
        where = f"a secret file for [{section}] in {secrets_dir}"
    return f"{where}: not valid JSON (a list or a table is written in JSON there: [1, 2])"


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True
