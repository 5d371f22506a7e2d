"""
The user documentation (README.md, docs/, the harness's and research's READMEs) stays true to
the repository: the package trees of docs/package_tree.md and harness/README.md and the scripts'
list in research/results/README.md name exactly the packages' modules and folders and the
scripts, every relative link leads to a file, and no internal issue number is left for a reader
to decode.
"""

import re

import pytest

from tests import PROJECT_ROOT

DOCUMENTS = [
    PROJECT_ROOT / "README.md",
    PROJECT_ROOT / "harness/README.md",
    PROJECT_ROOT / "research/README.md",
    PROJECT_ROOT / "research/results/README.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
]
# The trees cover both packages and the Python scripts; __init__.py files are not listed.
TREE_ROOTS = ("tft_allennlp", "harness/tft_experiments", "scripts", "research/scripts")


def tree_block():
    """The package trees of docs/package_tree.md and harness/README.md, then the scripts' list."""
    blocks = []
    for page, heading in (
        ("docs/package_tree.md", "Package tree"),
        ("harness/README.md", "Package tree"),
        ("research/results/README.md", "Scripts"),
    ):
        text = (PROJECT_ROOT / page).read_text()
        match = re.search(rf"## {heading}\n.*?```\n(.*?)```", text, re.DOTALL)
        assert match, f"{page}: no code block under '## {heading}'"
        blocks.append(match.group(1))
    return "".join(blocks)


def tree_paths(block):
    """The paths the tree names, from its indentation (two spaces a level)."""
    paths, parents = [], []
    for number, line in enumerate(block.splitlines(), start=1):
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"tree line {number}: odd indentation"
        name = line.split()[0]
        parents = parents[: indent // 2]
        assert len(parents) == indent // 2, f"tree line {number}: indented under nothing"
        path = "/".join(parents + [name.rstrip("/")])
        paths.append(path + ("/" if name.endswith("/") else ""))
        if name.endswith("/"):
            parents.append(name.rstrip("/"))
    return paths


def repository_paths():
    """The package's folders and modules, and the Python scripts, as the tree should name them."""
    found = []
    for root in TREE_ROOTS:
        found.append(f"{root}/")
        for path in (PROJECT_ROOT / root).rglob("*"):
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if "__pycache__" in relative or path.name == "__init__.py":
                continue
            if path.is_dir():
                found.append(relative + "/")
            elif path.suffix == ".py":
                found.append(relative)
    return found


def test_the_package_tree_lists_every_module_and_folder_and_nothing_else():
    listed = tree_paths(tree_block())
    assert len(listed) == len(set(listed)), "a path is listed twice"
    expected = set(repository_paths())
    assert sorted(expected - set(listed)) == [], "missing from docs/development.md's tree"
    assert sorted(set(listed) - expected) == [], "listed in docs/development.md but not there"


def test_the_tree_reader_sees_nesting_and_misses():
    block = "a/  x\n  b.py  y\n  c/  z\n    d.py\n  e.py\n"
    assert tree_paths(block) == ["a/", "a/b.py", "a/c/", "a/c/d.py", "a/e.py"]
    with pytest.raises(AssertionError, match="indented under nothing"):
        tree_paths("a.py\n    b.py\n")


LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file(document):
    for target, _ in LINK.findall(document.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        assert (document.parent / target).exists(), f"{document.name}: broken link {target}"


@pytest.mark.parametrize(
    "document",
    DOCUMENTS + sorted((PROJECT_ROOT / "research/results").glob("*/README.md")),
    ids=lambda path: path.relative_to(PROJECT_ROOT).as_posix(),
)
def test_no_internal_issue_numbers(document):
    found = re.findall(r"\bissues? #?\d+", document.read_text(), re.IGNORECASE)
    assert found == [], f"{document.name}: {found}"


def test_the_documents_are_short_and_the_readme_a_front_page():
    assert len((PROJECT_ROOT / "README.md").read_text().splitlines()) <= 170
    for document in DOCUMENTS:
        assert len(document.read_text().splitlines()) <= 200, document.name
