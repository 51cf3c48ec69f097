"""A journal of a million events, built quickly but honestly: with the daemon's own
`Journal` (stage, then commit in big batches), so every row is chained and every
blob stored as the daemon stores them, and a workspace whose files match the
journal's last state, so a daemon starting on it sees no outside change.

The mix: 8 agents working on 64 small Python files, each step one agent reading a
file (`file_read`) and replacing one of its lines (`edit_applied`, with the new
content as a blob). Built once into `bench/.cache/` and reused; rebuilt when the
journal's code or the event schema changes (their source is part of the key)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import editjournal.daemon.store.blobrefs as blobrefs_module
import editjournal.daemon.store.hashchain as hashchain_module
import editjournal.daemon.store.journal as journal_module
import editjournal.schemas.events as events_module
from editjournal.daemon.runtime.runfiles import ensure_state_dir
from editjournal.daemon.store.journal import Journal, sha256_hex
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from editjournal.schemas.events import DaemonStarted, DaemonStopped, EditApplied, FileRead

CACHE = Path(__file__).resolve().parent / ".cache"
GENERATOR_VERSION = "1"
AGENTS, FILES, FILE_LINES, BATCH = 8, 64, 12, 20_000


def cached_workspace(events: int, cache: Path = CACHE, rebuild: bool = False) -> tuple[Path, bool]:
    """A workspace holding a journal of `events` events, and whether it was just built
    (else it came from the cache, whose key still matched; `rebuild` forces a build)."""
    cache.mkdir(parents=True, exist_ok=True)
    (cache / ".gitignore").write_text("*\n")  # never committed, whatever the repo ignores
    root = cache / f"journal-{events}"
    key = _key(events)
    key_file = root / "key.txt"
    if not rebuild and key_file.exists() and key_file.read_text() == key:
        return root / "ws", False
    shutil.rmtree(root, ignore_errors=True)
    fill(root / "ws", events)
    key_file.write_text(key)
    return root / "ws", True


def _key(events: int) -> str:
    """Changes whenever the journal's storage or the events' shape may have changed."""
    digest = hashlib.sha256(f"{GENERATOR_VERSION}:{events}".encode())
    for module in (journal_module, hashchain_module, blobrefs_module, events_module):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def fill(ws: Path, events: int) -> None:
    """Write `events` events (a start, reads and edits, a clean stop) into a new
    workspace `ws`, and the files as the last event left them."""
    ws.mkdir(parents=True)
    files = {f"src/mod_{i}.py": _first_content(i) for i in range(FILES)}
    journal = Journal(ensure_state_dir(ws / STATE_DIR_NAME) / JOURNAL_FILE)
    try:
        journal.stage(None, DaemonStarted(pid=1, workspace=str(ws), version="bench", socket="-"))
        step = 0
        while (room := events - 1 - journal.last_seq) > 0:
            _one_step(journal, files, step, edit=room >= 2)
            step += 1
            if step % (BATCH // 2) == 0:
                journal.commit()
        journal.stage(None, DaemonStopped(pid=1, reason="bench journal built"))
        journal.commit()
    finally:
        journal.close()
    for name, lines in files.items():
        (ws / name).parent.mkdir(exist_ok=True)
        (ws / name).write_text("".join(lines))


def _one_step(journal: Journal, files: dict[str, list[str]], step: int, edit: bool) -> None:
    """One agent reads one file and (if there is room) replaces one of its lines."""
    agent, index = f"agent-{step % AGENTS}", (step * 7) % FILES
    path = f"src/mod_{index}.py"
    before = "".join(files[path]).encode()
    read = FileRead(
        path=path, sha256=sha256_hex(before), size=len(before), line_count=FILE_LINES, hashes=True
    )
    journal.stage(agent, read, {read.sha256: before})
    if not edit:
        return
    line = step % FILE_LINES
    files[path][line] = f"value_{index}_{line} = compute({index}, {line})  # step {step}\n"
    after = "".join(files[path]).encode()
    applied = EditApplied(
        path=path,
        writer="edit",
        before_sha256=read.sha256,
        after_sha256=sha256_hex(after),
        size=len(after),
        lines_before=FILE_LINES,
        line_count=FILE_LINES,
        operations=[{"op": "replace_line", "hash": "a1b2c3", "content": files[path][line][:-1]}],
        line_changes=[(line, line + 1, 1)],
    )
    journal.stage(agent, applied, {applied.after_sha256: after})


def _first_content(index: int) -> list[str]:
    return [f"value_{index}_{k} = compute({index}, {k})\n" for k in range(FILE_LINES)]
