"""
The package's layers: a module imports only modules of its own layer or of lower ones, and no two
modules import each other, directly or around a circle. Read from the source with `ast`, so that
function-level imports (the way a circle usually hides) count as much as module-level ones.

Run as a script it prints the report for any checkout: `python tests/import_layers_test.py
[PACKAGE_DIR]` (default: this checkout's `tft_allennlp/`).
"""

import ast
import pathlib
import sys
from typing import Dict, List, NamedTuple, Optional, Set

PACKAGE = "tft_allennlp"
PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / PACKAGE

# Lowest first. A subpackage not listed here is an error of the test, not a free pass; the
# package's own `__init__` sits on top, beside the commands.
LAYERS = [
    ["common"],
    ["nn"],
    ["metrics"],
    ["modules"],
    ["tokenizers"],
    ["token_indexers"],
    ["alignment"],
    ["dataset_readers"],
    ["data_loaders"],
    ["models"],
    ["training"],
    ["predictors"],
    ["archives"],
    ["viewer"],
    ["commands", ""],
]


class Import(NamedTuple):
    source: str  # dotted module name
    target: str  # the package module it loads (a submodule when the name is one)
    line: int
    function_level: bool


def module_names(package_dir: pathlib.Path) -> Dict[str, pathlib.Path]:
    """Dotted name -> file of every module of the package (packages by their `__init__`)."""
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports(package_dir: pathlib.Path) -> List[Import]:
    """Every import of a package module by a package module."""
    modules = module_names(package_dir)
    found = []
    for source, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, function_level in _import_nodes(tree):
            for target in _targets(node, source, is_package, modules):
                edge = Import(source, target, node.lineno, function_level)
                if target != source and edge not in found:
                    found.append(edge)
    return found


def _import_nodes(tree: ast.AST, function_level: bool = False):
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, function_level
        inner = function_level or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
        yield from _import_nodes(child, inner)


def _targets(node: ast.AST, source: str, is_package: bool, modules: Dict[str, pathlib.Path]):
    if isinstance(node, ast.Import):
        for alias in node.names:
            module = _known(alias.name, modules)
            if module:
                yield module
        return
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        anchor = source.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
        base = ".".join(anchor + ([base] if base else []))
    for alias in node.names:
        # `from package import submodule` loads the submodule; `from module import name`, the
        # module.
        module = _known(f"{base}.{alias.name}", modules) or _known(base, modules)
        if module:
            yield module


def _known(name: str, modules: Dict[str, pathlib.Path]) -> Optional[str]:
    return name if name in modules else None


def layer(module: str) -> int:
    """The rank of `module`'s layer in `LAYERS`: its subpackage's, or the top for the package's
    own modules."""
    parts = module.split(".")
    sub = parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in _SUBPACKAGES) else ""
    for rank, names in enumerate(LAYERS):
        if sub in names:
            return rank
    raise AssertionError(f"{module}: its subpackage {sub!r} is in no layer of LAYERS")


_SUBPACKAGES = {name for names in LAYERS for name in names if name}


def upward(found: List[Import]) -> List[Import]:
    """The imports of a module from a higher layer."""
    return [edge for edge in found if layer(edge.target) > layer(edge.source)]


def circles(found: List[Import]) -> List[List[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each sorted."""
    graph: Dict[str, Set[str]] = {}
    for edge in found:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def report(package_dir: pathlib.Path) -> str:
    found = imports(package_dir)
    up, groups = upward(found), circles(found)
    lines = [
        f"{package_dir}: {len(found)} imports between package modules "
        f"({sum(edge.function_level for edge in found)} inside functions)",
        f"upward imports: {len(up)} ({sum(edge.function_level for edge in up)} inside functions)",
    ]
    for edge in up:
        where = "function" if edge.function_level else "module"
        lines.append(f"  {edge.source}:{edge.line} -> {edge.target} ({where} level)")
    lines.append(f"circles: {len(groups)}")
    lines.extend(f"  {' <-> '.join(group)}" for group in groups)
    return "\n".join(lines)


def test_no_module_imports_from_a_higher_layer():
    found = upward(imports(PACKAGE_DIR))
    assert [f"{e.source}:{e.line} -> {e.target}" for e in found] == []


def test_no_modules_import_each_other():
    assert circles(imports(PACKAGE_DIR)) == []


def test_the_checker_sees_function_level_imports_and_circles(tmp_path):
    package = tmp_path / PACKAGE
    (package / "common").mkdir(parents=True)
    (package / "commands").mkdir()
    (package / "__init__.py").write_text("")
    (package / "common" / "__init__.py").write_text("")
    (package / "commands" / "__init__.py").write_text("")
    (package / "common" / "low.py").write_text(
        "def f():\n    from tft_allennlp.commands.high import g\n"
    )
    (package / "commands" / "high.py").write_text("from ..common import low\n")
    found = imports(package)
    assert upward(found) == [
        Import("tft_allennlp.common.low", "tft_allennlp.commands.high", 2, True)
    ]
    assert circles(found) == [["tft_allennlp.commands.high", "tft_allennlp.common.low"]]


if __name__ == "__main__":
    print(report(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DIR))
