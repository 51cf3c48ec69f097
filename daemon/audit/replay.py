"""Replay: every file the journal knows, as it was after one event, written into a directory.

Reads the journal only; writes only inside the target directory, which must be
empty (or not exist) so a replay never mixes with other files. A path from the
journal that would land outside it (a tampered `../x`) is refused, not written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from editjournal.daemon.audit.timeline import files_at
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ErrorCode, ToolError


class ReplayRefused(Exception):
    """The target directory cannot take a replay (not empty, not a directory)."""


@dataclass
class ReplayReport:
    until_seq: int
    written: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # removed as of until_seq
    not_stored: list[str] = field(default_factory=list)  # content not kept (hash only)
    refused: list[str] = field(default_factory=list)  # paths that would leave the directory


def last_seq(journal: Journal) -> int:
    last = next(journal.records(newest_first=True, limit=1), None)
    return last.seq if last else 0


def replay(journal: Journal, until_seq: int | None, target: Path) -> ReplayReport:
    """Write every known file as of `until_seq` (default: the last event) into `target`."""
    newest = last_seq(journal)
    seq = newest if until_seq is None else until_seq
    if seq > newest:
        raise ToolError(
            ErrorCode.UNKNOWN_SEQ,
            f"--until {seq} is past the journal's last event ({newest})",
            {"until_seq": seq, "last_seq": newest},
        )
    _prepare(target)
    report = ReplayReport(seq)
    for path, version in files_at(journal, seq).items():
        if version.sha256 is None:
            report.absent.append(path)
            continue
        data = journal.blob(version.sha256)
        if data is None:
            report.not_stored.append(path)
        elif not _write(target, path, data):
            report.refused.append(path)
        else:
            report.written.append(path)
    return report


def _prepare(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise ReplayRefused(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise ReplayRefused(f"{target} is not empty: replay writes into an empty directory")
    target.mkdir(parents=True, exist_ok=True)


def _write(target: Path, rel: str, data: bytes) -> bool:
    """Write `data` at `target/rel`; False when `rel` would leave `target`."""
    root = target.resolve()
    dest = (root / rel).resolve()
    if os.path.isabs(rel) or not dest.is_relative_to(root) or dest == root:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return True
