"""Helpers for the edit tests: anchors as read_file shows them, colliding lines."""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import xxhash

from editjournal.client import Client, RequestError


def anchors_of(client: Client, path: str) -> dict[int, str]:
    """line -> anchor, exactly as an agent sees them."""
    return {row.line: row.hash for row in client.read_file(path, hashes=True).lines}


def rejected(client: Client, path: str, ops: list[dict], **kwargs) -> RequestError:
    before = _bytes(client, path)
    try:
        client.edit(path, ops, **kwargs)
    except RequestError as e:
        assert _bytes(client, path) == before, "a rejected edit changed the file"
        return e
    raise AssertionError("the edit was applied")


def _bytes(client: Client, path: str) -> bytes:
    return (client.root / path).read_bytes()


@functools.cache
def colliding_lines(count: int) -> tuple[str, ...]:
    """`count` different lines whose xxh3 hashes share the first 6 hex digits."""
    seen: dict[str, list[str]] = {}
    for i in itertools.count():
        text = f"value_{i} = compute({i})"
        bucket = seen.setdefault(xxhash.xxh3_64_hexdigest(text.encode())[:6], [])
        bucket.append(text)
        if len(bucket) == count:
            return tuple(bucket)
    raise AssertionError("unreachable")


def cli_edit(
    root: Path, path: str, ops: list[dict], agent: str = "cli"
) -> subprocess.CompletedProcess:
    env = {**os.environ, "EDITJOURNAL_AGENT": agent}
    ops_file = root.parent / "ops.json"
    ops_file.write_text(json.dumps(ops))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "editjournal.client.cli",
            "--workspace",
            str(root),
            "edit",
            path,
            "--ops-file",
            str(ops_file),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
