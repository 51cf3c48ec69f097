"""The daemon's open-file limit: its soft limit raised to the hard one at start-up.

Why: an autostarted daemon inherits its caller's limits, and the usual soft limit is
1,024 fds. A write holds its target's directory open from the moment it is prepared
until its batch lands (daemon/files/preparedwrite.py), and a landed one until the
flusher has fsynced it, so a restore of 1,000 files or an `apply_patch` of 1,000
Updates needed about 2,000 fds and failed "Too many open files" (issue 40). The hard
limit is what the system lets this process have without privileges; raising the soft
one to it is what `ulimit -n $(ulimit -Hn)` would do, for the daemon alone. A hard
limit as low as the soft one stays as it is (nothing is raised past it).

The displaced files held for late writes take at most a quarter of the limit raised
here (`held_bound_for` in daemon/files/latewrites.py, which reads the limit itself: the
files room does not import the runtime's).

Nothing else here: no I/O beyond the two `rlimit` calls, no state.
"""

from __future__ import annotations

import logging

try:
    import resource
except ImportError:  # Windows: no rlimits; its handle limit is far higher
    resource = None  # type: ignore[assignment]

log = logging.getLogger("editjournal")
# what is asked when the hard limit is unlimited (macOS refuses RLIM_INFINITY for files)
UNLIMITED_ASK = 1 << 20


def raise_soft_limit() -> tuple[int, int] | None:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; return (soft, hard)
    as they now are, or None where there are no rlimits. Never fails the start: a
    refusal is logged and the limit left as it was."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_ASK if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as e:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, wanted, e)
            return soft, hard
        log.info("open-file limit raised from %d to %d (the hard limit)", soft, wanted)
        soft = wanted
    return soft, hard
