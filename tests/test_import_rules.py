"""The layering rules of docs/architecture.md, held on the import graph.

Static: every ``.py`` under ``analysis/``, ``workers/`` and ``webapp/`` is parsed with ``ast``, and every
import in it counts (module level, inside functions, under ``if TYPE_CHECKING``), relative imports
resolved against the importing module, plus ``importlib.import_module("literal")``. Nothing is
imported, so a rule broken only on a path the tests never run is still found.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("analysis", "workers", "webapp")

# R1: the library runs without the site: no Django, no Celery, no Channels (nor their own parts).
SITE_SIDE = ("webapp", "workers", "django", "celery", "kombu", "channels", "channels_redis", "rest_framework")
# R3: the site's whole view of the worker package.
WORKERS_PUBLIC_FACE = ("workers.celery_app", "workers.dispatch")
# ... and the worker's services, for the job code that runs inside a worker only (layout.md, R3 note).
WORKER_SERVICES = ("workers.batching", "workers.claims", "workers.shutdown")
JOB_CODE = ("webapp.jobs.run.runner", "webapp.networks.model_cache")


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (a name imported from a module counts as that module)
    where: str  # path:line

    def __str__(self) -> str:
        return f"{self.where}: {self.source} imports {self.target}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve_from(node: ast.ImportFrom, source: str, package: bool) -> str:
    """The absolute module named by ``from <node.module> import ...`` in module ``source``."""
    if not node.level:
        return node.module or ""
    base = source.split(".") if package else source.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _literal_import_module(node: ast.Call) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name != "import_module" or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_of(path: Path, root: Path, modules: set[str]) -> list[Import]:
    """Every import in one file; ``from X import Y`` is X.Y where X.Y is one of our modules, else X."""
    source = module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def add(target: str, line: int) -> None:
        edge = Import(source, target, f"{path.relative_to(root)}:{line}")
        if edge not in found:  # ``from m import a, b`` is one import of m
            found.append(edge)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(node, source, is_package(path))
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                add(sub if sub in modules else base, node.lineno)
        elif isinstance(node, ast.Call) and (literal := _literal_import_module(node)):
            add(literal, node.lineno)
    return found


def import_graph(root: Path = ROOT) -> list[Import]:
    files = [p for package in PACKAGES if (root / package).is_dir() for p in sorted((root / package).rglob("*.py"))]
    modules = {module_name(p, root) for p in files}
    return [edge for p in files for edge in imports_of(p, root, modules)]


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def r1_analysis_is_a_library(edges: list[Import]) -> list[Import]:
    return [e for e in edges if within(e.source, "analysis") and any(within(e.target, p) for p in SITE_SIDE)]


def r2_workers_never_import_the_site(edges: list[Import]) -> list[Import]:
    return [e for e in edges if within(e.source, "workers") and within(e.target, "webapp")]


def r3_the_site_sees_only_the_workers_public_face(edges: list[Import]) -> list[Import]:
    return [
        e for e in edges
        if within(e.source, "webapp") and within(e.target, "workers")
        and not any(within(e.target, face) for face in WORKERS_PUBLIC_FACE)
        and not (e.source in JOB_CODE and any(within(e.target, s) for s in WORKER_SERVICES))
    ]


def model_families(root: Path = ROOT) -> set[str]:
    models = root / "analysis" / "models"
    return {f"analysis.models.{d.name}" for d in models.iterdir() if (d / "__init__.py").is_file()}


def room(module: str) -> str:
    """The analysis subpackage (or top-level module) a module belongs to: ``analysis.X``."""
    return ".".join(module.split(".")[:2])


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected groups of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def circles(edges: list[Import]) -> list[list[str]]:
    """Strongly connected groups (more than one room) of the graph between analysis's rooms."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if within(e.source, "analysis") and within(e.target, "analysis") and room(e.source) != room(e.target):
            if room(e.source) != "analysis" and room(e.target) != "analysis":
                graph.setdefault(room(e.source), set()).add(room(e.target))
    return strongly_connected(graph)


def _circle_edges(edges: list[Import], group: list[str]) -> str:
    """One import for each pair of rooms inside a circle: where to cut it."""
    first: dict[tuple[str, str], Import] = {}
    for e in edges:
        pair = (room(e.source), room(e.target))
        if pair[0] != pair[1] and set(pair) <= set(group):
            first.setdefault(pair, e)
    return "; ".join(f"{a} -> {b} ({e.where})" for (a, b), e in sorted(first.items()))


def r5_analysis_flows_one_way(edges: list[Import], families: set[str]) -> list[str]:
    broken = [f"circle between {' <-> '.join(group)}: {_circle_edges(edges, group)}" for group in circles(edges)]
    forbidden = [
        ("analysis.encoding", "analysis.models"),
        ("analysis.models", "analysis.train"),
        ("analysis.models", "analysis.eval"),
        ("analysis.models", "analysis.cli"),
        ("analysis.data", "analysis.eval"),
    ]
    for e in edges:
        if any(within(e.source, src) and within(e.target, dst) for src, dst in forbidden):
            broken.append(str(e))
        mine = [f for f in families if within(e.source, f)]
        other = [f for f in families if within(e.target, f) and f not in mine]
        if mine and other:
            broken.append(f"{e} (another model family)")
    return broken


def r6_networks_never_import_jobs(edges: list[Import]) -> list[Import]:
    return [e for e in edges if within(e.source, "webapp.networks") and within(e.target, "webapp.jobs")]


# The site's apps that every feature may build on; every other app under webapp/ is a feature app
# (the lens, the lc0 comparison, and each one added later).
CORE_APPS = ("webapp.jobs", "webapp.networks", "webapp.api", "webapp.site")


def site_apps(root: Path = ROOT) -> set[str]:
    """Every Django app under webapp/ (a package with an ``apps.py``)."""
    return {f"webapp.{d.name}" for d in (root / "webapp").iterdir() if (d / "apps.py").is_file()}


def app_of(module: str, apps: set[str]) -> str | None:
    return next((app for app in apps if within(module, app)), None)


def r7_apps_keep_to_themselves(edges: list[Import], apps: set[str]) -> list[str]:
    """No app imports a feature app, nor another app's views; features build on the core apps only."""
    features = apps - set(CORE_APPS)
    broken = []
    for e in edges:
        mine, theirs = app_of(e.source, apps), app_of(e.target, apps)
        if mine is None or theirs is None or mine == theirs:
            continue
        if theirs in features:
            broken.append(f"{e} (the feature app {theirs})")
        elif e.target == f"{theirs}.views" or within(e.target, f"{theirs}.views"):
            broken.append(f"{e} (another app's views)")
    return broken


def r8_the_site_names_no_app(edges: list[Import], apps: set[str]) -> list[Import]:
    """``webapp/site`` (serve, the process and static-file plumbing) imports no other app."""
    return [e for e in edges if within(e.source, "webapp.site") and app_of(e.target, apps) not in (None, "webapp.site")]


def file_cycles(edges: list[Import]) -> list[list[str]]:
    """Strongly connected groups of our modules (files), every import counted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.source != e.target and any(within(e.target, p) for p in PACKAGES):
            graph.setdefault(e.source, set()).add(e.target)
    return strongly_connected(graph)


def r9_no_file_imports_itself_round_a_circle(edges: list[Import]) -> list[str]:
    return [" <-> ".join(group) for group in file_cycles(edges)]


@pytest.fixture(scope="module")
def edges() -> list[Import]:
    return import_graph()


def test_the_graph_holds_every_file_and_the_imports_we_know(edges):
    sources = {e.source for e in edges}
    assert {"analysis.cli", "workers.celery_app", "webapp.jobs.views"} <= sources
    assert any(within(e.source, "webapp") and within(e.target, "analysis") for e in edges)


def _none(broken: list) -> None:
    lines = [str(b) for b in broken]
    assert not lines, f"{len(lines)} imports break the rule:\n" + "\n".join(lines)


def test_r1_analysis_imports_nothing_of_the_site(edges):
    _none(r1_analysis_is_a_library(edges))


def test_r2_workers_import_nothing_from_webapp(edges):
    _none(r2_workers_never_import_the_site(edges))


def test_r3_webapp_imports_only_the_workers_public_face(edges):
    _none(r3_the_site_sees_only_the_workers_public_face(edges))


def test_r5_analysis_flows_one_way(edges):
    _none(r5_analysis_flows_one_way(edges, model_families()))


def test_r6_the_networks_app_does_not_import_the_jobs_app(edges):
    _none(r6_networks_never_import_jobs(edges))


def test_the_site_has_the_apps_we_know():
    assert {"webapp.jobs", "webapp.networks", "webapp.api", "webapp.site", "webapp.lens",
            "webapp.lc0compare"} <= site_apps()


def test_r7_no_app_imports_a_feature_app_or_another_apps_views(edges):
    _none(r7_apps_keep_to_themselves(edges, site_apps()))


def test_r8_the_site_app_imports_no_other_app(edges):
    _none(r8_the_site_names_no_app(edges, site_apps()))


def test_r9_no_import_circle_between_files(edges):
    _none(r9_no_file_imports_itself_round_a_circle(edges))


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_finds_each_kind_of_broken_import(tmp_path):
    """A tree that breaks every rule once, through each way of importing, is caught on every rule."""
    _write(tmp_path, {
        "analysis/__init__.py": "",
        "analysis/eval/__init__.py": "from ..models import thing\n",
        "analysis/encoding/__init__.py": "def f():\n    from analysis.models.a import net\n",
        "analysis/models/__init__.py": "",
        "analysis/models/thing.py": "import importlib\nimportlib.import_module('analysis.eval')\n",
        "analysis/models/a/__init__.py": "from ..b import layers\n",
        "analysis/models/a/net.py": "",
        "analysis/models/b/__init__.py": "",
        "analysis/models/b/layers.py": "",
        "analysis/data/plan.py": "from . import x\nfrom ..eval import checks\n",
        "analysis/heads.py": "def g():\n    import django.db\n",
        "workers/__init__.py": "",
        "workers/tasks.py": "from webapp.jobs.run import runner\n",
        "workers/dispatch.py": "",
        "webapp/__init__.py": "",
        "webapp/jobs/__init__.py": "",
        "webapp/jobs/apps.py": "",
        "webapp/jobs/views.py": "from workers.dispatch import send_task\nfrom workers import tasks, claims\n",
        "webapp/jobs/page.py": "from webapp.lens import panel\n",
        "webapp/jobs/run/runner.py": "from workers import claims\n",
        "workers/claims.py": "",
        "webapp/networks/__init__.py": "",
        "webapp/networks/apps.py": "",
        "webapp/networks/models.py": "def h():\n    from ..jobs import views\n",
        "webapp/lens/apps.py": "",
        "webapp/lens/panel.py": "from webapp.lc0compare.views import compare\n",
        "webapp/lens/neurons.py": "def move():\n    from webapp.lens.lens import _move\n",
        "webapp/lens/lens.py": "from webapp.lens import neurons\n",
        "webapp/lc0compare/apps.py": "",
        "webapp/lc0compare/views.py": "",
        "webapp/site/apps.py": "",
        "webapp/site/serve.py": "from webapp.networks.models import Network\n",
    })
    edges = import_graph(tmp_path)
    apps = site_apps(tmp_path)
    assert [e.where for e in r1_analysis_is_a_library(edges)] == ["analysis/heads.py:2"]
    assert [e.target for e in r2_workers_never_import_the_site(edges)] == ["webapp.jobs.run.runner"]
    # the worker's services are for the job code only: views may not use them, the runner may
    assert [e.target for e in r3_the_site_sees_only_the_workers_public_face(edges)] == ["workers.tasks", "workers.claims"]
    assert [e.target for e in r6_networks_never_import_jobs(edges)] == ["webapp.jobs.views"]
    assert sorted(r7_apps_keep_to_themselves(edges, apps)) == [
        "webapp/jobs/page.py:1: webapp.jobs.page imports webapp.lens.panel (the feature app webapp.lens)",
        "webapp/lens/panel.py:1: webapp.lens.panel imports webapp.lc0compare.views (the feature app webapp.lc0compare)",
        "webapp/networks/models.py:2: webapp.networks.models imports webapp.jobs.views (another app's views)"]
    assert [e.target for e in r8_the_site_names_no_app(edges, apps)] == ["webapp.networks.models"]
    assert r9_no_file_imports_itself_round_a_circle(edges) == [
        "analysis.eval <-> analysis.models.thing", "webapp.lens.lens <-> webapp.lens.neurons"]
    broken = r5_analysis_flows_one_way(edges, model_families(tmp_path))
    assert any(b.startswith("circle between analysis.eval <-> analysis.models: ") for b in broken)
    assert any("analysis.encoding imports analysis.models.a.net" in b for b in broken)
    assert any("analysis.models.thing imports analysis.eval" in b for b in broken)
    assert any("analysis.data.plan imports analysis.eval" in b for b in broken)
    assert any("analysis.models.a imports analysis.models.b.layers (another model family)" in b for b in broken)
