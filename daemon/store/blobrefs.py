"""Which blobs each event stores with it, and which file each blob is a version of.

The journal must hold every blob an event names: `verify` reports one missing, export
writes them out, and a file's next version is stored as a line delta on the newest
version its events name (daemon.store.blobs). This is the one place that knows which
fields of which events are stored contents. Pure: it looks at events only.
"""

from __future__ import annotations

from editjournal.schemas.events import (
    AnyEvent,
    CheckpointCreated,
    EditApplied,
    EditRejected,
    FileRead,
    HunkPrepared,
    OutsideChangeRecorded,
)


def stored_blobs(event: AnyEvent) -> tuple[str, ...]:
    """The blobs the daemon stores with `event`, so the journal must hold them.

    An outside change stores the new content only for files an agent has read
    (`content_stored`); its old content is not this event's to store. A rejected
    edit stores what it was checked against; `shown_sha256` is that same content.
    """
    if isinstance(event, FileRead):
        return (event.sha256,)
    if isinstance(event, EditApplied):
        return (event.before_sha256, event.after_sha256)
    if isinstance(event, EditRejected):
        return (event.sha256,) if event.sha256 else ()
    if isinstance(event, OutsideChangeRecorded) and event.content_stored and event.new_sha256:
        return (event.new_sha256,)
    if isinstance(event, CheckpointCreated):  # its manifest's chunks (old journals: inline)
        return (*event.files.values(), *event.manifest)
    if isinstance(event, HunkPrepared):  # the content a hunk was planned on: apply rebases from it
        return (event.base_sha256,)
    return ()


def blob_paths(event: AnyEvent) -> dict[str, str]:
    """Which file each blob stored with `event` is a version of (for line deltas)."""
    if isinstance(event, CheckpointCreated):
        return {digest: path for path, digest in event.files.items()}
    if event.path is None:
        return {}
    return {digest: event.path for digest in stored_blobs(event)}
