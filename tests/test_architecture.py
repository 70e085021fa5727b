"""Dependencies point inward: api → services → memory / reflection / notify → db."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

import pytest

import credence

ROOT = Path(credence.__file__).parent
# Inner layers rank lower; a module may import its own layer or lower ones, never higher.
RANKS = {
    "credence.api": 3,
    "credence.services": 2,
    "credence.components": 2,
    "credence.memory": 1,
    "credence.reflection": 1,
    "credence.notify": 1,
    "credence.integrations": 1,
    "credence.db": 0,
}
ENTRY_POINTS = ("credence.api", "credence.app", "credence.cli")
MAY_IMPORT_ENTRY_POINTS = ("credence.app", "credence.cli")
# Plain shared modules every layer uses; they import no layer above db themselves.
KERNEL = (
    "credence.access",
    "credence.clock",
    "credence.embed",
    "credence.errors",
    "credence.files",
    "credence.ids",
    "credence.logs",
    "credence.models",
    "credence.observe",
    "credence.ratelimit",
    "credence.settings",
    "credence.tasks",
    "credence.tls",
)
# Controllers reach the store only through the domain. Idempotent replay sits at the API edge,
# on db/idempotency.py (issue 25 §2): the decision controllers name it, and nothing else does.
API_MAY_IMPORT_DB = {"credence.api.beliefs", "credence.api.decisions"}


class Import(NamedTuple):
    """One import statement's target, where it is and whether it only serves type checking."""

    module: str
    line: int
    target: str
    type_only: bool

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    """The dotted name of a source file under the credence package."""
    parts = ("credence", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        module = ".".join([*base, node.module] if node.module else base)
    else:
        module = node.module or ""
    if module != "credence":
        return [module]  # `from x.y import f` depends on x.y
    # `from credence import models` names a submodule; `from credence import __version__` not.
    return [
        f"credence.{alias.name}"
        if (ROOT / f"{alias.name}.py").is_file() or (ROOT / alias.name).is_dir()
        else "credence"
        for alias in node.names
    ]


def imports_of(path: Path) -> list[Import]:
    """Every import in a file: module level, inside functions and under TYPE_CHECKING."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return imports_in(path.read_text(encoding="utf-8"), name, package, str(path))


def imports_in(
    source: str, name: str, package: str | None = None, filename: str = "<source>"
) -> list[Import]:
    """Every import in ``source``, the text of module ``name`` (in ``package``)."""
    package = package if package is not None else name.rsplit(".", 1)[0]
    found: list[Import] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, package):
                found.append(Import(name, node.lineno, target, type_only))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(ast.parse(source, filename), False)
    return found


EVERY_IMPORT = [found for path in sorted(ROOT.rglob("*.py")) for found in imports_of(path)]
ALL_IMPORTS = [
    i for i in EVERY_IMPORT if i.target == "credence" or i.target.startswith("credence.")
]


def area(dotted: str) -> str:
    """The top-level part of credence a module is in (``credence.memory``, ``credence.app``)."""
    return ".".join(dotted.split(".")[:2])


def _ids(imports: list[Import]) -> list[str]:
    return [f"{i.module}:{i.line}->{i.target}" for i in imports]


ENTRY_IMPORTS = [i for i in ALL_IMPORTS if area(i.target) in ENTRY_POINTS]
RANKED_IMPORTS = [i for i in ALL_IMPORTS if area(i.module) in RANKS and area(i.target) in RANKS]
DOMAIN = ("credence.memory", "credence.reflection", "credence.notify")
DOMAIN_IMPORTS = [i for i in ALL_IMPORTS if area(i.module) in DOMAIN and area(i.target) in DOMAIN]
LAYER_IMPORTS = [i for i in ALL_IMPORTS if area(i.module) in RANKS]
KERNEL_IMPORTS = [i for i in ALL_IMPORTS if area(i.module) in KERNEL]
# The web framework (and its HTTP errors) stays at the edge: api, the app, the CLI and the
# HTTP middleware of auth and ratelimit; services and the layers under them never see it.
WEB_IMPORTS = [
    i for i in EVERY_IMPORT if i.target.split(".")[0] == "litestar" and area(i.module) in RANKS
]


def test_the_walker_sees_every_kind_of_import() -> None:
    """Module-level, function-level and TYPE_CHECKING imports are all found, relative ones too."""
    by_module = {(i.module, i.target): i for i in ALL_IMPORTS}
    assert ("credence.app", "credence.api.security") in by_module  # module level
    assert ("credence.cli", "credence.app") in by_module  # inside a function
    assert by_module[("credence.reflection.jobs", "credence.db.engine")].type_only
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import credence.services\n"
    assert imports_in(typed, "credence.notify.example")[-1].type_only
    assert ("credence.openapi_doc", "credence.models") in by_module  # from credence import x
    assert ("credence.api.mcp", "credence") in by_module  # from credence import __version__
    assert len(RANKED_IMPORTS) > 50 and len(ENTRY_IMPORTS) > 10


@pytest.mark.parametrize("found", ENTRY_IMPORTS, ids=_ids(ENTRY_IMPORTS))
def test_nothing_imports_api_app_or_cli(found: Import) -> None:
    """Only the app and the CLI compose the entry points; api modules may import each other."""
    importer, imported = area(found.module), area(found.target)
    allowed = importer in MAY_IMPORT_ENTRY_POINTS or importer == imported == "credence.api"
    assert allowed, f"{found}: only app and cli may import {imported}"


@pytest.mark.parametrize("found", RANKED_IMPORTS, ids=_ids(RANKED_IMPORTS))
def test_dependencies_point_inward(found: Import) -> None:
    """api → services → memory / reflection / notify → db, never the other way."""
    importer, imported = area(found.module), area(found.target)
    assert RANKS[imported] <= RANKS[importer], f"{found}: {importer} is inside {imported}"


@pytest.mark.parametrize("found", DOMAIN_IMPORTS, ids=_ids(DOMAIN_IMPORTS))
def test_only_reflection_crosses_into_another_domain_package(found: Import) -> None:
    """Reflection builds on memory; memory knows neither reflection nor notify, nor notify them."""
    importer, imported = area(found.module), area(found.target)
    allowed = importer == imported or (importer, imported) == (
        "credence.reflection",
        "credence.memory",
    )
    assert allowed, f"{found}: {importer} may not import {imported}"


# memory/'s sub-domains in order: each imports only those before it (DESIGN §1).
MEMORY_ORDER = ("ingest", "semantics", "lifecycle", "read")


def memory_part(dotted: str) -> str | None:
    """The memory sub-package a module is in (``semantics`` of credence.memory.semantics.gate)."""
    parts = dotted.split(".")
    return parts[2] if parts[:2] == ["credence", "memory"] and len(parts) > 3 else None


MEMORY_IMPORTS = [
    i for i in ALL_IMPORTS if memory_part(i.module) and memory_part(i.target) and not i.type_only
]


def test_memory_is_only_sub_packages() -> None:
    """Every memory module sits in one of the four sub-domains; none is left at the top."""
    top = sorted(path.name for path in (ROOT / "memory").glob("*.py"))
    assert top == ["__init__.py"]
    parts = sorted(p.name for p in (ROOT / "memory").iterdir() if (p / "__init__.py").is_file())
    assert parts == sorted(MEMORY_ORDER)
    assert len(MEMORY_IMPORTS) > 20


@pytest.mark.parametrize("found", MEMORY_IMPORTS, ids=_ids(MEMORY_IMPORTS))
def test_memory_sub_packages_import_only_earlier_ones(found: Import) -> None:
    """ingest → semantics → lifecycle → read: the read path builds on the rest, never back."""
    importer, imported = memory_part(found.module), memory_part(found.target)
    assert importer is not None and imported is not None
    order = MEMORY_ORDER.index
    assert order(imported) <= order(importer), f"{found}: {importer} may not import {imported}"


@pytest.mark.parametrize("found", LAYER_IMPORTS, ids=_ids(LAYER_IMPORTS))
def test_layers_import_only_layers_and_shared_modules(found: Import) -> None:
    """A layer never reaches for a composition module (openapi_doc, serving, mcp_bridge...)."""
    imported = area(found.target)
    assert imported in RANKS or imported in KERNEL or imported in ("credence", *ENTRY_POINTS), (
        f"{found}: a layer imports the composition module {imported}"
    )


@pytest.mark.parametrize("found", KERNEL_IMPORTS, ids=_ids(KERNEL_IMPORTS))
def test_shared_modules_import_no_layer_above_db(found: Import) -> None:
    """Settings, models, clock and friends sit under every layer, so they import none of them."""
    imported = area(found.target)
    assert imported in KERNEL or imported in ("credence", "credence.db"), (
        f"{found}: a shared module imports {imported}"
    )


@pytest.mark.parametrize("found", WEB_IMPORTS, ids=_ids(WEB_IMPORTS))
def test_only_the_edge_knows_the_web_framework(found: Import) -> None:
    """Domain code raises domain errors; the app's exception handlers give them HTTP statuses."""
    importer = area(found.module)
    assert importer == "credence.api", f"{found}: {importer} imports the web framework"


def one_way_breach(found: Import) -> str | None:
    """Why an import breaks a one-way rule of issue 25 §6, or None when it keeps them."""
    importer, imported = area(found.module), area(found.target)
    if importer in DOMAIN and imported == "credence.services":
        return f"{found}: domain code takes what it uses, not the Services container"
    if (
        importer == "credence.api"
        and imported == "credence.db"
        and found.module not in API_MAY_IMPORT_DB
    ):
        return f"{found}: a controller reaches the store only through the domain"
    return None


@pytest.mark.parametrize("package", [*DOMAIN, "credence.api"])
def test_dependencies_point_one_way(package: str) -> None:
    """memory/, notify/ and reflection/ never import the Services container (type-only imports
    included: a component takes what it uses); api/ never imports the store."""
    breaches = [
        why for i in ALL_IMPORTS if area(i.module) == package and (why := one_way_breach(i))
    ]
    assert breaches == []


def test_the_one_way_check_sees_a_breach() -> None:
    """The check above can fail: eager, lazy and type-only imports of the container or the
    store are all caught, and the allowed paths are not."""
    typed = "import typing\nif typing.TYPE_CHECKING:\n    from credence.services import Services\n"
    lazy = "def f():\n    from credence.db import push as push_db\n"
    breaches = {
        "from credence.services import Services\n": "credence.memory.read.context",
        typed: "credence.notify.component",
        "import credence.services\n": "credence.reflection.jobs",
        "from credence.db.health import check_writable\n": "credence.api.health",
        lazy: "credence.api.push",
        "from credence import db\n": "credence.api.push",
    }
    for source, module in breaches.items():
        assert [one_way_breach(i) for i in imports_in(source, module)] != [None], source
    allowed = {
        "from credence.notify import manage\n": "credence.api.push",
        "from credence.db import channels\n": "credence.notify.manage",
        "from credence.services import Services\n": "credence.api.search",
        "from credence.db.idempotency import Remembered\n": "credence.api.decisions",
    }
    for source, module in allowed.items():
        assert [one_way_breach(i) for i in imports_in(source, module)] == [None], source


def test_the_one_way_allowance_is_still_needed() -> None:
    """The controllers allowed to name the store still do, so the allowance never outlives its
    reason."""
    db = {i.module for i in ALL_IMPORTS if area(i.target) == "credence.db"}
    assert {m for m in db if area(m) == "credence.api"} == API_MAY_IMPORT_DB


MAX_MODULE_LINES = 600
# Modules another change is splitting this round; each entry goes once its module is small.
MODULE_LINES = {
    path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
    for path in sorted(ROOT.rglob("*.py"))
}


@pytest.mark.parametrize("module", sorted(MODULE_LINES))
def test_no_module_exceeds_the_line_limit(module: str) -> None:
    """A module over 600 lines holds more than one idea: split it along its sections."""
    lines = MODULE_LINES[module]
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines (limit {MAX_MODULE_LINES})"


REPOSITORY = Path(__file__).resolve().parent.parent
# Tests and benchmarks share only the harness package, which imports neither of them.
FORBIDDEN_TOP_LEVEL = {
    "tests": {"benchmarks"},
    "benchmarks": {"tests"},
    "harness": {"tests", "benchmarks"},
}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN_TOP_LEVEL))
def test_tests_and_benchmarks_share_only_the_harness(package: str) -> None:
    """Benchmarks never import tests, nor tests benchmarks: what both need lives in harness/."""
    offenders = [
        f"{path.relative_to(REPOSITORY)} imports {sorted(wrong)}"
        for path in sorted((REPOSITORY / package).rglob("*.py"))
        if "node_modules" not in path.parts
        and (wrong := _top_level_imports(path) & FORBIDDEN_TOP_LEVEL[package])
    ]
    assert not offenders, offenders


# A string that opens with a statement keyword is SQL; only the store layer may hold it.
SQL_START = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|PRAGMA|BEGIN|COMMIT|ROLLBACK|WITH)\s",
)


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value.strip().splitlines()[0][:60])
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and SQL_START.match(node.value)
    ]


def test_no_sql_outside_the_store_layer() -> None:
    """Every SQL statement lives under credence/db/ (issue 14 §1)."""
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sorted(ROOT.rglob("*.py"))
        if path.relative_to(ROOT).parts[0] != "db"
        for line, text in _sql_strings(path)
    ]
    assert outside == []


def test_the_sql_detector_sees_a_statement() -> None:
    """The check above can fail: it finds SQL in a string constant."""
    assert SQL_START.match("SELECT id FROM agents WHERE id = ?")
    assert SQL_START.match("  INSERT INTO beliefs(id) VALUES (?)")
    assert not SQL_START.match("Select the beliefs to keep")
