"""Where a text writer's change goes: the one search every text writer shares.

`edit_file`, `apply_patch`, `safe_patch` (with `rebase`) and a harness's Edit find
their place by the lines they quote. Each gives `located` its own way to plan in a
version of the file (`PlanIn`: in the current content, or in an older one the
writing path then carries); `located` decides which version's plan it is:

1. the current content's, when its lines are ones the agent was shown and nobody
   else changed the file since its read (the common case: one search, nothing more);
2. else the plan in a version the agent knows (`Target.known`: its view, its
   snapshot) — kept when it lands where the current content's plan does, preferred
   when it does not: the agent meant the place its view has, and another agent's
   copy of the text elsewhere (or a looser match there) is not that place;
3. else the current content's on the text alone: the lines match exactly, so the
   agent knows them (a window, grep or sed showed them).

None: the text is in no version the agent knows; the planner then refuses (stale,
from an older version it was given, or not found). Reads the journal; changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from editjournal.daemon.writing.guards import relied_spans, unseen_hits
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.known import same_place
from editjournal.daemon.writing.path import Planned
from editjournal.daemon.writing.target import Target

PlanIn = Callable[[Base | None], Planned | None]  # None: the current content


def located(target: Target, plan_in: PlanIn) -> Planned | None:
    """The plan of the version that decides where the change goes (see the module)."""
    here = plan_in(None)
    if here is not None and not _in_doubt(target, here):
        return here
    for known in target.known:
        planned = plan_in(known)
        if planned is None:
            continue
        if here is not None and same_place(here.plan, known, planned.plan, target.doc):
            return here
        return planned
    return here


def _in_doubt(target: Target, here: Planned) -> bool:
    """Whether the agent's view could place the text elsewhere: someone else changed the
    file since its read, or the plan changes lines it was not shown. An agent that never
    read the file, or was shown the whole of it as it is, has nothing to doubt: decided
    from the state alone, so the common write pays no journal query."""
    seen = target.ctx.state.snapshots.get((target.ctx.agent, target.path))
    if seen is None or (seen.sha256 == target.snap.sha256 and not seen.unseen):
        return False
    if target.others_changed:
        return True
    return bool(unseen_hits(target, relied_spans(here.plan, target.doc)))
