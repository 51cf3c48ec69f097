"""docs/architecture.md is the tree: its rooms (the daemon's, then the client's) hold
exactly the modules it lists, and every import between rooms is one it allows.

Imports are read from the source with `ast` (module-level ones and the lazy ones inside
functions alike, for a lazy import is an arrow too), and the arrows are checked for
cycles by computing them, both the ones the doc allows and the ones the code has."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DAEMON = REPO / "daemon"
DOC = (REPO / "docs" / "architecture.md").read_text()
# the journal's offline readers: run by the CLI over a journal file, never loaded by the
# daemon's process (docs/architecture.md, "Offline readers")
OFFLINE = {"fleet"} | {
    f"audit.{m}" for m in ("replay", "verify", "export", "report", "authorship", "authorlog")
}


def daemon_section(title: str) -> str:
    """The text under the daemon's `## title` heading, up to the next heading."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^#)", DOC + "\n#", re.M | re.S)
    assert found, f"docs/architecture.md has no section {title!r}"
    return found.group(1)


def documented_rooms() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(\w+)/` \|[^|]*\| (.*) \|$", daemon_section("The rooms"), re.M)
    return {room: set(re.findall(r"`(\w+)`", modules)) for room, modules in rows}


def allowed_imports() -> dict[str, set[str]]:
    section = daemon_section("Which way imports run")
    lines = re.findall(r"^- `(\w+)/` imports (.*)$", section, re.M)
    return {room: set(re.findall(r"`(\w+)/`", rest)) for room, rest in lines}


def drawn_layers() -> list[list[str]]:
    """The drawing of the rooms, top row first (the fenced block of the imports section)."""
    block = re.search(r"^```\n(.*?)^```", daemon_section("Which way imports run"), re.M | re.S)
    assert block, "the imports section draws the rooms in a fenced block"
    return [re.findall(r"(\w+)/", row) for row in block.group(1).splitlines() if row.strip()]


def module_name(path: Path) -> str:
    """`daemon/audit/blame.py` -> `editjournal.daemon.audit.blame` (packages without `__init__`)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(("editjournal", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def imported_names(path: Path) -> set[str]:
    """Every `editjournal...` name `path` imports, at module level or inside a function;
    `from pkg import name` yields `pkg` and `pkg.name` (which may be a module)."""
    return {name for name in all_imported(path) if name.split(".")[0] == "editjournal"}


def import_statements(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Each import in `path`, at module level or inside a function, as (module, names):
    `import a.b` is ("a.b", []), `from .c import d` is ("<package>.c", ["d"])."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield module, [alias.name for alias in node.names]


def all_imported(path: Path) -> set[str]:
    """Every name `path` imports, ours and others' (see `imported_names`)."""
    found: set[str] = set()
    for module, names in import_statements(path):
        found |= {module} | {f"{module}.{name}" for name in names}
    return found


def daemon_modules() -> dict[str, Path]:
    return {module_name(p): p for p in DAEMON.rglob("*.py") if "__pycache__" not in p.parts}


def room_of(name: str) -> str | None:
    """The daemon room a module name lies in (None: not in a room)."""
    parts = name.split(".")
    if parts[:2] != ["editjournal", "daemon"] or len(parts) < 3:
        return None
    return parts[2] if (DAEMON / parts[2] / "__init__.py").exists() else None


def room_imports() -> dict[str, set[str]]:
    """Each room's arrows as the code has them."""
    arrows: dict[str, set[str]] = {}
    for name, path in daemon_modules().items():
        room = room_of(name)
        if room is not None:
            found = {room_of(imported) for imported in imported_names(path)}
            arrows.setdefault(room, set()).update(found - {None, room})  # type: ignore[arg-type]
    return arrows


def a_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One cycle of `graph` as the path that closes it, or None (depth first, colours)."""
    colour: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        colour[node] = "grey"
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == "grey":
                return [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
            if nxt not in colour and (found := visit(nxt, [*path, nxt])):
                return found
        colour[node] = "black"
        return None

    for start in sorted(graph):
        if start not in colour and (found := visit(start, [start])):
            return found
    return None


def test_a_cycle_is_found_when_there_is_one():
    """The cycle check itself can fail: a loop of three, and a room importing itself."""
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": {"b"}}) == ["b", "b"]
    assert a_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_every_room_holds_exactly_the_modules_the_doc_lists():
    rooms = {p.name for p in DAEMON.iterdir() if (p / "__init__.py").exists()}
    documented = documented_rooms()
    assert set(documented) == rooms
    for room, modules in documented.items():
        found = {p.stem for p in (DAEMON / room).glob("*.py") if p.stem != "__init__"}
        assert found == modules, room


def test_imports_between_rooms_run_only_the_documented_ways():
    allowed = allowed_imports()
    assert set(allowed) == set(documented_rooms())
    for name, path in daemon_modules().items():
        room = room_of(name)
        for imported in imported_names(path):
            assert not imported.startswith("editjournal.client"), f"{name} imports the client"
            target = room_of(imported)
            if room is not None and target not in (None, room):
                assert target in allowed[room], f"{path.relative_to(REPO)} imports {target}/"


def test_no_cycle_between_rooms_neither_allowed_nor_found():
    assert a_cycle(allowed_imports()) is None
    assert a_cycle(room_imports()) is None


def test_the_drawing_holds_every_room_once_and_every_arrow_points_down():
    layers = drawn_layers()
    level = {room: depth for depth, row in enumerate(layers) for room in row}
    assert sorted(level) == sorted(room for row in layers for room in row), "a room drawn twice"
    assert set(level) == set(documented_rooms())
    for room, targets in allowed_imports().items():
        for target in targets:
            assert level[target] > level[room], f"{room}/ -> {target}/ does not point down"


def test_the_daemon_process_never_loads_the_offline_readers():
    """Everything `python -m editjournal.daemon` can import (lazy imports included),
    followed through the daemon's modules, holds none of the offline readers."""
    modules = daemon_modules()
    loaded, todo, others = set(), ["editjournal.daemon.__main__", "editjournal.daemon"], set()
    while todo:
        name = todo.pop()
        if name in loaded or name not in modules:
            continue
        loaded.add(name)
        todo.extend(imported_names(modules[name]))
        others |= {other.split(".")[0] for other in all_imported(modules[name])}
        todo.extend(".".join(name.split(".")[:n]) for n in range(3, name.count(".") + 1))
    assert "editjournal.daemon.handlers.read" in loaded  # the walk reaches the handlers
    offline = {name for name in loaded if name.removeprefix("editjournal.daemon.") in OFFLINE}
    offline |= {n for n in loaded if n.startswith("editjournal.daemon.fleet")}
    assert not offline
    assert "psycopg" not in others and "zmq" in others  # the fleet extra's driver; the loop's


# --- the client's rooms ---------------------------------------------------------------------

CLIENT = REPO / "client"
# what the library room, the one a harness imports, must never load (STYLE.md principle 1)
NOT_IN_THE_LIBRARY = ("click", "mcp", "editjournal.daemon")


def client_section(title: str) -> str:
    """The text under the client's `### title` heading, up to the next heading."""
    found = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#)", DOC + "\n#", re.M | re.S)
    assert found, f"docs/architecture.md has no section {title!r}"
    return found.group(1)


def client_documented_rooms() -> dict[str, set[str]]:
    """Each client room (`library`, ..., and `` for `client/` itself) and its modules."""
    row = r"^\| `client/(?:(\w+)/)?` \|[^|]*\|[^|]*\| (.*) \|$"
    rows = re.findall(row, client_section("The client's rooms"), re.M)
    return {room: set(re.findall(r"`(\w+)`", modules)) for room, modules in rows}


def client_allowed_imports() -> dict[str, set[str]]:
    line = r"^- `client/(?:(\w+)/)?` imports (.*)$"
    lines = re.findall(line, client_section("Which way the client's imports run"), re.M)
    return {room: set(re.findall(r"`client/(?:(\w+)/)?`", rest)) for room, rest in lines}


def client_modules() -> dict[str, Path]:
    return {module_name(p): p for p in CLIENT.rglob("*.py") if "__pycache__" not in p.parts}


def client_room_of(name: str) -> str | None:
    """The client room of a module name: `library`, ..., `` for `client/`'s own modules;
    None for a name outside the client."""
    parts = name.split(".")
    if parts[:2] != ["editjournal", "client"]:
        return None
    if len(parts) > 2 and (CLIENT / parts[2] / "__init__.py").exists():
        return parts[2]
    return ""


def client_module_imports(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """The import graph between the client's modules, module-level and lazy imports
    alike: `from pkg import name` is an arrow to the module `pkg.name` where there is
    one, else to `pkg`."""
    return {name: arrows_of(path, modules) for name, path in modules.items()}


def arrows_of(path: Path, modules: Mapping[str, Path]) -> set[str]:
    found: set[str] = set()
    for module, names in import_statements(path):
        found |= {f"{module}.{n}" if f"{module}.{n}" in modules else module for n in names}
        found |= set() if names else {module}
    return found & set(modules)


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components of `graph` (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while not component or node not in component:
                component.add(stack.pop())
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def circles(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The import circles: components of more than one module, or one importing itself."""
    found = strongly_connected(graph)
    return [c for c in found if len(c) > 1 or any(n in graph.get(n, ()) for n in c)]


def test_circles_are_found_when_there_are_some():
    """The circle check itself can fail: the old hints <-> command modules circle."""
    old = {"cli": {"hints", "tools"}, "tools": {"common"}, "common": {"hints"}, "hints": {"tools"}}
    assert circles(old) == [{"tools", "common", "hints"}]
    assert circles({"a": {"a"}, "b": set()}) == [{"a"}]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_every_client_room_holds_exactly_the_modules_the_doc_lists():
    rooms = {p.name for p in CLIENT.iterdir() if (p / "__init__.py").exists()}
    documented = client_documented_rooms()
    assert set(documented) == rooms | {""}
    for room, modules in documented.items():
        found = {p.stem for p in (CLIENT / room).glob("*.py")} - {"__init__"}
        assert found == modules - {"__init__"}, f"client/{room}"


def test_client_imports_run_only_the_documented_ways():
    allowed = client_allowed_imports()
    assert set(allowed) == set(client_documented_rooms())
    assert a_cycle(allowed) is None
    for name, path in client_modules().items():
        room = client_room_of(name)
        assert room is not None
        for imported in imported_names(path):
            target = client_room_of(imported)
            if target is not None and target != room:
                assert target in allowed[room], f"{path.relative_to(REPO)} imports client/{target}"


def test_no_import_circle_among_the_clients_modules():
    graph = client_module_imports(client_modules())
    assert "editjournal.client.cli.hints" in graph  # the graph holds the modules it checks
    assert "editjournal.client.cli.common" in graph["editjournal.client.cli.tools"]
    assert circles(graph) == []


def test_the_library_imports_neither_click_nor_the_mcp_sdk_nor_the_daemon():
    for name, path in client_modules().items():
        if client_room_of(name) != "library":
            continue
        for imported in all_imported(path):
            for banned in NOT_IN_THE_LIBRARY:
                assert not (imported == banned or imported.startswith(f"{banned}.")), name


def test_only_the_cli_imports_the_daemon_and_only_inside_a_command():
    """The offline commands open a journal file with the daemon's read-only code, lazily
    (STYLE.md principle 1); nothing else of the client imports the daemon at all."""
    for name, path in client_modules().items():
        at_top = top_level_imports(ast.parse(path.read_text()))
        assert not any(n.startswith("editjournal.daemon") for n in at_top), name
        if client_room_of(name) != "cli":
            assert not any(n.startswith("editjournal.daemon") for n in imported_names(path)), name


def top_level_imports(tree: ast.AST) -> set[str]:
    """The modules a module imports as it loads: every import but those inside a function
    or for the type checker only (`if TYPE_CHECKING:`)."""
    if isinstance(tree, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return set()
    if isinstance(tree, ast.If) and ast.unparse(tree.test) == "TYPE_CHECKING":
        return {name for child in tree.orelse for name in top_level_imports(child)}
    if isinstance(tree, ast.Import):
        return {alias.name for alias in tree.names}
    if isinstance(tree, ast.ImportFrom):
        return {tree.module or ""}
    return {name for child in ast.iter_child_nodes(tree) for name in top_level_imports(child)}


def test_importing_the_library_loads_no_cli_no_mcp_sdk_no_daemon():
    """What a harness pays, measured in a fresh interpreter: every library module and
    every name `editjournal.client` exports, and the lean hook path (`entry` -> `hook`),
    without click, the MCP SDK, the daemon, or (for the hook) the typed client."""
    library = sorted(n for n in client_modules() if client_room_of(n) == "library")
    script = f"""
import importlib, sys
import editjournal.client.entry, editjournal.client.harness.hook
assert "click" not in sys.modules and "editjournal.client.library.blocking" not in sys.modules
import editjournal.client as door
for name in door.__all__:
    getattr(door, name)
for name in {library!r}:
    importlib.import_module(name)
banned = {NOT_IN_THE_LIBRARY!r}
print(sorted(m for m in sys.modules if m in banned or m.startswith(tuple(b + "." for b in banned))))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_client_drawing_holds_every_room_once_and_every_arrow_points_down():
    section = client_section("Which way the client's imports run")
    block = re.search(r"^```\n(.*?)^```", section, re.M | re.S)
    assert block, "the client's imports section draws the rooms in a fenced block"
    rows = [re.findall(r"client/(?:(\w+)/)?", row) for row in block.group(1).splitlines()]
    level = {room: depth for depth, row in enumerate(r for r in rows if r) for room in row}
    assert sorted(level) == sorted(room for row in rows for room in row), "a room drawn twice"
    assert set(level) == set(client_documented_rooms())
    for room, targets in client_allowed_imports().items():
        for target in targets:
            assert level[target] > level[room], f"client/{room} -> client/{target} points up"
