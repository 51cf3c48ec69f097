"""docs/architecture.md is the tree: its rooms hold exactly the modules it lists, and
every import between rooms is one it allows."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DAEMON = REPO / "daemon"
DOC = (REPO / "docs" / "architecture.md").read_text()
_IMPORT = re.compile(r"^\s*(?:from|import) editjournal\.daemon\.(\w+)", re.M)


def documented_rooms() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(\w+)/` \|[^|]*\| (.*) \|$", DOC, re.M)
    return {room: set(re.findall(r"`(\w+)`", modules)) for room, modules in rows}


def allowed_imports() -> dict[str, set[str]]:
    lines = re.findall(r"^- `(\w+)/` imports (.*)$", DOC, re.M)
    return {room: set(re.findall(r"`(\w+)/`", rest)) for room, rest in lines}


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
    for path in DAEMON.glob("*/*.py"):
        room = path.parent.name
        for imported in set(_IMPORT.findall(path.read_text())) - {room}:
            assert imported in allowed[room], f"{path.relative_to(REPO)} imports {imported}/"
