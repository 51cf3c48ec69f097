"""Prepared hunks as the agents see them: `list_hunks`, `discard_hunk`, and the checks
every tool that names a hunk makes (it exists, has not expired, is the caller's, was
not applied). The caller's means its agent name and, for a hunk prepared with a
credential, that same credential (`ctx.identity`): another client that only names the
agent is refused `hunk_identity_mismatch`, and its `list_hunks` does not show them.

Hunks live in the journal (`hunk_*` events) and in the folded state
(`daemon.model.hunkbook`), so they survive a restart until they expire. Expiry is a
time: the clock is read here, in the handler, and an expired hunk is journaled
(`hunk_discarded`, reason "expired") when a request notices it — lazily, so an
idle daemon writes nothing. A refusal about a hunk itself is journaled as
`hunk_rejected`.

What it must never do: change state (it returns events) or write a file.
"""

from __future__ import annotations

import time

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.model.hunkbook import APPLIED, Hunk
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, HunkDiscarded, HunkRejected
from editjournal.schemas.tools import (
    DiscardHunkParams,
    DiscardHunkResult,
    HunkInfo,
    ListHunksParams,
    ListHunksResult,
)


def now_ms() -> int:
    """The handlers' clock (never the text engine's): expiry is decided here."""
    return time.time_ns() // 1_000_000


class HunkRefused(Exception):
    """A refusal about a hunk, with the events that record it."""

    def __init__(self, error: ToolError, events: list[AnyEvent]) -> None:
        super().__init__(error.message)
        self.error, self.events = error, events

    def outcome(self) -> Outcome:
        return Outcome(events=self.events, error=self.error)


def owned_hunk(ctx: Context, hunk_id: str, tool: str, now: int) -> Hunk:
    """The caller's pending, unexpired hunk; `HunkRefused` (journaled) otherwise."""
    hunk = ctx.state.hunks.get(hunk_id)
    noticed: list[AnyEvent] = []
    if hunk is None:
        error = ToolError(
            ErrorCode.HUNK_NOT_FOUND,
            f"no prepared hunk {hunk_id!r}: none was prepared with that id, or it was discarded",
            {"hunk_id": hunk_id},
        )
    elif hunk.agent != ctx.agent:
        error = ToolError(
            ErrorCode.WRONG_OWNER,
            f"hunk {hunk_id} was prepared by {hunk.agent!r}, not by you ({ctx.agent!r})",
            {"hunk_id": hunk_id, "owner": hunk.agent, "path": hunk.path},
        )
    elif not hunk.held_by(ctx.identity):
        error = ToolError(
            ErrorCode.HUNK_IDENTITY_MISMATCH,
            f"hunk {hunk_id} was prepared by another client named {hunk.agent!r} (it held"
            " another credential): naming the agent does not make its hunk yours; nothing"
            " was done",
            {"hunk_id": hunk_id, "owner": hunk.agent, "path": hunk.path},
        )
    elif hunk.status == APPLIED:
        error = ToolError(
            ErrorCode.HUNK_ALREADY_APPLIED,
            f"hunk {hunk_id} was already applied to {hunk.path} at seq {hunk.applied_seq}",
            {"hunk_id": hunk_id, "applied_seq": hunk.applied_seq, "path": hunk.path},
        )
    elif hunk.expired(now):
        noticed = expiry_events([hunk], now)
        error = ToolError(
            ErrorCode.HUNK_EXPIRED,
            f"hunk {hunk_id} expired at {hunk.expires_at_ms} (ms since the epoch); nothing was"
            " written",
            {"hunk_id": hunk_id, "expires_at_ms": hunk.expires_at_ms, "path": hunk.path},
        )
    else:
        return hunk
    rejected = HunkRejected(
        path=hunk.path if hunk else None,
        hunk_id=hunk_id,
        tool=tool,
        code=error.code.value,
        message=error.message,
    )
    raise HunkRefused(error, [*noticed, rejected])


def expiry_events(hunks: list[Hunk], now: int) -> list[AnyEvent]:
    """`hunk_discarded` (expired) for each pending hunk past its time, noticed now."""
    return [
        HunkDiscarded(path=h.path, hunk_id=h.hunk_id, reason="expired")
        for h in hunks
        if h.status != "expired" and h.expired(now)
    ]


def hunk_info(hunk: Hunk) -> HunkInfo:
    return HunkInfo(
        hunk_id=hunk.hunk_id,
        kind=hunk.kind,
        path=hunk.path,
        created_at_ms=hunk.created_at_ms,
        expires_at_ms=hunk.expires_at_ms,
        base_version=hunk.base_version,
        diff=hunk.diff,
    )


def pending_infos(ctx: Context, agent: str, now: int, path: str | None = None) -> list[HunkInfo]:
    """An agent's pending, unexpired hunks, in apply order (the caller's own: those it
    may act on, when it asks about its own name)."""
    hunks = ctx.state.hunks.pending(agent, path)
    mine = agent == ctx.agent
    return [
        hunk_info(h) for h in hunks if not h.expired(now) and (not mine or h.held_by(ctx.identity))
    ]


@handles("list_hunks")
def list_hunks(ctx: Context, params: ListHunksParams) -> Outcome:
    now = now_ms()
    path = ctx.workspace.relative(params.path) if params.path is not None else None
    expired = expiry_events(ctx.state.hunks.pending(ctx.agent, path), now)
    result = ListHunksResult(
        hunks=pending_infos(ctx, ctx.agent, now, path),
        expired=[e.hunk_id for e in expired if isinstance(e, HunkDiscarded)],
    )
    return Outcome(result, events=expired)


@handles("discard_hunk")
def discard_hunk(ctx: Context, params: DiscardHunkParams) -> Outcome:
    try:
        hunk = owned_hunk(ctx, params.hunk_id, "discard_hunk", now_ms())
    except HunkRefused as refused:
        return refused.outcome()
    event = HunkDiscarded(path=hunk.path, hunk_id=hunk.hunk_id, reason="discarded")
    message = f"Discarded hunk {hunk.hunk_id} ({hunk.kind} of {hunk.path})"
    return Outcome(
        DiscardHunkResult(message=message, hunk_id=hunk.hunk_id, path=hunk.path), [event]
    )
