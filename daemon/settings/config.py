"""The workspace's `.editjournal/config.toml`: write access per agent, the hunks' TTL,
and what a harness prompt's checkpoint keeps.

    [access]
    read_only = ["reviewer"]     # these agents may read, prepare and list, never write
    # writers = ["agent-a"]      # if given, only these agents may write

    [hunks]
    ttl_seconds = 3600           # how long a prepared hunk can be applied (default 1 hour)

    [prompts]
    keep_checkpoints = 100       # a session's newest prompt checkpoints kept (older: pruned)
    store_text = false           # keep each prompt's text with its checkpoint (default: not)

The file is workspace content read as data — parsed by `tomllib` (`tomli` on
Python 3.10), never executed — and read at every use (it is small), so an edit
takes effect without a restart. Anything wrong with it (bad TOML, an unknown
key, a wrong type, a symlink, a huge file) is a `config_invalid` error at the
request that needed it, naming the problem; it never stops the daemon.
Without the file everyone may write, hunks live an hour, a session keeps its newest
100 prompt checkpoints and no prompt's text is kept (a prompt may hold a secret a user
pasted: keeping it is a choice the workspace makes, never a default).
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editjournal.schemas.errors import ErrorCode, ToolError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE = "config.toml"
MAX_CONFIG_BYTES = 64 * 1024
DEFAULT_HUNK_TTL_S = 3600.0
DEFAULT_KEEP_PROMPT_CHECKPOINTS = 100
MAX_KEEP_PROMPT_CHECKPOINTS = 1_000_000
_SECTIONS: dict[str, frozenset[str]] = {
    "access": frozenset({"read_only", "writers"}),
    "hunks": frozenset({"ttl_seconds"}),
    "prompts": frozenset({"keep_checkpoints", "store_text"}),
    # read by daemon/settings/otel.py (the OpenTelemetry export); only checked here
    "otel": frozenset(
        {"enabled", "endpoint", "timeout_seconds", "queue_size", "service_name"}
        | {"metrics_interval_seconds"}
    ),
}


@dataclass(frozen=True)
class Config:
    read_only: frozenset[str] = frozenset()
    writers: frozenset[str] | None = None  # None: every agent not read-only
    hunk_ttl_ms: int = int(DEFAULT_HUNK_TTL_S * 1000)
    keep_prompt_checkpoints: int = DEFAULT_KEEP_PROMPT_CHECKPOINTS  # per agent (session)
    store_prompt_text: bool = False

    def may_write(self, agent: str) -> bool:
        if agent in self.read_only:
            return False
        return self.writers is None or agent in self.writers


DEFAULT = Config()
_cache: dict[Path, tuple[str, Config]] = {}


def load(state_dir: Path) -> Config:
    """The config as the file says now: read on every call (it is small, and a changed
    file must count at once), parsed again only when its text changed."""
    path = state_dir / CONFIG_FILE
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return DEFAULT
    except OSError as e:
        raise _invalid(path, f"cannot be examined: {e.strerror}") from e
    if not stat.S_ISREG(info.st_mode):
        raise _invalid(path, "is not a regular file (symlinks are not followed)")
    text = _read(path)
    cached = _cache.get(path)
    if cached is not None and cached[0] == text:
        return cached[1]
    config = parse(text, path)
    _cache[path] = (text, config)
    return config


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise _invalid(path, f"cannot be read: {e.strerror}") from e
    if len(data) > MAX_CONFIG_BYTES:
        raise _invalid(path, f"is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _invalid(path, "is not UTF-8") from e


def parse(text: str, path: Path | str = CONFIG_FILE) -> Config:
    """The config from TOML text; `config_invalid` naming the problem otherwise."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _invalid(path, f"is not valid TOML: {e}") from e
    for section, value in data.items():
        if section not in _SECTIONS:
            raise _invalid(
                path, f"has an unknown section [{section}] (known: {', '.join(_SECTIONS)})"
            )
        if not isinstance(value, dict):
            raise _invalid(path, f"{section} must be a table: [{section}]")
        unknown = sorted(set(value) - _SECTIONS[section])
        if unknown:
            raise _invalid(path, f"[{section}] has unknown key(s): {', '.join(unknown)}")
    access, hunks = data.get("access", {}), data.get("hunks", {})
    prompts = data.get("prompts", {})
    writers = access.get("writers")
    return Config(
        read_only=_names(access.get("read_only", []), "access.read_only", path),
        writers=None if writers is None else _names(writers, "access.writers", path),
        hunk_ttl_ms=_ttl_ms(hunks.get("ttl_seconds", DEFAULT_HUNK_TTL_S), path),
        keep_prompt_checkpoints=_keep(prompts.get("keep_checkpoints"), path),
        store_prompt_text=_flag(prompts.get("store_text", False), "prompts.store_text", path),
    )


def _keep(value: Any, path: Path | str) -> int:
    """At least 1: the newest prompt checkpoint is the session's turn count."""
    if value is None:
        return DEFAULT_KEEP_PROMPT_CHECKPOINTS
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(path, "prompts.keep_checkpoints must be a whole number, e.g. 100")
    if not 1 <= value <= MAX_KEEP_PROMPT_CHECKPOINTS:
        raise _invalid(
            path, f"prompts.keep_checkpoints must be from 1 to {MAX_KEEP_PROMPT_CHECKPOINTS:,}"
        )
    return value


def _flag(value: Any, key: str, path: Path | str) -> bool:
    if not isinstance(value, bool):
        raise _invalid(path, f"{key} must be true or false")
    return value


def _names(value: Any, key: str, path: Path | str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _invalid(path, f'{key} must be a list of agent names, e.g. ["reviewer"]')
    return frozenset(value)


def _ttl_ms(value: Any, path: Path | str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _invalid(path, "hunks.ttl_seconds must be a positive number of seconds")
    return max(1, int(value * 1000))


def _invalid(path: Path | str, problem: str) -> ToolError:
    return ToolError(
        ErrorCode.CONFIG_INVALID,
        f".editjournal/{CONFIG_FILE} {problem}; nothing was done",
        {"path": str(path), "error": problem},
    )


def write_access_denied(state_dir: Path, agent: str) -> ToolError | None:
    """The refusal for an agent the config does not let write (or a broken config)."""
    try:
        config = load(state_dir)
    except ToolError as e:
        return e
    if config.may_write(agent):
        return None
    return ToolError(
        ErrorCode.WRITE_ACCESS_DENIED,
        f"agent {agent!r} may not write in this workspace (.editjournal/{CONFIG_FILE}"
        " [access]); nothing was written",
        {"agent": agent},
    )
