"""[[characters]]: the three-character example loads from a fresh clone; a bad cast is refused
at start in one line naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings
from bot.runtime import cast

ROOT = Path(__file__).parents[2]


def test_the_three_character_example_plays_three_characters_where_it_says(
    tmp_path: Path,
) -> None:
    """From a fresh clone: the example config with the recipe's tables appended."""
    example = (ROOT / "config.example.toml").read_text(encoding="utf-8")
    recipe = (ROOT / "docs" / "three-characters.toml").read_text(encoding="utf-8")
    characters, _ = cast(load_settings(_written(tmp_path, example + "\n" + recipe)))
    assert [c.name for c in characters] == ["Écho", "Brann", "Sel"]
    assert characters.default.name == "Écho"
    assert characters.for_channel(111111111111111111).name == "Brann"
    assert characters.for_channel(9, parent_id=333333333333333333).name == "Sel"  # a thread
    assert characters.for_channel(42).name == "Écho"


def test_the_old_character_table_alone_is_one_character_keyed_default(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[character]\nname = "Lune"\n', encoding="utf-8")
    settings = load_settings(config)
    assert [(c.key, c.name) for c in settings.characters] == [("default", "Lune")]


def test_tables_added_to_a_one_character_config_keep_its_character_and_settings(
    tmp_path: Path,
) -> None:
    """The recipe: `cat docs/three-characters.toml >> config.toml` on the example config a new
    user edited. Their [character] (its card, time zone) stays the default one, under the key
    its memories are kept under, and their [llm] settings stay; two characters join it."""
    edited = (
        (ROOT / "config.example.toml")
        .read_text(encoding="utf-8")
        .replace('chat_model = "llama3.1:8b"', 'chat_model = "qwen2.5:7b"')
        .replace("[character]\n", '[character]\ntimezone = "Europe/Paris"\n', 1)
    )
    recipe = (ROOT / "docs" / "three-characters.toml").read_text(encoding="utf-8")
    tables = [line for line in recipe.splitlines() if line.startswith("[")]
    assert set(tables) == {"[[characters]]"}  # tables only: appended, they replace nothing
    settings = load_settings(_written(tmp_path, edited + "\n" + recipe))
    characters, _ = cast(settings)
    assert [c.key for c in characters] == ["default", "brann", "sel"]
    assert characters.default.key == "default" and characters.default.name == "Écho"
    assert settings.characters[0].timezone == "Europe/Paris"
    assert settings.llm.chat_model == "qwen2.5:7b"
    assert characters.for_channel(111111111111111111).name == "Brann"
    assert characters.for_channel(42).key == "default"


def test_a_table_marked_default_takes_dms_from_the_kept_character(tmp_path: Path) -> None:
    body = '[character]\nname = "Lune"\n[[characters]]\nkey = "a"\nname = "A"\ndefault = true\n'
    characters, _ = cast(load_settings(_written(tmp_path, body)))
    assert [c.key for c in characters] == ["default", "a"] and characters.default.key == "a"


def _written(folder: Path, body: str) -> Path:
    (folder / "config.toml").write_text(body, encoding="utf-8")
    return folder / "config.toml"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('[[characters]]\nkey = "a"\ndefault = true\n[[characters]]\nkey = "b"\ndefault = true',
         "'a' and 'b' are both default = true"),
        ('[[characters]]\nkey = "a"\n[[characters]]\nkey = "a"', "the key 'a' names two"),
        ('[[characters]]\nkey = "a"\ncolour = "red"', "unknown setting 'characters.0.colour'"),
        ('[[characters]]\nkey = "Nyx Two"', "characters.0.key: String should match pattern"),
        ('[character]\nname = "X"\n[[characters]]\nkey = "default"',
         "the key 'default' is [character]'s"),
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
