"""`fleet log` shows a shell command's change with its command, as the local `log` does
(issue 37): the row is built from the shipped event by the same derivation
(`timeline.commands_of`), escaped and cut by the same `short_command`."""

from __future__ import annotations

from editjournal.client.cli.fleet import _log_rows
from editjournal.daemon.fleet.queries import FleetEvent, _fleet_event
from editjournal.schemas.events import EditApplied

SED = "sed -i 's/a/b/' app.py"


def _shell_edit(*commands: str) -> EditApplied:
    return EditApplied(
        path="app.py", writer="claude-code:Bash", before_sha256="a" * 64,
        after_sha256="b" * 64, size=1, lines_before=1, line_count=1,
        operations=[{"op": "Bash", "command": c, "window": "t1"} for c in commands],
    )  # fmt: skip


def test_a_shipped_shell_edit_carries_its_commands_and_its_row_ends_with_them() -> None:
    shell = _fleet_event("3f2c" * 8, "h", "/w", 7, 0, "claude-code:s1", "edit_applied",
                         "app.py", _shell_edit(SED, "make fmt\x1b[2J"))  # fmt: skip
    assert shell.commands == (SED, "make fmt\x1b[2J")
    plain = FleetEvent("3f2c" * 8, "h", "/w", 8, 0, "bob", "file_read", "app.py", "read app.py")
    rows = _log_rows([shell, plain])
    assert rows[0].endswith(f"  $ {SED} (+1)")
    assert "$" not in rows[1]
