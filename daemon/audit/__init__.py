"""The audit toolkit: the journal read back for people.

Everything here only reads: events through `Journal.records(...)`, contents
through `Journal.blob(sha)` (so how blobs are stored is not its business), and
never changes the journal, the state or the workspace (`replay` writes only
into the directory it is given). It runs inside the daemon (`show`,
`history`, `blame`, `stats`, `read_file(at_version)`) and without one, on a
journal opened read-only (`open_readonly`): `replay`, `verify`, `export`,
`report`, so a journal copied off another machine can be audited.
"""

from __future__ import annotations

from pathlib import Path

from editjournal.daemon.store.journal import Journal


def open_readonly(path: Path) -> Journal:
    """The journal at `path`, read-only (`mode=ro`): never created, migrated or written."""
    return Journal(path, readonly=True)
