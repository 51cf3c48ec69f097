"""editjournal: hash-anchored, journaled file editing for coding agents.

The one import name the distribution owns. Its three parts live in the
repository's top-level `daemon/`, `client/` and `schemas/` directories and are
installed as `editjournal.daemon`, `editjournal.client` and
`editjournal.schemas`, so installing editjournal never claims a generic
top-level name such as `daemon` (python-daemon's) or `client`.

`from editjournal import Client` is the public door. The client is imported
lazily: the daemon imports `editjournal.daemon...` and must not load the
client on the way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from editjournal.client import (
        Client,
        DaemonUnavailable,
        RequestError,
        RequestTimeout,
        WorkspaceNotFound,
    )

__all__ = [
    "Client",
    "DaemonUnavailable",
    "RequestError",
    "RequestTimeout",
    "WorkspaceNotFound",
    "__version__",
]
_CLIENT_NAMES = frozenset(__all__) - {"__version__"}

# The one place the version is written: pyproject.toml reads it from here
# (`[tool.setuptools.dynamic]`), and the daemon reports it without asking
# importlib.metadata, whose import alone cost ~47 ms of every daemon's start.
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from editjournal import client

        return getattr(client, name)
    raise AttributeError(f"module 'editjournal' has no attribute {name!r}")
