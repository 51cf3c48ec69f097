"""The machine a run measured: every figure is only meaningful beside it."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import msgspec
import xxhash
import zmq

REPO = Path(__file__).resolve().parent.parent


def describe() -> dict[str, Any]:
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "pyzmq": zmq.__version__,
        "libzmq": zmq.zmq_version(),
        "sqlite": sqlite3.sqlite_version,
        "msgspec": msgspec.__version__,
        "xxhash": xxhash.VERSION,
        "git": _output(["git", "--version"]),
        "commit": _output(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]),
        "tree_dirty": bool(_output(["git", "-C", str(REPO), "status", "--porcelain"])),
    }


def one_line(machine: dict[str, Any]) -> str:
    return (
        f"{machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, "
        f"{machine['os']}, Python {machine['python']}, pyzmq {machine['pyzmq']} "
        f"(libzmq {machine['libzmq']}), SQLite {machine['sqlite']}"
    )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _output(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
