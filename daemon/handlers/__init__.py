"""Handlers: one function per method, `(Context, Params) -> Outcome`.

A handler never mutates state and never writes the journal. It reads what it
needs (state, workspace files, journal history) and returns an `Outcome`: the
events that describe what happened, the blobs they refer to, the file writes
to perform and the result. The server commits the events, applies them to
state, performs the writes and replies — in that order. Adding a tool means
adding its Params/Result to `schemas.tools`, a function here decorated with
`@handles(name)`, and its tests.

The contract itself (`Context`, `Outcome`, `Write`, `Job`) is the room below,
`daemon.contract`: the writing path and the runtime use it too, and neither
imports this room's tools. This package keeps only the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Handler, Outcome
from editjournal.schemas.tools import TOOL_PARAMS, Params

P = TypeVar("P", bound=Params)
TypedHandler = Callable[[Context, P], Outcome]
HANDLERS: dict[str, Handler] = {}


def handles(method: str) -> Callable[[TypedHandler[P]], TypedHandler[P]]:
    """Register a handler for a method that `schemas.tools.TOOL_PARAMS` declares."""
    if method not in TOOL_PARAMS:
        raise KeyError(f"{method} has no params schema in schemas.tools.TOOL_PARAMS")

    def register(fn: TypedHandler[P]) -> TypedHandler[P]:
        HANDLERS[method] = fn
        return fn

    return register


def registry() -> dict[str, Handler]:
    """Every handler, importing the modules that register them."""
    from editjournal.daemon.handlers import (  # noqa: F401 - imported for their registration
        agents,
        apply,
        apply_patch,
        atomic,
        audit,
        checkpoints,
        edit,
        harness,
        hunk_tools,
        meta,
        patch,
        prepare,
        read,
        restore,
        shellwindow,
        undo,
    )

    return HANDLERS
