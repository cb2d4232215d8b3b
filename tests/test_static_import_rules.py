"""The page script's layout rules of docs/architecture.md, held on its import graph.

Static: every ``.js`` under ``static/sightline/`` is read as text and every import in it counts:
``import ... from "x"``, ``export ... from "x"``, ``import "x"`` and ``import("x")`` with a literal
path. Nothing runs, so a rule broken on a path no browser test takes is still found.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "static" / "sightline"

# What each folder may import: pages on top, the game page's core, its lens and compare panels
# beside each other, and lib/ (shared helpers and the board) below them all.
FOLDERS = {
    "pages": {"game", "lens", "compare", "lib"},
    "game": {"game", "lens", "compare", "lib"},
    "lens": {"lens", "lib"},
    "compare": {"compare", "lib"},
    "lib": {"lib"},
}

_SPECIFIER = r"""["']([^"'\n]+)["']"""
_IMPORTS = [
    re.compile(rf"\b(?:import|export)\s+[^;\"'`]*?\bfrom\s*{_SPECIFIER}"),  # import/export ... from "x"
    re.compile(rf"(?<![.\w])import\s*{_SPECIFIER}"),  # import "x" (for its effects)
    re.compile(rf"(?<![.\w])import\s*\(\s*{_SPECIFIER}\s*\)"),  # import("x")
    re.compile(r"(?<![.\w])import\s*\(\s*`([^`$\n]+)`\s*\)"),  # import(`x`) without a ${...}
]
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.M)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Import:
    source: str  # importing module, relative to static/sightline ("game/game.js")
    specifier: str  # as written ("../lib/board.js")
    target: str | None  # the module it names, relative to static/sightline; None for a bare or absolute one
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.specifier}"


def specifiers(text: str) -> list[tuple[str, int]]:
    """(specifier, line) of every import in a module's text, comments left out."""
    text = _BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = _LINE_COMMENT.sub("", text)
    found = {m.start(1): (m.group(1), text.count("\n", 0, m.start()) + 1)
             for pattern in _IMPORTS for m in pattern.finditer(text)}
    return [found[at] for at in sorted(found)]


def resolve(source: str, specifier: str) -> str | None:
    if not specifier.startswith(("./", "../")):
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), specifier))


def import_graph(root: Path = SCRIPTS) -> dict[str, list[Import]]:
    graph = {}
    for path in sorted(root.rglob("*.js")):
        source = path.relative_to(root).as_posix()
        graph[source] = [Import(source, spec, resolve(source, spec), line)
                         for spec, line in specifiers(path.read_text(encoding="utf-8"))]
    return graph


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None: a depth-first search for an edge back to the path."""
    done, path, on_path = set(), [], set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in edges.get(node, []):
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt not in done and (found := visit(nxt)):
                return found
        on_path.discard(path.pop())
        done.add(node)
        return None

    for start in sorted(edges):
        if start not in done and (found := visit(start)):
            return found
    return None


def folder(module: str) -> str:
    return module.split("/")[0] if "/" in module else ""


def edges_of(graph: dict[str, list[Import]]) -> dict[str, list[str]]:
    return {source: [i.target for i in imports if i.target] for source, imports in graph.items()}


def unresolved(graph: dict[str, list[Import]], exists) -> list[str]:
    return [str(i) for imports in graph.values() for i in imports if i.target is None or not exists(i.target)]


def pages_importing_pages(edges: dict[str, list[str]]) -> list[str]:
    return [f"{s} imports {t}" for s, targets in edges.items() for t in targets
            if folder(s) == "pages" and folder(t) == "pages"]


def folder_breaches(edges: dict[str, list[str]]) -> list[str]:
    """Imports across folders that FOLDERS does not allow (lib/ importing outside lib/ among them)."""
    return [f"{s} imports {t}" for s, targets in edges.items() for t in targets
            if folder(t) not in FOLDERS.get(folder(s), set())]


# -- the rules, on the page's script ---------------------------------------------------------------
GRAPH = import_graph()
EDGES = edges_of(GRAPH)


def test_the_script_is_found_and_every_module_lives_in_a_feature_folder():
    assert "pages/game.js" in GRAPH and "lib/poll.js" in GRAPH
    assert [m for m in GRAPH if folder(m) not in FOLDERS] == []


def test_every_import_names_an_existing_module_by_a_relative_path():
    assert unresolved(GRAPH, lambda target: (SCRIPTS / target).is_file()) == []


def test_no_module_imports_itself_round_a_circle():
    assert find_cycle(EDGES) is None, " -> ".join(find_cycle(EDGES))


def test_no_page_module_imports_another():
    assert pages_importing_pages(EDGES) == []


def test_lib_imports_only_lib_and_the_features_depend_one_way():
    assert folder_breaches(EDGES) == []


def test_the_templates_load_page_modules_that_exist():
    """The pages' entry points: every script a template names by {% static %} is a file under pages/."""
    named = {m.group(1) for path in (ROOT / "templates").rglob("*.html")
             for m in re.finditer(r"""{%\s*static\s+['"]sightline/([^'"]+\.js)['"]\s*%}""", path.read_text(encoding="utf-8"))}
    assert named == {"pages/game.js", "pages/home.js", "pages/atlas.js", "pages/studies.js", "pages/study.js"}
    assert all((SCRIPTS / name).is_file() for name in named)


# -- the checks themselves, on small graphs: the old layout's circles fail them ---------------------
# The flat layout before issue 36: explorer.js <-> split.js, atlas.js and split.js borrowing colour
# from the explorer, status.js taking fmtDuration from home.js, disagreements.js escapeHtml from review.js.
OLD = {
    "explorer.js": ["board.js", "split.js"], "split.js": ["board.js", "explorer.js"], "atlas.js": ["explorer.js"],
    "status.js": ["format.js", "home.js"], "disagreements.js": ["format.js", "review.js"],
    "review.js": ["requests.js"], "home.js": [], "board.js": [], "format.js": [], "requests.js": [],
}


def test_the_cycle_finder_finds_the_old_explorer_split_circle():
    assert find_cycle(OLD) == ["explorer.js", "split.js", "explorer.js"]
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None  # a diamond is no circle
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


def test_the_folder_rules_catch_a_core_borrowing_from_a_page_and_lib_reaching_up():
    filed = {"pages/atlas.js": ["lens/explorer.js"], "game/status.js": ["pages/home.js"],
             "pages/home.js": ["pages/atlas.js"], "lib/format.js": ["game/results.js"], "lib/board.js": ["lib/format.js"]}
    assert pages_importing_pages(filed) == ["pages/home.js imports pages/atlas.js"]
    assert folder_breaches(filed) == ["game/status.js imports pages/home.js", "pages/home.js imports pages/atlas.js",
                                      "lib/format.js imports game/results.js"]


def test_every_kind_of_import_is_read_and_comments_are_not():
    text = """// import { a } from "./commented.js";
/* import "./blocked.js"; */
import { Board,
  squareName } from "../lib/board.js";
import "./effects.js";
export { colour } from './colour.js';
const later = () => import("./lazy.js");
const alsoLater = () => import(`./template.js`);
const svg = "http://www.w3.org/2000/svg"; document.importNode(x);
"""
    assert specifiers(text) == [("../lib/board.js", 3), ("./effects.js", 5), ("./colour.js", 6),
                                ("./lazy.js", 7), ("./template.js", 8)]
    assert resolve("game/game.js", "../lib/board.js") == "lib/board.js"
    assert resolve("game/game.js", "/static/x.js") is None
    missing = {"game/a.js": [Import("game/a.js", "./gone.js", "game/gone.js", 1)]}
    assert unresolved(missing, lambda target: False) == ["game/a.js:1 imports ./gone.js"]
