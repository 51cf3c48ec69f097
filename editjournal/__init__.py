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


def _version() -> str:
    """The installed distribution's version (read on first use: importlib.metadata
    costs ~20 ms, which every `editjournal` process would pay, the hook's too)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("editjournal")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        found = _version()
        globals()["__version__"] = found
        return found
    if name in _CLIENT_NAMES:
        from editjournal import client

        return getattr(client, name)
    raise AttributeError(f"module 'editjournal' has no attribute {name!r}")
