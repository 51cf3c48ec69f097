"""Helpers for the prepare/apply tests: a refusal's error, the journal's hunk events, config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from editjournal.client import RequestError
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME


def refused(call: Callable[[], Any]) -> RequestError:
    try:
        call()
    except RequestError as e:
        return e
    raise AssertionError("the call was not refused")


def kinds(root: Path, after_seq: int = 0) -> list[str]:
    """The journal's event kinds after `after_seq`, in order."""
    journal = Journal(root / STATE_DIR_NAME / JOURNAL_FILE)
    try:
        return [r.kind for r in journal.records(after_seq=after_seq)]
    finally:
        journal.close()


def events(root: Path, kind: str) -> list[Any]:
    journal = Journal(root / STATE_DIR_NAME / JOURNAL_FILE)
    try:
        return [r for r in journal.records(kind=kind)]
    finally:
        journal.close()


def configure(root: Path, text: str) -> None:
    """Write the workspace's .editjournal/config.toml."""
    state = root / STATE_DIR_NAME
    state.mkdir(exist_ok=True)
    (state / "config.toml").write_text(text)
