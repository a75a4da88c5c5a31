"""The front ends reach the memory through its face only: `memory` (memory/__init__.py and its
__all__) and `memory.manage` with its modules, never its insides (the engine's modules, the
store, the write path...); SQL lives in memory/store/ alone; the store imports nothing above it;
and no import circle joins modules of memory/, of bot/ or of bench/. Tests, so that `make test`
names the module that breaks a rule."""

from __future__ import annotations

import ast
import functools
import importlib.util
import itertools
import re
import subprocess
import sys
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

import memory

ROOT = Path(__file__).resolve().parent.parent
MANAGE = "memory.manage"


def imported(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """Each absolute import statement of an AST, wherever it sits (TYPE_CHECKING blocks and
    functions too), with its line, its module and the names taken from it: `import a.b` is
    (a.b, []), `from a import b, c` is (a, [b, c])."""
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return found


def behind_the_door(module: str, names: list[str], face: Collection[str]) -> str | None:
    """The inside module of `memory` an import reaches, or None when it takes only the face:
    `memory` itself and the names of its __all__ (`face`), `memory.manage` and its modules."""
    if module == MANAGE or module.startswith(MANAGE + "."):
        return None
    if module == "memory":
        return next((f"memory.{n}" for n in names if n not in face and n != "*"), None)
    return module if module.startswith("memory.") else None


def violations(root: Path, face: Collection[str] = frozenset(memory.__all__)) -> list[str]:
    """'<file>:<line> imports <module>' for each import under `root` that reaches past the
    face of `memory` (the first module it names)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module, names in sorted(imported(tree)):
            inside = behind_the_door(module, names, face)
            if inside is not None:
                out.append(f"{path.relative_to(root.parent)}:{line} imports {inside}")
    return out


def test_bot_imports_memory_through_its_face_only() -> None:
    broken = violations(ROOT / "bot")
    assert not broken, "bot/ imports only memory and memory.manage*:\n" + "\n".join(broken)


def test_the_face_holds_every_name_it_lists() -> None:
    assert [n for n in memory.__all__ if not hasattr(memory, n)] == []
    assert "manage" in memory.__all__ and "Engine" in memory.__all__


# The face's size: 92 names when the front ends wired the backends themselves; memory.open
# builds them now; 87 with the language dates are written in and the date lists show. Raise it
# only for a name a front end needs. 89: Picture and Intake, the pictures people post. 90:
# Rewrite, when an erasure rewrites an SQLite file ([privacy] rewrite_mb, rewrite_hours).
FACE_SIZE = 90


def test_the_face_lists_only_what_a_front_end_uses_or_the_python_page_shows() -> None:
    bot = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "bot").rglob("*.py"))
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    unused = [
        n for n in memory.__all__ if not any(re.search(rf"\b{n}\b", text) for text in (bot, page))
    ]
    assert unused == [], "names of memory.__all__ neither bot/ nor docs/python-api.md uses"
    assert len(memory.__all__) <= FACE_SIZE


@pytest.mark.parametrize(
    ("source", "line", "named"),
    [
        ("from memory.store import history", 1, "memory.store"),
        ("from memory.store.db import Store", 1, "memory.store.db"),
        ("import memory.write.summary", 1, "memory.write.summary"),
        ("from memory import manage, store", 1, "memory.store"),
        ("from memory import write as w", 1, "memory.write"),
        ("from memory import turn", 1, "memory.turn"),
        ("from memory.turn.engine import Engine", 1, "memory.turn.engine"),
        ("import memory.turn.values as values", 1, "memory.turn.values"),
        ("from memory.context.budget import ContextPlan", 1, "memory.context.budget"),
        ("import memory, memory.recall", 1, "memory.recall"),
        (
            "if TYPE_CHECKING:\n    from memory.store.tables.history import X",
            2,
            "memory.store.tables.history",
        ),
        ("def f():\n    from memory.write.worker import Worker", 2, "memory.write.worker"),
    ],
)
def test_each_way_of_importing_past_the_face_is_caught(
    tmp_path: Path, source: str, line: int, named: str
) -> None:
    package = tmp_path / "bot"
    (package / "cogs").mkdir(parents=True)
    (package / "cogs" / "sneaky.py").write_text(source + "\n", encoding="utf-8")
    # What the front ends may import: the face's names, memory.manage and its modules.
    (package / "fine.py").write_text(
        "import memory\nfrom memory import Engine, Incoming, Store, manage\nfrom memory import *\n"
        "from memory.manage import story\nfrom memory.manage.story import Summary\n"
        "import memory.manage.dashboard\nfrom bot.render import count\n",
        encoding="utf-8",
    )
    assert violations(package) == [f"bot/cogs/sneaky.py:{line} imports {named}"]


def shadowed(tree: ast.Module, is_module: Callable[[str], bool]) -> list[tuple[int, str]]:
    """Names a function binds (parameters, assignments, loop targets) that hide a module the
    file imports at its top: `lexical = await self.lexical()` under `from memory.recall import
    lexical` makes the module unreachable below that line."""
    modules = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules |= {
                a.asname or a.name for a in node.names if is_module(f"{node.module}.{a.name}")
            }
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        # One walk: a name bound anywhere inside a function (nested ones too) counts once.
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            found.extend((node.lineno, p.arg) for p in [*a.posonlyargs, *a.args, *a.kwonlyargs])
            in_function = True
        elif in_function and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.id))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(tree, False)
    return sorted({(line, name) for line, name in found if name in modules})


@functools.cache
def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_no_function_hides_a_module_it_imports() -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} binds {name}, an imported module"
        for folder in ("memory", "bot")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, name in shadowed(ast.parse(path.read_text(encoding="utf-8")), _is_module)
    ]
    assert not broken, "\n".join(broken)


def test_a_local_that_hides_a_module_is_caught() -> None:
    source = (
        "from memory.recall import lexical\n"
        "from memory.model import Memory\n"
        "async def turn(self, Memory):\n"
        "    lexical = await self.lexical()\n"
        "    return lexical\n"
    )
    assert shadowed(ast.parse(source), _is_module) == [(4, "lexical")]


# A database call, or a statement written out: SQL belongs to memory/store/ alone, so that a
# second backend is a second store, not a search through the engine.
DATABASE_CALLS = frozenset({"execute", "executemany", "fetchall", "fetchone", "executescript"})
STATEMENT = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ", "WITH ")


def sql_outside_the_store(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each database call or SQL statement text in a module's AST."""
    found = []
    for node in ast.walk(tree):
        function = node.func if isinstance(node, ast.Call) else None
        if isinstance(function, ast.Attribute) and function.attr in DATABASE_CALLS:
            found.append((function.lineno, f"calls .{function.attr}()"))
        # Statements are written in capitals here: "Select the memories" is prose.
        if isinstance(node, ast.Constant) and str(node.value).lstrip().startswith(STATEMENT):
            found.append((node.lineno, "writes a statement"))
    return sorted(found)


def test_sql_lives_in_the_store_only() -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} {what}"
        for folder in ("memory", "bot")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if ROOT / "memory" / "store" not in path.parents
        for line, what in sql_outside_the_store(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not broken, "SQL outside memory/store/:\n" + "\n".join(broken)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("await store.fetchall('x')", [(1, "calls .fetchall()")]),
        ("await tx.execute(q, ())", [(1, "calls .execute()")]),
        ("q = 'SELECT id FROM memories'", [(1, "writes a statement")]),
        ("q = ' INSERT INTO t VALUES (1)'", [(1, "writes a statement")]),
        ("q = 'Select the memories'\nawait store.transact(run)", []),
    ],
)
def test_each_way_of_writing_sql_is_caught(source: str, found: list[tuple[int, str]]) -> None:
    assert sql_outside_the_store(ast.parse(source)) == found


# No import circle among the modules of memory/ and of bot/: each module's imports, wherever they
# sit (a TYPE_CHECKING block, a function), point down the layers, so a module can be read, tested
# and moved with what it imports and nothing that imports it.
PACKAGES = ("memory", "bot")


def module_names(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module under `root`'s `packages` by dotted name; a package by its __init__."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "node_modules" in parts:  # bench/tokenizers' npm packages: not Python modules
                continue
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, dict[str, int]]:
    """For each module under `root`, the modules of the same tree it imports and the line of
    the first such import. `from a import b` imports the module a.b when there is one, else a
    (a name its __init__ defines): an __init__ is an edge only to the modules that import from
    it, and only as far as it imports something itself. The packages a module sits in run before
    it but are not its imports: a package's face importing its submodules is no circle."""
    modules = module_names(root, packages)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parent, *([base] if base else [])])
                for alias in node.names:
                    targets.append(
                        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    )
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle of each strongly connected group of modules, the shortest through its first
    module by name, as a path that ends where it starts ([a, b, a])."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while not group or module not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    found = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        frontier = [start]
        while frontier and start not in [t for m in frontier for t in graph[m]]:
            reached = []
            for module in frontier:
                for target in sorted(graph[module]):
                    if target in group and target not in paths:
                        paths[target] = [*paths[module], target]
                        reached.append(target)
            frontier = reached
        last = min(m for m in frontier if start in graph[m])
        found.append([*paths[last], start])
    return sorted(found)


def named(graph: dict[str, dict[str, int]], circle: list[str], modules: dict[str, Path]) -> str:
    """A circle as a developer fixes it: each module, and the line where it imports the next."""
    hops = [f"{a} ({modules[a].as_posix()}:{graph[a][b]})" for a, b in itertools.pairwise(circle)]
    return " -> ".join([*hops, circle[-1]])


def test_no_import_circle_in_memory_or_bot() -> None:
    graph = import_graph(ROOT)
    modules = {name: path.relative_to(ROOT) for name, path in module_names(ROOT).items()}
    found = [named(graph, circle, modules) for circle in circles(graph)]
    assert not found, "import circles (TYPE_CHECKING and local imports count):\n" + "\n".join(found)


def test_no_import_circle_in_bench() -> None:
    # The benchmarks too: a runner imports its corpora and its report, never the other way.
    graph = import_graph(ROOT, ("bench",))
    modules = {n: p.relative_to(ROOT) for n, p in module_names(ROOT, ("bench",)).items()}
    found = [named(graph, circle, modules) for circle in circles(graph)]
    assert not found, "import circles in bench/:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"a.py": "from pkg import b\n", "b.py": "import pkg.a\n"},
            [["pkg.a", "pkg.b", "pkg.a"]],
            id="two modules",
        ),
        pytest.param(
            {
                "a.py": "from pkg.b import B\n",
                "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.c import C\n",
                "c.py": "def f():\n    from pkg import a\n",
            },
            [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]],
            id="three modules, one for type checking, one in a function",
        ),
        pytest.param(
            {
                "a.py": "from . import b\n",
                "b.py": "from .a import A\n",
                "c.py": "from pkg import a\n",
            },
            [["pkg.a", "pkg.b", "pkg.a"]],
            id="relative imports",
        ),
        pytest.param(
            {
                "sub/__init__.py": "from pkg.sub.x import X\nNAME = 1\n",
                "sub/x.py": "from pkg.sub import NAME\n",
            },
            [["pkg.sub", "pkg.sub.x", "pkg.sub"]],
            id="a name from an __init__ that imports",
        ),
        pytest.param(
            {
                "__init__.py": "from pkg.a import A\n",
                "a.py": "from pkg import b\n",
                "b.py": "import os\n",
            },
            [],
            id="a package face importing its modules",
        ),
        pytest.param(
            {"a.py": "from pkg import b\nfrom pkg.b import B\n", "b.py": "import pkg\n"},
            [],
            id="an empty __init__",
        ),
    ],
)
def test_each_import_circle_is_caught_and_named(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    for name, source in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(source, encoding="utf-8")
    assert circles(import_graph(tmp_path, ("pkg",))) == expected


def test_a_circle_is_named_with_the_lines_that_close_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("import os\n\nfrom pkg import b\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("import pkg.a\n", encoding="utf-8")
    graph = import_graph(tmp_path, ("pkg",))
    modules = {n: p.relative_to(tmp_path) for n, p in module_names(tmp_path, ("pkg",)).items()}
    assert [named(graph, c, modules) for c in circles(graph)] == [
        "pkg.a (pkg/a.py:3) -> pkg.b (pkg/b.py:1) -> pkg.a"
    ]


# The store is the bottom layer: its modules import one another and the few modules beside it that
# import nothing of memory themselves, never what sits above (the engine, recall, write, turn,
# context, manage, jobs, backends, or `memory`'s face), so it can be read and tested alone.
STORE = "memory.store"
BESIDE_THE_STORE = frozenset({"memory.errors", "memory.model", "memory.bulk", "memory.cache"})


def above_the_store(module: str, names: list[str]) -> str | None:
    """The module above the store an import reaches, or None: `from memory import errors` is
    memory.errors, `from memory import Engine` is memory itself."""
    if module == "memory":
        reached = [f"memory.{n}" for n in names]
        return next((m for m in reached if m not in BESIDE_THE_STORE), None)
    if module == STORE or module.startswith(STORE + ".") or module in BESIDE_THE_STORE:
        return None
    return module if module.startswith("memory.") else None


def store_climbs(root: Path) -> list[str]:
    """'<file>:<line> imports <module>' for each import under `root` that reaches above the
    store."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module, names in sorted(imported(tree)):
            above = above_the_store(module, names)
            if above is not None:
                out.append(f"{path.relative_to(root.parents[1]).as_posix()}:{line} imports {above}")
    return out


def test_the_store_imports_nothing_above_it() -> None:
    broken = store_climbs(ROOT / "memory" / "store")
    assert not broken, (
        f"memory/store/ imports only itself and {', '.join(sorted(BESIDE_THE_STORE))}:\n"
        + "\n".join(broken)
    )


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("from memory.recall.cache import CacheBudget", "memory.recall.cache"),
        ("import memory.engine", "memory.engine"),
        ("from memory import Engine", "memory.Engine"),
        ("from memory import errors, write", "memory.write"),
        ("if TYPE_CHECKING:\n    from memory.turn.values import Incoming", "memory.turn.values"),
        ("def f():\n    from memory.backends.chat import OllamaChat", "memory.backends.chat"),
    ],
)
def test_each_way_of_climbing_out_of_the_store_is_caught(
    tmp_path: Path, source: str, named: str
) -> None:
    store = tmp_path / "memory" / "store"
    (store / "tables").mkdir(parents=True)
    (store / "tables" / "climbs.py").write_text(source + "\n", encoding="utf-8")
    # What the store may import: itself, and the modules beside it.
    (store / "fine.py").write_text(
        "from memory.store.db import Store\nfrom memory.store import tables\n"
        "import memory.store.sqlite.store\nfrom memory import errors, model\n"
        "from memory.cache import CacheBudget\nfrom memory.bulk import paused\nimport sqlite3\n",
        encoding="utf-8",
    )
    line = source.count("\n") + 1
    assert store_climbs(store) == [f"memory/store/tables/climbs.py:{line} imports {named}"]


def test_opening_sqlite_loads_no_postgres_module() -> None:
    """PostgreSQL's module, and asyncpg, are imported only when a postgresql:// URL is opened."""
    script = (
        "import asyncio, sys, tempfile, pathlib\n"
        "import memory, memory.store\n"
        "from memory.store import open_store\n"
        "async def main():\n"
        "    with tempfile.TemporaryDirectory() as d:\n"
        "        async with await open_store(pathlib.Path(d) / 'echo.db'):\n"
        "            pass\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'asyncpg'\n"
        "             or m.startswith('memory.store.postgres.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
