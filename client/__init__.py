"""The editjournal client: one method per tool, over ZeroMQ, to the workspace's daemon.

`Client(workspace=..., agent=...)` (blocking) or `AsyncClient` (asyncio) finds the
daemon through
`.editjournal/daemon.json`, starts one when none serves (unless
`autostart=False`; `started_daemon` then holds the endpoint of the daemon it
started, so a CLI can say so), and raises `RequestError` for error replies. A
workspace that does not exist raises `WorkspaceNotFound`; nothing is created. It depends
only on pyzmq, msgspec and `schemas` — never on the daemon package. A Client
is not thread-safe: use one per thread or process.

The names live in the library room, `library/`; the package's other rooms are the
command line (`cli/`), the MCP server (`mcp/`), the harness integrations
(`harness/`), and what those share (`tools/`, `views/`): docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from editjournal.client.library.asyncclient import AsyncClient
    from editjournal.client.library.blocking import Client
    from editjournal.client.library.errors import (
        AnchorProblem,
        ApplyRejected,
        BadRequest,
        ChangeRefused,
        CheckpointProblem,
        DaemonProblem,
        DaemonStopping,
        DaemonUnavailable,
        FileRefused,
        HunkProblem,
        JournalProblem,
        NoMatch,
        RequestError,
        RequestTimeout,
        StaleAnchor,
        StaleWrite,
        StateMismatch,
        UndoConflict,
        WorkspaceNotFound,
        WorkspaceTooBroad,
    )
    from editjournal.client.library.subscription import Subscription

__all__ = [
    "AnchorProblem",
    "ApplyRejected",
    "AsyncClient",
    "BadRequest",
    "ChangeRefused",
    "CheckpointProblem",
    "Client",
    "DaemonProblem",
    "DaemonStopping",
    "DaemonUnavailable",
    "FileRefused",
    "HunkProblem",
    "JournalProblem",
    "NoMatch",
    "RequestError",
    "RequestTimeout",
    "StaleAnchor",
    "StaleWrite",
    "StateMismatch",
    "Subscription",
    "UndoConflict",
    "WorkspaceNotFound",
    "WorkspaceTooBroad",
]
# where each name lives (in the library room, `library/`): imported on first use (PEP 562),
# so `import editjournal.client.ROOM.X` costs only X's own imports (the harness hook
# must start in milliseconds)
_HOMES = {
    "AnchorProblem": "library.errors",
    "ApplyRejected": "library.errors",
    "AsyncClient": "library.asyncclient",
    "BadRequest": "library.errors",
    "ChangeRefused": "library.errors",
    "CheckpointProblem": "library.errors",
    "Client": "library.blocking",
    "DaemonProblem": "library.errors",
    "DaemonStopping": "library.errors",
    "DaemonUnavailable": "library.errors",
    "FileRefused": "library.errors",
    "HunkProblem": "library.errors",
    "JournalProblem": "library.errors",
    "NoMatch": "library.errors",
    "RequestError": "library.errors",
    "RequestTimeout": "library.errors",
    "StaleAnchor": "library.errors",
    "StaleWrite": "library.errors",
    "StateMismatch": "library.errors",
    "Subscription": "library.subscription",
    "UndoConflict": "library.errors",
    "WorkspaceNotFound": "library.errors",
    "WorkspaceTooBroad": "library.errors",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'editjournal.client' has no attribute {name!r}")
    return getattr(importlib.import_module(f"editjournal.client.{home}"), name)
