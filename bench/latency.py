"""Single-request rows: one client, one daemon, each request against its in-process
floor (and a bare ZeroMQ echo, and a shadow-git commit), contenders interleaved.

- `ping` vs a ZeroMQ echo process: the transport's share of every request;
- `read_file(hashes)` vs read + split + xxh3 in-process, and the echo;
- a durable anchored `edit` vs read + replace + fsync + rename in-process, and
  vs the same write committed to a shadow git repository;
- the same edit when another agent changed the file since (carried over);
- edits of files of 10k and 100k lines vs the in-process floor at that size;
- the msgpack size of a `read_file(hashes)` reply vs the file's size.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import zmq

from bench.daemons import anchor_of, serving
from bench.files import (
    ShadowGit,
    durable_edits,
    python_source,
    read_hash,
    value_line,
    value_text,
)
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary, interleaved
from editjournal.client import Client
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Request

EVERYDAY = "module.py"
BLOCK_MARGIN = 20  # the other agent edits this many lines from the end of the file


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    ws, local, gitwork = (tmp / name for name in ("ws", "local", "gitwork"))
    source = python_source(sizes.file_lines)
    for directory in (ws, local, gitwork):
        directory.mkdir()
        (directory / EVERYDAY).write_text(source)
    git = ShadowGit(gitwork, tmp / "git") if shutil.which("git") else None
    with serving(ws), Client(ws, "bench", autostart=False) as client, echo(tmp) as round_trip:
        n = sizes.latency_n
        yield ping_row(client, round_trip, n)
        yield read_row(client, ws / EVERYDAY, round_trip, n, sizes.file_lines)
        yield edit_row(client, local / EVERYDAY, git, n, sizes.file_lines)
        yield rebased_row(client, ws, local / EVERYDAY, n, sizes.file_lines)
        for lines, samples in sizes.big_files:
            yield big_edit_row(client, ws, local, lines, samples)
        yield reply_size_row(client, ws / EVERYDAY, sizes.file_lines)


@contextmanager
def echo(tmp: Path) -> Iterator[Callable[[], None]]:
    """A bare ZeroMQ ROUTER in its own process echoing a request-sized frame."""
    address = f"ipc://{tmp}/echo.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.echo", address],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(address)
    payload = b"\x84" + b"\xa2id\x01" * 4

    def round_trip() -> None:
        sock.send(payload)
        sock.recv()

    try:
        yield round_trip
    finally:
        sock.send(b"stop")
        sock.close(linger=1000)
        proc.wait(10)


def ping_row(client: Client, round_trip: Callable[[], None], n: int) -> Row:
    got = interleaved({"ours": client.ping, "echo": round_trip}, n)
    return Row(
        "`ping` round trip",
        _us("editjournal", got["ours"]),
        [_us("ZeroMQ echo", got["echo"])],
        goal="—",
        met=None,
    )


def read_row(client: Client, path: Path, round_trip: Callable[[], None], n: int, lines: int) -> Row:
    def read() -> None:
        client.read_file(path.name, hashes=True)

    got = interleaved({"ours": read, "floor": lambda: read_hash(path), "echo": round_trip}, n)
    floor = got["floor"].p50 + got["echo"].p50
    return Row(
        f"`read_file(hashes)`, {lines:,}-line Python file",
        _us("editjournal", got["ours"]),
        [_us("in-process read+split+xxh3", got["floor"]), _us("ZeroMQ echo", got["echo"])],
        goal="p50 ≤ in-process + echo + 0.4 ms",
        met=got["ours"].p50 <= floor + 400,
        notes=[f"floor (in-process + echo p50) {floor / 1000:.2f} ms"],
    )


def anchored_edits(client: Client, name: str, line: int) -> Callable[[], None]:
    """Replace line `line` again and again, each time by the anchor the last edit returned."""
    anchor = [anchor_of(client, name, line)]
    count = [0]

    def edit() -> None:
        count[0] += 1
        text = value_text(line, f"{client.agent} {count[0]}")
        done = client.edit(name, [{"op": "replace_line", "hash": anchor[0], "content": text}])
        anchor[0] = done.changed_lines[0].hash

    return edit


def edit_row(client: Client, local: Path, git: ShadowGit | None, n: int, lines: int) -> Row:
    line = value_line(lines // 2)
    contenders = {
        "ours": anchored_edits(client, EVERYDAY, line),
        "floor": durable_edits(local, line),
    }
    if git is not None:
        contenders["git"] = git.edits(EVERYDAY, line)
    got = interleaved(contenders, n)
    ours = got["ours"]
    baselines = [_us("in-process read+replace+fsync+rename", got["floor"])]
    checks = {"p50 < 2 ms": ours.p50 < 2000, "p99 ≤ 3× p50": ours.p99 <= 3 * ours.p50}
    notes = []
    if git is not None:
        baselines.append(_us("shadow-git commit", got["git"]))
        checks["≥ 5× faster than git"] = got["git"].p50 >= 5 * ours.p50
        notes.append(f"git p50 ÷ editjournal p50 = {got['git'].p50 / ours.p50:.1f}×")
    else:
        notes.append("git is not installed: the shadow-git contender was skipped")
    missed = [name for name, ok in checks.items() if not ok]
    if missed:
        notes.append("missed: " + ", ".join(missed))
    return Row(
        f"durable anchored `edit`, {lines:,}-line file",
        _us("editjournal", ours),
        baselines,
        goal="p50 < 2 ms; ≥ 5× faster than git; p99 ≤ 3× p50",
        met=not missed,
        notes=notes,
    )


def rebased_row(client: Client, ws: Path, local: Path, n: int, lines: int) -> Row:
    """Another agent edits far away before each timed edit: ours is carried over it."""
    line, far = value_line(lines // 4), value_line(lines - BLOCK_MARGIN)
    with Client(ws, "bench-other", autostart=False) as other:
        got = interleaved(
            {"ours": anchored_edits(client, EVERYDAY, line), "floor": durable_edits(local, line)},
            n,
            prepare={"ours": anchored_edits(other, EVERYDAY, far)},
        )
    return Row(
        "`edit` carried over another agent's edit",
        _us("editjournal", got["ours"]),
        [_us("in-process read+replace+fsync+rename", got["floor"])],
        goal="—",
        met=None,
    )


def big_edit_row(client: Client, ws: Path, local: Path, lines: int, n: int) -> Row:
    name = f"big_{lines}.py"
    source = python_source(lines)
    (ws / name).write_text(source)
    (local / name).write_text(source)
    line = value_line(lines // 2)
    got = interleaved(
        {"ours": anchored_edits(client, name, line), "floor": durable_edits(local / name, line)},
        n,
        warmup=1,
    )
    return Row(
        f"`edit` on a {lines:,}-line file",
        _us("editjournal", got["ours"]),
        [_us("in-process read+replace+fsync+rename", got["floor"])],
        goal="≤ 2× the in-process floor",
        met=got["ours"].p50 <= 2 * got["floor"].p50,
    )


def reply_size_row(client: Client, path: Path, lines: int) -> Row:
    """The bytes on the wire of one `read_file(hashes)` reply, sent on a bare socket."""
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(client.address)
    try:
        params = msgspec.Raw(msgspec.msgpack.encode({"path": path.name, "hashes": True}))
        sock.send(
            REQUEST_ENCODER.encode(
                Request(id=1, method="read_file", agent="bench-size", params=params)
            )
        )
        if not sock.poll(30_000):
            raise RuntimeError("no reply to read_file within 30 s")
        reply = sock.recv()
    finally:
        sock.close(linger=0)
    if not RESPONSE_DECODER.decode(reply).ok:
        raise RuntimeError(f"read_file failed: {RESPONSE_DECODER.decode(reply).error}")
    size = path.stat().st_size
    return Row(
        f"`read_file(hashes)` reply size, {lines:,}-line file",
        Figure("editjournal", len(reply), "bytes", extra="msgpack"),
        [Figure("file size", size, "bytes")],
        goal="≤ 1.5× the file",
        met=len(reply) <= 1.5 * size,
    )


def _us(name: str, summary: Summary) -> Figure:
    return Figure(name, summary.p50, "us", p99=summary.p99)
