"""In-process micro-benchmarks of the text engine: anchored edits and lean reads.

    .venv/bin/python -m bench.anchors_micro [--sizes 1000,10000,100000] [--rounds 30]
    .venv/bin/python -m bench.anchors_micro --profile 100000   # cProfile of one edit path

No daemon, no sockets, no journal: what the daemon's one thread computes for a
one-line `replace_line` edit (`handlers.writing._written`'s steps: plan, apply,
render, sha256, anchors, diff, valid-through) and for a `read_file(hashes)` of an
unchanged file, each against a same-run floor that does the least any tool could:

- edit floor: split the text, replace one line, join, encode, sha256;
- read floor: decode, split, xxh3 every line (the issue's "read+split+xxh3").

Contenders take turns (bench.stats.interleaved). `edit_rows`/`read_rows` return
plain dicts; `reply_size` the bytes of a read reply against the file's size.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pstats
from typing import Any

import msgspec
import xxhash

from bench.files import python_source, value_line
from bench.stats import interleaved
from editjournal.daemon.files.textcache import Parsed, TextCache
from editjournal.daemon.text.diff import anchored_diff
from editjournal.daemon.text.edit import apply_plan, plan_edit
from editjournal.daemon.text.lines import parse, render
from editjournal.daemon.text.region import changed_region
from editjournal.schemas.tools import AnchoredLine, EditParams, ReadFileResult


class _Editor:
    """Edits one line of a file again and again, each edit starting from the last
    result as the daemon does; `incremental=False` anchors every version from scratch."""

    def __init__(self, text: str, incremental: bool) -> None:
        self.cache = TextCache(max_lines=10_000_000)
        sha = hashlib.sha256(text.encode()).hexdigest()
        self.parsed = self.cache.parsed(sha, text)
        self.parsed.anchors  # noqa: B018 - the daemon has the current version anchored
        self.line = value_line(len(self.parsed.doc.lines) // 2)
        self.incremental = incremental
        self.k = 0

    def edit(self) -> None:
        old = self.parsed
        self.k += 1
        body = f"    value = {self.k}"
        anchor = old.index.anchor_strings[self.line - 1]
        params = msgspec.convert(
            {
                "path": "f.py",
                "operations": [{"op": "replace_line", "hash": anchor, "content": body}],
            },
            EditParams,
        )
        plan = plan_edit(old.doc.lines, params.operations, old.index, old.anchors)
        doc = apply_plan(old.doc, plan)
        data = render(doc).encode("utf-8", "surrogatepass")
        sha = hashlib.sha256(data).hexdigest()
        changes = [(s.start, s.end, len(s.new_lines)) for s in plan.splices]
        new = self.cache.put(sha, doc, old, changes) if self.incremental else Parsed(doc)
        anchored_diff(old.doc.lines, doc.lines, new.anchors)
        first = changed_region(old.doc.lines, doc.lines).start
        valid_through(old, new, first)
        self.parsed = new


def valid_through(old: Parsed, new: Parsed, first: int) -> int:
    """As handlers.writing computes it: the first line before `first` whose anchor changed."""
    before, after = old.index.anchor_strings, new.index.anchor_strings
    i = 0
    while i + 256 <= first and before[i : i + 256] == after[i : i + 256]:
        i += 256
    while i < first and before[i] == after[i]:
        i += 1
    return i


def _edit_floor(text: str) -> Any:
    lines = text.split("\n")
    line = value_line(len(lines) // 2)
    state = {"k": 0}

    def run() -> None:
        state["k"] += 1
        lines[line - 1] = f"    value = {state['k']}"
        hashlib.sha256("\n".join(lines).encode()).hexdigest()

    return run


def edit_rows(
    sizes: tuple[int, ...] = (1000, 10_000, 100_000), rounds: int = 30
) -> list[dict[str, Any]]:
    """Per file size: p50/p99 (µs) of the floor, the incremental and the from-scratch edit."""
    rows = []
    for size in sizes:
        text = python_source(size)
        incremental, scratch = _Editor(text, True), _Editor(text, False)
        n = rounds if size < 100_000 else max(5, rounds // 3)
        got = interleaved(
            {"floor": _edit_floor(text), "incremental": incremental.edit, "scratch": scratch.edit},
            n,
            warmup=2,
        )
        rows.append(_row(f"edit {size} lines", got, "floor"))
    return rows


def _read_floor(data: bytes) -> Any:
    def run() -> None:
        for body in data.decode().split("\n"):
            xxhash.xxh3_64_hexdigest(body.encode())

    return run


def _read_ours(cache: TextCache, data: bytes) -> Any:
    """A read of an unchanged file: the cache hit (the daemon keys it by content hash,
    so it hashes the bytes), the content, the anchors and marks cut, the reply encoded."""

    def run() -> bytes:
        sha = hashlib.sha256(data).hexdigest()
        parsed = cache.parsed(sha, lambda: data.decode())
        return msgspec.msgpack.encode(_result(parsed, sha, len(data)))

    return run


def _result(parsed: Parsed, sha: str, size: int) -> ReadFileResult:
    doc = parsed.doc
    content = "".join(map(str.__add__, doc.lines, doc.endings))
    result = ReadFileResult(
        file_path="f.py", version=1, sha256=sha, line_count=doc.line_count, content=content,
        start_line=1, end_line=doc.line_count, truncated=False, eol=doc.eol_style, bom=doc.bom,
        final_newline=doc.final_newline, size=size,
    )  # fmt: skip
    # set after construction, as the daemon does (the client builds `lines` and
    # `rendered` from them on first use: see ReadFileResult)
    result.anchors, result.marks = parsed.index.anchor_strings[:], parsed.marks
    return result


def read_rows(lines: int = 1000, rounds: int = 200) -> list[dict[str, Any]]:
    data = python_source(lines).encode()
    cache = TextCache()
    got = interleaved({"floor": _read_floor(data), "ours": _read_ours(cache, data)}, rounds)
    return [_row(f"read_file(hashes) {lines} lines", got, "floor")]


def reply_size(lines: int = 600) -> dict[str, Any]:
    """Bytes of a whole-file read reply (msgpack) against the file, in the lean shape and
    in the former one (content + a row object per line + rendered rows)."""
    text = python_source(lines)
    data = text.encode()
    parsed = Parsed(parse(text))
    lean = _result(parsed, hashlib.sha256(data).hexdigest(), len(data))
    old = msgspec.structs.replace(lean, anchors=None, marks=None)
    old.lines = [
        AnchoredLine(
            line=a.line, hash=a.anchor, quality=a.quality, text=b, kind=a.kind, unique=a.unique
        )
        for a, b in zip(parsed.anchors, parsed.doc.lines, strict=True)
    ]
    old.rendered = parsed.index.render(1, parsed.doc.line_count)
    lean_bytes, old_bytes = len(msgspec.msgpack.encode(lean)), len(msgspec.msgpack.encode(old))
    return {
        "file_bytes": len(data),
        "reply_bytes": lean_bytes,
        "ratio": round(lean_bytes / len(data), 2),
        "former_reply_bytes": old_bytes,
        "former_ratio": round(old_bytes / len(data), 2),
    }


def _row(measure: str, got: dict[str, Any], floor: str) -> dict[str, Any]:
    base = got[floor].p50
    return {
        "measure": measure,
        **{f"{name}_p50_us": round(s.p50, 1) for name, s in got.items()},
        **{f"{name}_p99_us": round(s.p99, 1) for name, s in got.items()},
        **{f"{name}_ratio": round(s.p50 / base, 2) for name, s in got.items() if name != floor},
    }


def profile(size: int) -> None:
    """cProfile of 20 incremental edits of a `size`-line file, top 25 by cumulative time."""
    editor = _Editor(python_source(size), True)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(20):
        editor.edit()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--profile", type=int, default=0, metavar="LINES")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    sizes = tuple(int(s) for s in args.sizes.split(","))
    rows = [*edit_rows(sizes, args.rounds), *read_rows(), {"reply_size": reply_size()}]
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
