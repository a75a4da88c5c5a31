"""The front ends reach the memory through memory.manage* (and the engine), never through its
store or its write path; and SQL lives in memory/store/ alone. Tests, so that `make test` names
the module that breaks a rule."""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("memory.store", "memory.write")


def imported(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """Each import statement of an AST, wherever it sits (TYPE_CHECKING blocks and functions
    too), with its line and the modules it may load: `import a.b` a.b; `from a import b` a and
    a.b (b may be a module)."""
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, [alias.name]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found.append((node.lineno, [node.module, *names]))
    return found


def violations(root: Path) -> list[str]:
    """'<file>:<line> imports <module>' for each import under `root` that loads a forbidden
    module (the first one it names)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, names in sorted(imported(tree)):
            bad = [n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)]
            if bad:
                out.append(f"{path.relative_to(root.parent)}:{line} imports {bad[0]}")
    return out


def test_bot_imports_neither_the_store_nor_the_write_path() -> None:
    broken = violations(ROOT / "bot")
    assert not broken, "bot/ must go through memory.manage*:\n" + "\n".join(broken)


@pytest.mark.parametrize(
    ("source", "line", "named"),
    [
        ("from memory.store import history", 1, "memory.store"),
        ("from memory.store.db import Store", 1, "memory.store.db"),
        ("import memory.write.summary", 1, "memory.write.summary"),
        ("from memory import manage, store", 1, "memory.store"),
        ("from memory import write as w", 1, "memory.write"),
        ("if TYPE_CHECKING:\n    from memory.store.history import X", 2, "memory.store.history"),
        ("def f():\n    from memory.write.worker import Worker", 2, "memory.write.worker"),
    ],
)
def test_each_way_of_importing_the_store_is_caught(
    tmp_path: Path, source: str, line: int, named: str
) -> None:
    package = tmp_path / "bot"
    (package / "cogs").mkdir(parents=True)
    (package / "cogs" / "sneaky.py").write_text(source + "\n", encoding="utf-8")
    # What the front ends may import: the manage modules, the engine, the read path's types.
    (package / "fine.py").write_text(
        "from memory import manage_story\nfrom memory.engine import Engine\n"
        "from memory.context.budget import ContextPlan\nimport memory.storage_notes\n",
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
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        a = function.args
        found += [(function.lineno, p.arg) for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.append((node.lineno, node.id))
    return sorted({(line, name) for line, name in found if name in modules})


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
