"""Each word list of a language module is defined once: a second definition of a name silently
replaced the first (a date list named like the filters' DETERMINERS took « l » out of them, and
the filter stopped seeing « L'ambiance est tendue » as about the setting)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

LEXICON = Path(__file__).resolve().parents[3] / "memory" / "lexicon"


@pytest.mark.parametrize("module", sorted(p.name for p in LEXICON.glob("*.py")))
def test_every_name_is_defined_once(module: str) -> None:
    tree = ast.parse((LEXICON / module).read_text())
    names = Counter(
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    )
    assert [name for name, n in names.items() if n > 1] == []
