"""The `echo-bot` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.config import ConfigError, Settings, load_settings

log = logging.getLogger(__name__)

DEFAULT_SECRETS_DIR = Path("/run/secrets")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="echo-bot", description="A character who remembers.")
    parser.add_argument("--config", default="config.toml", help="TOML settings file")
    parser.add_argument("--secrets-dir", default=None, help="directory of secret files")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check-config", help="load the settings and say what is wrong, if anything")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    secrets = args.secrets_dir or (DEFAULT_SECRETS_DIR if DEFAULT_SECRETS_DIR.is_dir() else None)
    return load_settings(args.config, secrets_dir=secrets)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = _settings(args)
    except ConfigError as exc:
        print(f"echo-bot: {exc}", file=sys.stderr)
        return 2
    if args.command == "check-config":
        print(f"{args.config}: OK (character {settings.character.name!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
