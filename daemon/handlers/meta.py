"""The daemon's own methods: `ping`, `status`, `log`. They record no events."""

from __future__ import annotations

import os
import time

from editjournal.daemon.audit import views
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.schemas.tools import (
    LogParams,
    LogResult,
    PingParams,
    PingResult,
    StatusParams,
    StatusResult,
)
from editjournal.schemas.wire import PROTOCOL_VERSION


@handles("ping")
def ping(ctx: Context, params: PingParams) -> Outcome:
    info = ctx.info
    return Outcome(
        PingResult(pong=True, pid=info.pid, version=info.version, protocol=PROTOCOL_VERSION)
    )


@handles("status")
def status(ctx: Context, params: StatusParams) -> Outcome:
    return Outcome(
        StatusResult(
            workspace=str(ctx.workspace.root),
            pid=os.getpid(),
            version=ctx.info.version,
            protocol=PROTOCOL_VERSION,
            uptime_s=round(time.monotonic() - ctx.info.started_monotonic, 3),
            event_count=ctx.state.event_count,
            last_seq=ctx.state.last_seq,
            known_files=len(ctx.state.files),
            agents=len(ctx.state.agents()),
            state_digest=ctx.state.digest(),
            journal_path=str(ctx.journal.path),
            journal_bytes=ctx.journal.size_bytes(),
            workspace_id=ctx.info.workspace_id,
            socket=ctx.info.socket,
            events_socket=ctx.info.events_socket,
            log_path=ctx.info.log_path,
            watcher=ctx.info.watch_health(),
            group_commit=ctx.info.commit_stats(),
            parked=ctx.info.parked(),
        )
    )


@handles("log")
def log(ctx: Context, params: LogParams) -> Outcome:
    """The newest `limit` matching events, oldest first."""
    path = ctx.workspace.relative(params.path) if params.path is not None else None
    records = ctx.journal.records(
        after_seq=params.after_seq,
        until_seq=params.until_seq,
        since_ts=params.since_ts,
        path=path,
        agent=params.agent,
        kind=params.kind,
        limit=params.limit,
        newest_first=True,
    )
    entries = [views.entry(ctx.journal, r, patch=params.patch) for r in records]
    entries.reverse()
    return Outcome(LogResult(events=entries, last_seq=ctx.state.last_seq))
