"""`editjournal verify`: is this journal honest, and does the workspace match it?

Four checks, each reported (ok, failed or skipped) with the first seq or the
files that fail it, after SQLite's own `PRAGMA integrity_check` of the file
(`integrity`: a malformed file fails it, and the rest are skipped). The first
three judge the journal; the fourth only compares, and says what it finds:
- chain: the hash chain holds from genesis and every blob an event needs is
  there and intact (`Journal.verify()`), and the journal agrees with its chain
  anchor file, when there is one (`Journal.check_anchor()`: cut short or
  rewritten with recomputed hashes);
- fold: folding every event into a fresh `State` succeeds, and where the
  journal holds a state snapshot, the fold reproduces its digest;
- workspace: every file the journal knows holds the content its last event
  says (or is absent when it says removed); each difference names that event.
  A difference is a fact about the workspace, not a fault of the journal: a
  person edited a file while no daemon ran (the next start records it as an
  outside change). So it is reported apart (`changed`, `VerifyOutcome.changes`)
  and leaves `ok` true; `--strict` is the caller's way to fail on it.
Read-only throughout: the journal is opened `mode=ro`, files are only read.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editjournal.daemon.audit.timeline import Version, files_at
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import State
from editjournal.daemon.store.chainanchor import ANCHOR_FILE, Anchor, copy_path, load_key
from editjournal.daemon.store.journal import Journal, JournalCorrupt


@dataclass(frozen=True)
class Problem:
    check: str  # "integrity" | "chain" | "fold" | "workspace"
    message: str
    seq: int | None = None
    path: str | None = None


@dataclass
class VerifyOutcome:
    events: int = 0
    # check -> ok | failed | skipped, and for the workspace: changed
    checks: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)  # the journal's: each a failure
    state_digest: str | None = None
    changes: list[Problem] = field(default_factory=list)  # the workspace's: facts

    @property
    def ok(self) -> bool:
        """The journal is intact (whatever happened to the workspace since)."""
        return not self.problems

    def passes(self, strict: bool = False) -> bool:
        """`ok`, and with `strict` a workspace that matches the journal as well."""
        return self.ok and not (strict and self.changes)

    def add(self, check: str, problems: list[Problem], skipped: bool = False) -> None:
        self.checks[check] = "skipped" if skipped else ("failed" if problems else "ok")
        self.problems.extend(problems)

    def compared(self, changes: list[Problem]) -> None:
        """The workspace comparison's findings: `changed`, never `failed`."""
        self.checks["workspace"] = "changed" if changes else "ok"
        self.changes.extend(changes)

    def summary(self) -> str | None:
        """What the changes mean, in a line, when there are any."""
        if not self.changes:
            return None
        files = f"{len(self.changes)} file{'s' if len(self.changes) != 1 else ''}"
        intact = "the journal is intact; " if self.ok else ""
        return (
            f"{intact}{files} changed while no daemon recorded it (a daemon records each as"
            " an outside change when it next starts or looks); --strict fails on this"
        )

    def as_json(self, strict: bool = False) -> dict[str, Any]:
        """`verify --json`: `ok` is the exit status's verdict, `intact` the journal's."""
        return {
            "ok": self.passes(strict),
            "intact": self.ok,
            "events": self.events,
            "checks": self.checks,
            "state_digest": self.state_digest,
            "problems": [dataclasses.asdict(p) for p in self.problems],
            "workspace_changes": [dataclasses.asdict(p) for p in self.changes],
        }


def verify(journal: Journal, workspace: Path | None) -> VerifyOutcome:
    """Every check; `workspace` None skips the workspace comparison (a copied journal)."""
    outcome = VerifyOutcome()
    outcome.add("integrity", integrity_problems(journal))
    if outcome.problems:  # a malformed file: the other checks would read garbage or fail
        for check in ("chain", "fold", "workspace"):
            outcome.add(check, [], skipped=True)
        return outcome
    report = journal.verify()
    outcome.events = report.checked
    chain = [] if report.ok else [Problem("chain", str(report.reason), report.first_bad_seq)]
    outcome.add("chain", chain + anchor_problems(journal))
    if outcome.problems:  # a broken chain: folding or comparing past it proves nothing
        outcome.add("fold", [], skipped=True)
        outcome.add("workspace", [], skipped=True)
        return outcome
    digest, fold_problems = fold_check(journal)
    outcome.state_digest = digest
    outcome.add("fold", fold_problems)
    if workspace is None:
        outcome.add("workspace", [], skipped=True)
    else:
        outcome.compared(workspace_problems(journal, workspace))
    return outcome


def integrity_problems(journal: Journal) -> list[Problem]:
    """SQLite's `PRAGMA integrity_check` of the file: a damaged page fails it."""
    found = journal.integrity_check()
    if not found:
        return []
    return [Problem("integrity", f"PRAGMA integrity_check: {'; '.join(found[:5])}")]


def anchor_problems(journal: Journal) -> list[Problem]:
    """The chain anchor beside the journal (if any) against the journal's tip."""
    if getattr(journal, "anchor", "absent") is None:  # opened read-only: read it here
        journal.anchor = Anchor(
            journal.path.with_name(ANCHOR_FILE), load_key(), copy_path(journal.path)
        )
    try:
        journal.check_anchor()
    except JournalCorrupt as e:
        return [Problem("chain", e.reason, e.seq)]
    return []


def fold_check(journal: Journal) -> tuple[str | None, list[Problem]]:
    """(the folded state's digest, problems): the fold succeeds, and reproduces the
    digest of the journal's state snapshot when it has one."""
    snapshot = _snapshot(journal)
    state = State()
    problems: list[Problem] = []
    for record in journal.records():
        try:
            state.apply(record)
        except (TypeError, ValueError, KeyError) as e:
            return None, [Problem("fold", f"event {record.seq} does not fold: {e}", record.seq)]
        if snapshot is not None and record.seq == snapshot[0] and state.digest() != snapshot[1]:
            message = f"folding to seq {record.seq} does not give its state snapshot's digest"
            problems.append(Problem("fold", message, record.seq))
    return state.digest(), problems


def _snapshot(journal: Journal) -> tuple[int, str] | None:
    """(seq, digest) of the journal's state snapshot, if it has a usable one."""
    from editjournal.daemon.store import statesnap  # imports journal: loaded only when needed

    try:
        stored = journal.load_snapshot()
    except (AttributeError, sqlite3.Error):  # a journal from before snapshots
        return None
    if stored is None:
        return None
    seq, _chain, digest, shape, _body = stored
    if shape != statesnap.shape() or not isinstance(seq, int) or not isinstance(digest, str):
        return None
    return seq, digest


def workspace_problems(journal: Journal, root: Path) -> list[Problem]:
    """Each known file whose content on disk is not the one the journal last recorded."""
    problems = []
    workspace = Workspace(root)  # confined reads: a link out of the workspace is no file of it
    for path, version in files_at(journal).items():
        found = _disk_sha(workspace, path)
        if found != version.sha256:
            problems.append(_difference(path, version, found))
    return problems


def _disk_sha(workspace: Workspace, rel: str) -> str | None:
    """The SHA-256 of the regular file at `rel`, read through the file-access layer
    (never through a link that leaves the workspace); None when there is none."""
    found = workspace.fingerprint(rel)
    return found.sha256 if found is not None else None


def _difference(path: str, version: Version, found: str | None) -> Problem:
    who = f"event {version.seq} ({version.kind} by {version.author})"
    if version.sha256 is None:
        says, now = "removed", "exists"
    else:
        says, now = f"sha256 {version.sha256[:12]}", "is missing" if found is None else "differs"
        if found is not None and found.startswith("unreadable"):
            now = f"is {found}"
        elif found is not None:
            now = f"differs (sha256 {found[:12]})"
    message = f"{path}: the journal's last write, {who}, left it {says}; on disk it {now}"
    return Problem("workspace", message, version.seq, path)
