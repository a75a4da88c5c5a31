"""The docs stay true to the code: the configuration page names every setting and no other,
with its default; every link, path, module and `make` target they cite exists; the plugin
example works as written."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import SecretStr

from bot.config import Settings
from memory.context.prompt import BlockKind, block
from memory.context.strategies import ENTRY_POINT_GROUP, ContextRequest, load_registry
from memory.context.tokens import Estimator

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
EXAMPLE = ROOT / "config.example.toml"
# Unset in a table of the configuration page: the key has no default value.
UNSET = "unset"


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def _example_keys() -> set[tuple[str, str]]:
    """Every (section, key) config.example.toml states, set or commented out."""
    keys, section = set(), None
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        if heading := re.fullmatch(r"(?:# )?\[\[(\w+)\]\]|\[(\w+)\]", line.strip()):
            section = heading.group(1) or heading.group(2)
        elif section and (key := re.match(r"(?:# )?(\w+) = ", line)):
            keys.add((section, key.group(1)))
    return keys


def _model(section: str) -> Any:
    """The model of a section (of each table of a list of tables: [[characters]])."""
    annotation = Settings.model_fields[section].annotation
    return get_args(annotation)[0] if get_args(annotation) else annotation


def _model_keys() -> set[tuple[str, str]]:
    return {
        (section, key) for section in Settings.model_fields for key in _model(section).model_fields
    }


def _documented() -> dict[tuple[str, str], str]:
    """(section, key) → the default column, from the tables under each `## [section]`."""
    found, section = {}, None
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        if heading := re.fullmatch(r"## \[\[(\w+)\]\]|## \[(\w+)\]", line):
            section = heading.group(1) or heading.group(2)
        elif line.startswith("## "):
            section = None
        elif section and (row := re.match(r"\| `(\w+)` \| ([^|]+) \|", line)):
            assert (section, row.group(1)) not in found, f"[{section}] {row.group(1)} twice"
            found[(section, row.group(1))] = row.group(2).strip()
    return found


def test_the_configuration_page_names_every_setting_and_no_other() -> None:
    example, model, documented = _example_keys(), _model_keys(), set(_documented())
    assert example == model, ("example only", example - model, "model only", model - example)
    missing = sorted(f"[{s}] {k}" for s, k in model - documented)
    unknown = sorted(f"[{s}] {k}" for s, k in documented - model)
    assert not missing, f"docs/configuration.md does not document {missing}"
    assert not unknown, f"docs/configuration.md documents keys that do not exist: {unknown}"


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    return value


def test_the_configuration_page_gives_each_setting_its_default() -> None:
    defaults = Settings()
    for (section, key), written in _documented().items():
        values = getattr(defaults, section)
        values = _model(section)() if isinstance(values, tuple) else values
        actual = _plain(getattr(values, key))
        if written == UNSET:
            assert actual is None, f"[{section}] {key} defaults to {actual!r}, not unset"
            continue
        literal = re.fullmatch(r"`(.+)`", written)
        assert literal, f"[{section}] {key}: write the default as `a TOML value` or {UNSET}"
        said = tomllib.loads(f"v = {literal.group(1)}")["v"]
        assert said == actual, f"[{section}] {key}: the page says {said!r}, the code {actual!r}"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


def _links(page: Path) -> Iterator[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    yield from re.findall(r"\]\(([^)\s]+)\)", text)


def test_every_relative_link_points_to_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in _pages():
        for link in _links(page):
            if re.match(r"[a-z]+:", link):
                broken.append(f"{page.name}: {link} leaves the repository")
                continue
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
            if not path.exists() or not path.is_relative_to(ROOT):
                broken.append(f"{page.name}: {link}")
            elif anchor and anchor not in _anchors(path):
                broken.append(f"{page.name}: {link} (no such heading)")
    assert not broken, broken


_PATH = re.compile(r"(?<![\w./-])(?:memory|bot|tests|bench)/[\w./-]*[\w/]")
_MODULE = re.compile(r"(?<![\w./-])(?:memory|bot)(?:\.[a-z_]\w*)+")


def _resolves(dotted: str) -> bool:
    """Whether `memory.x.y` is a module, or a name defined in one."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            found: Any = importlib.import_module(".".join(parts[:i]))
            for name in parts[i:]:
                if not hasattr(found, name):
                    return False
                found = getattr(found, name)
            return True
    return False


def test_every_path_and_module_the_docs_cite_exists() -> None:
    missing = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        missing += [f"{page.name}: {p}" for p in _PATH.findall(text) if not (ROOT / p).exists()]
        missing += [f"{page.name}: {m}" for m in _MODULE.findall(text) if not _resolves(m)]
    assert not missing, missing


def _make_targets() -> set[str]:
    """The first word after `make` in code spans and shell blocks (bench-* is a family)."""
    found = set()
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        spans = re.findall(r"`make ([^`\s]+)", text)
        shell = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S))
        lines = re.findall(r"^make ([^\s#]+)", shell, re.M)
        found |= {t for t in (*spans, *lines) if "*" not in t and "=" not in t}
    return found


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_every_make_target_the_docs_cite_is_in_the_makefile() -> None:
    targets = _make_targets()
    assert {"test", "test-pg", "test-web", "test-real", "run", "chat"} <= targets
    missing = [
        t
        for t in sorted(targets)
        if subprocess.run(
            ["make", "-n", "-C", str(ROOT), t], capture_output=True, check=False
        ).returncode
        != 0
    ]
    assert not missing, f"no such make target: {missing}"


def _block(page: Path, language: str) -> str:
    found = re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert len(found) == 1, f"{page.name}: one ```{language} block expected"
    return str(found[0])


def test_the_plugin_example_loads_through_the_entry_point_group_and_drops_lore_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = DOCS / "plugins.md"
    project = tomllib.loads(_block(page, "toml"))["project"]
    points = project["entry-points"][ENTRY_POINT_GROUP]
    assert len(points) == 1
    ((name, target),) = points.items()
    module = target.partition(":")[0]
    (tmp_path / f"{module}.py").write_text(_block(page, "python"), encoding="utf-8")
    info = tmp_path / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    registry = load_registry()
    assert not registry.errors
    assert name in registry.names()
    # As /strategy and [context] strategy would name it.
    assert f"`{name}`" in page.read_text(encoding="utf-8")

    blocks = (
        block(BlockKind.PERSONA, "persona", "You are Nyx."),
        *(
            block(BlockKind.LORE, f"lore-{i}", f"The lighthouse of Ys, part {i}.", order=-i)
            for i in range(3)
        ),
        *(
            block(BlockKind.HISTORY, f"history-{i}", textwrap.fill(f"Message {i}. " * 8), order=i)
            for i in range(6)
        ),
        block(BlockKind.INPUT, "input", "And the lighthouse?"),
    )
    everything = ContextRequest(blocks, budget=10**6, user_name="Marie", estimator=Estimator("m"))
    without_lore = [b for b in blocks if b.kind is not BlockKind.LORE]
    request = ContextRequest(
        blocks, budget=everything.tokens(without_lore), user_name="Marie", estimator=Estimator("m")
    )
    assert not request.fits(blocks)
    result = registry.get(name).apply(request)
    assert {b.key for b in result.keep} == {b.key for b in without_lore}
    assert set(result.removed) == {"lore-0", "lore-1", "lore-2"}
    # The built-in default order differs: truncate gives up history first.
    truncated = registry.get("truncate").apply(request)
    assert any(key.startswith("history-") for key in truncated.removed)


# The tree at the top of docs/architecture.md: an entry is a path at its indentation (two
# spaces a level) followed by what it holds; the lines below it, indented further, continue it.
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Folders whose every module the tree need not name: the tests mirror memory/ and bot/, and
# bench/ is a runner per file.
_LISTED_ONLY = {"tests", "bench"}


def _tree() -> list[tuple[Path, str]]:
    """(path, the text of its entry and of the entries below it) for each entry of the tree."""
    lines = ARCHITECTURE.read_text(encoding="utf-8").split("```", 2)[1].splitlines()[1:]
    entries: list[tuple[Path, list[str]]] = []  # each entry's path and its own lines
    stack: list[Path] = []  # the entry at each level above the line read
    for line in lines:
        match = re.match(r"( *)(\S+)", line)
        if match is None:
            continue
        depth, name = len(match.group(1)), match.group(2)
        if (
            depth % 2
            or (depth // 2 > len(stack))
            or name.startswith(("(", "`"))
            or (not name.endswith(("/", ".py")) and depth >= 2 * len(stack))
        ):
            entries[-1][1].append(line)  # a continuation of the entry above
            continue
        del stack[depth // 2 :]
        stack.append((stack[-1] if stack else ROOT) / name.rstrip("/"))
        entries.append((stack[-1], [line]))
    return [
        (
            path,
            "\n".join(line for p, own in entries if p == path or path in p.parents for line in own),
        )
        for path, _ in entries
    ]


def _modules(folder: Path, named_below: set[Path]) -> list[Path]:
    """The modules and packages of `folder`, and of its packages the tree gives no entry."""
    out = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(("_", ".")) or child in named_below:
            continue
        if re.match(r"v\d\d_", child.name):  # a migration: the folder's entry says what they are
            continue
        if child.suffix == ".py":
            out.append(child)
        elif (child / "__init__.py").exists():
            out.append(child)
            out += _modules(child, named_below)
    return out


def test_the_architecture_tree_names_exactly_the_modules_that_exist() -> None:
    tree = _tree()
    assert {p.relative_to(ROOT).parts[0] for p, _ in tree} >= {"memory", "bot", "tests", "bench"}
    missing = [str(p.relative_to(ROOT)) for p, _ in tree if not p.exists()]
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"
    entries = {p for p, _ in tree}
    unnamed = []
    for path, text in tree:
        if not path.is_dir() or path.relative_to(ROOT).parts[0] in _LISTED_ONLY:
            continue
        for module in _modules(path, entries):
            if not re.search(rf"(?<![\w.]){re.escape(module.stem)}(?![\w])", text):
                unnamed.append(str(module.relative_to(ROOT)))
        cited = re.findall(r"(?<![\w/])(\w+)\.py\b", text)
        absent = [c for c in cited if not list(path.rglob(f"{c}.py"))]
        assert not absent, f"docs/architecture.md's {path.name}/ names no such file: {absent}"
    assert not unnamed, "docs/architecture.md's tree does not name: " + ", ".join(unnamed)
