"""[[characters]]: the three-character example loads from a fresh clone; a bad cast is refused
at start in one line naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings
from bot.runtime import cast

ROOT = Path(__file__).parents[2]


def test_the_three_character_example_plays_three_characters_where_it_says() -> None:
    settings = load_settings(ROOT / "docs" / "three-characters.toml")
    characters, _ = cast(settings)
    assert [c.key for c in characters] == ["nyx", "brann", "sel"]
    assert characters.default.name == "Nyx"
    assert characters.for_channel(111111111111111111).name == "Brann"
    assert characters.for_channel(9, parent_id=333333333333333333).name == "Sel"  # a thread
    assert characters.for_channel(42).name == "Nyx"


def test_the_old_character_table_alone_is_one_character_keyed_default(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[character]\nname = "Lune"\n', encoding="utf-8")
    settings = load_settings(config)
    assert [(c.key, c.name) for c in settings.characters] == [("default", "Lune")]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('[[characters]]\nkey = "a"\ndefault = true\n[[characters]]\nkey = "b"\ndefault = true',
         "'a' and 'b' are both default = true"),
        ('[[characters]]\nkey = "a"\n[[characters]]\nkey = "a"', "the key 'a' names two"),
        ('[[characters]]\nkey = "a"\ncolour = "red"', "unknown setting 'characters.0.colour'"),
        ('[[characters]]\nkey = "Nyx Two"', "characters.0.key: String should match pattern"),
        ('[character]\nname = "X"\n[[characters]]\nkey = "a"',
         "set [character] or [[characters]] tables, not both"),
    ],
)  # fmt: skip
def test_a_bad_cast_is_one_line_naming_the_setting(tmp_path: Path, body: str, said: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    line = str(refused.value)
    assert "\n" not in line and said in line, line
    assert line.startswith(f"{config}: ")


def test_each_character_says_its_dates_in_its_own_language(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[[characters]]\nkey = "nyx"\n[[characters]]\nkey = "sel"\nlanguage = "fr"\n'
        'timezone = "Europe/Paris"\n',
        encoding="utf-8",
    )
    characters, _ = cast(load_settings(config))
    assert [(c.key, c.language) for c in characters] == [("nyx", "en"), ("sel", "fr")]
    alone = tmp_path / "alone.toml"
    alone.write_text('[character]\nlanguage = "fr"\n', encoding="utf-8")
    assert cast(load_settings(alone))[0].default.language == "fr"
    alone.write_text('[character]\nlanguage = "de"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"character\.language: Input should be 'en' or 'fr'"):
        load_settings(alone)
