"""The state the daemon starts from: a checked snapshot plus the journal's checked tail.

Why: start-up must be quick with a long journal and must never build on a
damaged one. So, in this order: the journal's tip is compared with its chain
anchor (a cut-off tail or a rewrite with recomputed hashes); the seqs are
checked gap-free (a deleted row); the last state snapshot is loaded if it
matches its journal (`daemon.store.statesnap`); and the events after it are folded,
each checked against the chain as it is read. Any break raises
`JournalCorrupt` naming the seq, and the daemon refuses to start rather than
append onto it. The snapshot's seq is the last verified point: events before
it were checked by an earlier start (or the daemon that wrote them); a journal
opened with its append-only triggers missing is not trusted so far and is
checked from the beginning. `editjournal verify` checks everything, always.
"""

from __future__ import annotations

import logging

from editjournal.daemon.model.state import State
from editjournal.daemon.store.hashchain import GENESIS_HASH
from editjournal.daemon.store.journal import Journal, JournalCorrupt
from editjournal.daemon.store.statesnap import Snapshotter, load

log = logging.getLogger("editjournal")


def load_state(journal: Journal, snapshotter: Snapshotter) -> State:
    """The fold of the whole journal (from its snapshot when one matches), checked."""
    check_journal(journal)
    loaded = None
    if journal.opened_without_triggers:
        log.warning("the journal's append-only triggers were missing: checking it all")
    else:
        loaded = load(journal)
    state, prev_hash = loaded if loaded is not None else (State(), GENESIS_HASH)
    snapshotter.loaded_at(state.last_seq)
    for record in journal.verified_records(state.last_seq, prev_hash):
        state.apply(record)
    log.info(
        "state folded: %d events from a snapshot at seq %d, %d after it",
        state.last_seq,
        snapshotter.saved_seq,
        state.last_seq - snapshotter.saved_seq,
    )
    return state


def check_journal(journal: Journal) -> None:
    """The cheap whole-journal checks: anchor agreement and no missing seq."""
    journal.check_anchor()
    gap = journal.first_gap()
    if gap is not None:
        raise JournalCorrupt(
            journal.path, gap, f"event {gap} is missing (rows were deleted from the log)"
        )
