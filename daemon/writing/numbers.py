"""The line numbers an agent holds: which of several identical lines a `LINE#ANCHOR` means.

A hash names identical lines alike (a run of blank lines, twin closing braces); the
line number the agent copied with it says which one, but only in the numbering it came
from: its read (with its own edits since: its view) and its snapshot. `LineNumbers`
gives the engine's `Pick` for a plan made in one version (`edit` plans in the agent's
snapshot), and `anchor_line` resolves one insert anchor to a line of the current
content (the `prepare_file_insert_*` tools plan there): found in the version the agent
holds and followed to the file as it is now, as `edit` carries its operations.

Reads the state and the journal (through `known.view_of` and the target's bases);
changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from editjournal.daemon.text.anchors import Numbering, meant_line
from editjournal.daemon.text.edit import Pick, plan_edit
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.known import view_of
from editjournal.daemon.writing.target import Target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import InsertAfter, InsertBefore


class LineNumbers:
    """The line numbers the agent holds, for an anchor that names identical lines; looked
    up only when one is used with its number (its view costs journal reads)."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def pick(self, planned_in: Base | None) -> Pick | None:
        """The line-number resolution for a plan in `planned_in` (None: the current
        content); None for an agent that never saw the file, whose numbers (if any)
        refer to no version: the plain behaviour, an occurrence picks."""
        target = self.target
        if (target.ctx.agent, target.path) not in target.ctx.state.snapshots:
            return None

        def pick(anchor: str, line: int, candidates: tuple[int, ...]) -> int | None:
            here = self._numbering(planned_in)
            return meant_line(anchor, line, candidates, here, self._others(planned_in))

        return pick

    def _numbering(self, version: Base | None) -> Numbering:
        target = self.target
        if version is None:
            return Numbering(target.parsed.index, range(len(target.doc.lines)))
        return Numbering(version.parsed.index, version.line_map(target.doc))

    def _others(self, planned_in: Base | None) -> Iterator[Numbering]:
        """The other numberings the agent holds, besides the version planned in: its view
        (its latest read with its own edits since: numbers copied from that read count
        there) and its snapshot (the replies of its own writes number lines so). They
        must agree with each other, or a number could land on a twin."""
        target = self.target
        done = {planned_in.sha256 if planned_in is not None else target.snap.sha256}
        view, snapshot = self._view, target.agent_base
        if view is not None and view.sha256 not in done:
            done.add(view.sha256)
            yield self._numbering(view)
        if (snapshot.sha256 if snapshot is not None else target.snap.sha256) not in done:
            yield self._numbering(snapshot)

    @cached_property
    def _view(self) -> Base | None:
        target = self.target
        return view_of(target.ctx, target.snap, target.noticed, target.doc)


def anchor_line(target: Target, op: InsertAfter | InsertBefore) -> int:
    """The 1-based line of the current content that an insert's `LINE#ANCHOR` names.
    Where the agent's snapshot is not the current content, the anchor is resolved in
    that snapshot (its numbers are that version's) and followed to the file as it is
    now; a line changed since is refused `anchor_stale`. An anchor the snapshot does not
    hold, or an agent with no snapshot, is resolved in the current content (identical
    lines then picked by the number only where the agent's numberings agree)."""
    numbers, base = LineNumbers(target), target.agent_base
    if base is not None:
        try:
            plan = plan_edit(
                base.doc.lines, [op], base.parsed.index, base.parsed.anchors, numbers.pick(base)
            )
        except ToolError:
            plan = None  # not an anchor of that version: the current content's, perhaps
        if plan is not None:
            line = plan.splices[0].targets[0]
            now = base.line_map(target.doc)[line - 1]
            if now is None:
                raise _changed_since(op.hash, line, base, target.path)
            return now + 1
    current = target.parsed
    plan = plan_edit(target.doc.lines, [op], current.index, current.anchors, numbers.pick(None))
    return plan.splices[0].targets[0]


def _changed_since(anchor: str, line: int, base: Base, path: str) -> ToolError:
    """The anchor's line, as the agent read it, is not in the file any more."""
    who = ", ".join(f"{c.agent or 'an outside writer'} (seq {c.seq})" for c in base.changes)
    return ToolError(
        ErrorCode.ANCHOR_STALE,
        f"anchor {anchor.strip()} is line {line} of {path} as you last saw it ({base.label}),"
        f" which changed since{' — by ' + who if who else ''}; nothing was planned",
        {"path": path, "base_version": base.version, "lines": [line]},
    )
