"""Workspace confinement, exact reads and atomic writes, on real files under tmp_path."""

from __future__ import annotations

import codecs
import hashlib
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import charset_normalizer
import pytest

from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.pathjudge import STATE_DIR_NAME
from editjournal.daemon.files.workspace import DEFAULT_MAX_FILE_SIZE, Workspace
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.units import limit_that_fits, parse_size

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file semantics")
MIB = 1024 * 1024


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_bytes(b"secret\n")
    return path


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def expect(code: ErrorCode, func: object, *args: object) -> ToolError:
    """Call func(*args), assert it raises a ToolError with `code`, return it."""
    with pytest.raises(ToolError) as info:
        func(*args)  # type: ignore[operator]
    assert info.value.code is code, info.value
    return info.value


def temp_litter(directory: Path) -> list[str]:
    return [p.name for p in directory.rglob(".editjournal-tmp-*")]


# ------------------------------------------------------------------ construction


def test_root_and_state_dir_are_resolved(root: Path) -> None:
    ws = Workspace(str(root / "." / ""))
    assert ws.root == root.resolve()
    assert ws.root.is_absolute()
    assert ws.state_dir == ws.root / STATE_DIR_NAME
    assert ws.max_file_size == DEFAULT_MAX_FILE_SIZE == 8 * 1024 * 1024


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    expect(ErrorCode.INVALID_PARAMS, Workspace, tmp_path / "missing")


# ---------------------------------------------------------------- confinement


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("sub/b.txt", "sub/b.txt"),
        ("sub/../a.txt", "a.txt"),
        ("sub//./b.txt", "sub/b.txt"),
        ("new/dir/c.txt", "new/dir/c.txt"),
    ],
)
def test_relative_paths(ws: Workspace, given: str, expected: str) -> None:
    (ws.root / "sub").mkdir()
    assert ws.relative(given) == expected


def test_absolute_path_inside_is_accepted(ws: Workspace) -> None:
    assert ws.relative(str(ws.root / "sub" / "x.py")) == "sub/x.py"


@posix_only
def test_absolute_path_through_symlinked_root_is_accepted(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    ws = Workspace(alias)
    assert ws.root == root.resolve()
    assert ws.relative(str(alias / "x.py")) == "x.py"
    assert ws.relative(str(root / "x.py")) == "x.py"


def test_absolute_returns_path_under_root(ws: Workspace) -> None:
    assert ws.absolute("sub/../a.txt") == ws.root / "a.txt"
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.absolute, "../x")


@pytest.mark.parametrize("given", ["..", "../x.txt", "a/../../x.txt", "sub/../../../etc/passwd"])
def test_dotdot_escape_is_refused(ws: Workspace, given: str) -> None:
    exc = expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, given)
    assert exc.details == {"path": given, "workspace": str(ws.root)}


def test_absolute_path_elsewhere_is_refused(ws: Workspace, outside: Path) -> None:
    given = str(outside / "secret.txt")
    exc = expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, given)
    assert exc.details == {"path": given, "workspace": str(ws.root)}
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.read, given)


def test_sibling_with_common_prefix_is_outside(ws: Workspace, tmp_path: Path) -> None:
    sibling = tmp_path / "ws2"
    sibling.mkdir()
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, str(sibling / "a.txt"))


@posix_only
def test_symlinked_file_pointing_outside_is_refused(ws: Workspace, outside: Path) -> None:
    (ws.root / "link.txt").symlink_to(outside / "secret.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, "link.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.read, "link.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.write_atomic, "link.txt", b"pwned\n")
    assert (outside / "secret.txt").read_bytes() == b"secret\n"


@posix_only
def test_dangling_symlink_pointing_outside_is_refused(ws: Workspace, outside: Path) -> None:
    (ws.root / "link.txt").symlink_to(outside / "new.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.write_atomic, "link.txt", b"x\n")
    assert not (outside / "new.txt").exists()


@posix_only
def test_symlinked_directory_pointing_outside_is_refused(ws: Workspace, outside: Path) -> None:
    (ws.root / "linkdir").symlink_to(outside, target_is_directory=True)
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, "linkdir/secret.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, "linkdir/new.txt")
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.write_atomic, "linkdir/new.txt", b"x\n")
    assert not (outside / "new.txt").exists()


@posix_only
def test_symlinked_directory_dotdot_cannot_escape(ws: Workspace, outside: Path) -> None:
    # Lexically "linkdir/../x" is "x", but the kernel resolves linkdir first.
    (ws.root / "linkdir").symlink_to(outside, target_is_directory=True)
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.relative, "linkdir/../outside/secret.txt")


@posix_only
def test_symlink_inside_to_inside_works(ws: Workspace) -> None:
    (ws.root / "real.txt").write_bytes(b"hello\n")
    (ws.root / "alias.txt").symlink_to("real.txt")
    (ws.root / "dir").mkdir()
    (ws.root / "dirlink").symlink_to("dir", target_is_directory=True)
    assert ws.relative("alias.txt") == "alias.txt"  # named as the caller named it
    assert ws.read("alias.txt").data == b"hello\n"
    assert ws.read("alias.txt").path == "alias.txt"
    assert ws.relative("dirlink/f.txt") == "dirlink/f.txt"


@pytest.mark.parametrize(
    "given", [STATE_DIR_NAME, f"{STATE_DIR_NAME}/journal.db", f"./{STATE_DIR_NAME}/x/../y"]
)
def test_state_dir_is_refused(ws: Workspace, given: str) -> None:
    ws.state_dir.mkdir()
    exc = expect(ErrorCode.PERMISSION_DENIED, ws.relative, given)
    assert "daemon's own state" in exc.message
    expect(ErrorCode.PERMISSION_DENIED, ws.write_atomic, given, b"x")


def test_state_dir_by_absolute_path_is_refused(ws: Workspace) -> None:
    expect(ErrorCode.PERMISSION_DENIED, ws.read, str(ws.state_dir / "journal.db"))


@posix_only
def test_symlink_into_state_dir_is_refused(ws: Workspace) -> None:
    ws.state_dir.mkdir()
    (ws.state_dir / "journal.db").write_bytes(b"db")
    (ws.root / "sneaky").symlink_to(f"{STATE_DIR_NAME}/journal.db")
    expect(ErrorCode.PERMISSION_DENIED, ws.read, "sneaky")
    expect(ErrorCode.PERMISSION_DENIED, ws.write_atomic, "sneaky", b"x")
    assert (ws.state_dir / "journal.db").read_bytes() == b"db"


def test_names_merely_starting_with_state_dir_name_are_fine(ws: Workspace) -> None:
    assert ws.relative(f"{STATE_DIR_NAME}.toml") == f"{STATE_DIR_NAME}.toml"
    assert ws.relative(f"docs/{STATE_DIR_NAME}/x") == f"docs/{STATE_DIR_NAME}/x"


@pytest.mark.parametrize("given", [".", "./", "sub/..", "ROOT"])
def test_root_itself_is_a_directory(ws: Workspace, given: str) -> None:
    given = str(ws.root) if given == "ROOT" else given
    expect(ErrorCode.IS_A_DIRECTORY, ws.relative, given)


@pytest.mark.parametrize("given", ["", "a\x00b.txt"])
def test_empty_or_nul_path_is_invalid(ws: Workspace, given: str) -> None:
    expect(ErrorCode.INVALID_PARAMS, ws.relative, given)


def test_non_string_path_is_invalid(ws: Workspace) -> None:
    expect(ErrorCode.INVALID_PARAMS, ws.relative, 42)


# -------------------------------------------------------------------- reading


def test_read_returns_exact_snapshot(ws: Workspace) -> None:
    data = "héllo\nwörld\n".encode()
    (ws.root / "a.txt").write_bytes(data)
    snap = ws.read("a.txt")
    assert isinstance(snap, FileSnapshot)
    assert snap.path == "a.txt"
    assert snap.data == data
    assert snap.text == "héllo\nwörld\n"
    assert snap.sha256 == hashlib.sha256(data).hexdigest()
    assert snap.size == len(data)
    assert snap.mtime_ns == (ws.root / "a.txt").stat().st_mtime_ns


def test_read_nested_path_is_posix(ws: Workspace) -> None:
    (ws.root / "a" / "b").mkdir(parents=True)
    (ws.root / "a" / "b" / "c.txt").write_bytes(b"x")
    assert ws.read("a/b/c.txt").path == "a/b/c.txt"


def test_read_missing_file(ws: Workspace) -> None:
    exc = expect(ErrorCode.FILE_NOT_FOUND, ws.read, "nope.txt")
    assert exc.details["path"] == "nope.txt"


def test_read_under_a_file_is_missing(ws: Workspace) -> None:
    (ws.root / "f.txt").write_bytes(b"x")
    expect(ErrorCode.FILE_NOT_FOUND, ws.read, "f.txt/child")


def test_read_directory(ws: Workspace) -> None:
    (ws.root / "sub").mkdir()
    expect(ErrorCode.IS_A_DIRECTORY, ws.read, "sub")


@posix_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_fifo_is_refused_without_blocking(ws: Workspace) -> None:
    os.mkfifo(ws.root / "pipe")
    exc = expect(ErrorCode.BINARY_FILE, ws.read, "pipe")
    assert exc.details["reason"] == "not a regular file"


def test_read_binary_with_nul(ws: Workspace) -> None:
    (ws.root / "bin").write_bytes(b"abc\x00def")
    exc = expect(ErrorCode.BINARY_FILE, ws.read, "bin")
    assert exc.details["path"] == "bin"
    assert exc.details["offset"] == 3


# ------------------------------------------------- text that is not UTF-8, binary data

WORDS = "Grüße aus München: «schöne Straße», déjà vu.\nZweite Zeile.\n"
CP1252 = "The café’s menu — “soupe du jour” for 5 €… it’s très bon.\nSee you!\n"
NOT_UTF8 = {  # name -> (bytes on disk, encoding named, text once converted to UTF-8)
    "latin-1": (WORDS.encode("latin-1"), "windows-1252", WORDS),
    "cp1252": (CP1252.encode("cp1252"), "windows-1252", CP1252),
    "utf-16-le-bom": (codecs.BOM_UTF16_LE + WORDS.encode("utf-16-le"), "UTF-16LE", WORDS),
    "utf-16-be-bom": (codecs.BOM_UTF16_BE + WORDS.encode("utf-16-be"), "UTF-16BE", WORDS),
    "utf-32-le-bom": (codecs.BOM_UTF32_LE + WORDS.encode("utf-32-le"), "UTF-32LE", WORDS),
    "shift-jis": (
        "日本語のテキストです。\n二行目。\n".encode("shift_jis"),
        "Shift_JIS",
        "日本語のテキストです。\n二行目。\n",
    ),
    "cp1251": (
        "Привет, мир! Это текст.\n".encode("cp1251"),
        "windows-1251",
        "Привет, мир! Это текст.\n",
    ),
}


def first_invalid_utf8(data: bytes) -> int:
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    return info.value.start


@pytest.mark.parametrize("name", list(NOT_UTF8))
def test_text_in_another_encoding_is_not_utf8_naming_it(ws: Workspace, name: str) -> None:
    data, encoding, _ = NOT_UTF8[name]
    (ws.root / "f.txt").write_bytes(data)
    exc = expect(ErrorCode.NOT_UTF8, ws.read, "f.txt")
    assert exc.details == {
        "path": "f.txt",
        "encoding": encoding,
        "offset": first_invalid_utf8(data),
    }
    assert encoding in exc.message and "f.txt" in exc.message
    assert f"iconv -f {encoding[:6] if encoding.startswith('UTF') else encoding}" in (
        exc.suggested_action
    )


def test_not_utf8_offset_is_the_first_invalid_byte(ws: Workspace) -> None:
    (ws.root / "latin1.txt").write_bytes(b"ok line\ncaf\xe9\n")
    exc = expect(ErrorCode.NOT_UTF8, ws.read, "latin1.txt")
    assert exc.details == {"path": "latin1.txt", "encoding": "windows-1252", "offset": 11}


@posix_only
@pytest.mark.skipif(shutil.which("iconv") is None, reason="needs iconv")
@pytest.mark.parametrize("name", list(NOT_UTF8))
def test_the_suggested_conversion_command_works(ws: Workspace, name: str) -> None:
    data, _, text = NOT_UTF8[name]
    (ws.root / "my file.txt").write_bytes(data)
    command = expect(ErrorCode.NOT_UTF8, ws.read, "my file.txt").suggested_action
    shell = command[command.index("`") + 1 : command.rindex("`")]
    subprocess.run(shell, shell=True, cwd=ws.root, check=True, timeout=30)
    assert ws.read("my file.txt").text == text


def noise(seed: int, size: int) -> bytes:
    """Random bytes without NUL: binary data that only the detector can call binary."""
    rng = random.Random(seed)
    return bytes(rng.randrange(1, 256) for _ in range(size))


BINARY = {  # name -> bytes that no text encoding explains
    "random": noise(7, 4096),
    "png-like": b"\x89PNG\r\n\x1a\n" + noise(8, 900),
    "utf-8 with a NUL": "café\x00crème\n".encode(),
    "utf-16 without a BOM": WORDS.encode("utf-16-le"),
    "a BOM then bytes that are not UTF-16": codecs.BOM_UTF16_LE + b"a\x00\x00",
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_data_stays_binary(ws: Workspace, name: str) -> None:
    (ws.root / "blob").write_bytes(BINARY[name])
    exc = expect(ErrorCode.BINARY_FILE, ws.read, "blob")
    assert "encoding" not in exc.details
    nul = BINARY[name].find(b"\x00")
    if nul >= 0:
        assert exc.details == {"path": "blob", "offset": nul, "reason": "nul byte"}
    else:
        assert exc.details["reason"] == "invalid utf-8"


def test_utf8_with_a_bom_still_reads(ws: Workspace) -> None:
    data = codecs.BOM_UTF8 + WORDS.encode()
    (ws.root / "bom.txt").write_bytes(data)
    assert ws.read("bom.txt").text == "\ufeff" + WORDS


@pytest.mark.parametrize("name", [*NOT_UTF8, *BINARY])
def test_reads_writes_and_fingerprints_judge_the_same_bytes_alike(ws: Workspace, name: str) -> None:
    data = NOT_UTF8[name][0] if name in NOT_UTF8 else BINARY[name]
    (ws.root / "f.txt").write_bytes(data)
    read = expect(
        ErrorCode.NOT_UTF8 if name in NOT_UTF8 else ErrorCode.BINARY_FILE, ws.read, "f.txt"
    )
    written = expect(read.code, ws.write_atomic, "f.txt", data)
    assert (written.details, written.message) == (read.details, read.message)
    found = ws.fingerprint("f.txt")
    assert found is not None and found.text is None
    assert found.sha256 == hashlib.sha256(data).hexdigest()


def test_the_detector_runs_only_for_bytes_that_are_not_utf8(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """charset-normalizer (not ours) swapped for a tripwire: a file that decodes never
    meets it, nor does the watcher's fingerprint of a file that does not."""
    calls: list[int] = []

    def tripwire(data: bytes) -> object:
        calls.append(len(data))
        raise AssertionError("the detector ran")

    monkeypatch.setattr(charset_normalizer, "from_bytes", tripwire)  # read at each call
    (ws.root / "ok.txt").write_bytes(WORDS.encode())
    (ws.root / "latin1.txt").write_bytes(WORDS.encode("latin-1"))
    assert ws.read("ok.txt").text == WORDS
    found = ws.fingerprint("latin1.txt")
    assert found is not None and found.text is None
    assert calls == []
    with pytest.raises(AssertionError, match="the detector ran"):
        ws.read("latin1.txt")
    assert calls == [len(WORDS)]


def test_the_detector_sees_only_the_head_of_a_big_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole 8 MB file costs the daemon's one thread ~0.2 s per refusal; its head
    (cut after a line feed, so no character is split) says as much."""
    seen: list[bytes] = []
    real = charset_normalizer.from_bytes

    def spy(data: bytes) -> Any:
        seen.append(data)
        return real(data)

    monkeypatch.setattr(charset_normalizer, "from_bytes", spy)
    ws = Workspace(root, max_file_size=16 * MIB)
    rng = random.Random(3)
    words = ["Grüße", "München", "Straße", "schöne", "déjà", "vu", "café", "crème"]
    words += ["brûlée", "naïve", "façade", "Zoë"]
    lines = (" ".join(rng.choices(words, k=10)) + f" {i}\n" for i in range(120_000))
    data = "".join(lines).encode("latin-1")  # ~8 MB
    (root / "big.txt").write_bytes(data)
    exc = expect(ErrorCode.NOT_UTF8, ws.read, "big.txt")
    assert exc.details["encoding"] == "windows-1252"
    assert [len(sample) <= 256 * 1024 for sample in seen] == [True]
    assert data.startswith(seen[0]) and seen[0].endswith(b"\n")


# --------------------------------------------------------------------- size limit


def test_read_too_large(root: Path) -> None:
    ws = Workspace(root, max_file_size=10)
    (root / "ten.txt").write_bytes(b"0123456789")
    (root / "big.txt").write_bytes(b"0123456789X")
    assert ws.read("ten.txt").size == 10
    exc = expect(ErrorCode.FILE_TOO_LARGE, ws.read, "big.txt")
    assert exc.details == {"path": "big.txt", "size": 11, "limit": 10}
    assert exc.message == "big.txt is 11 B, over the 10 B limit"


def test_too_large_speaks_in_units_and_names_a_limit_that_fits(root: Path) -> None:
    ws = Workspace(root)  # the default limit, 8 MiB
    with open(root / "big.log", "wb") as sparse:  # 12.4 MB without writing them
        sparse.truncate(12_400_000)
    exc = expect(ErrorCode.FILE_TOO_LARGE, ws.read, "big.log")
    assert exc.message == "big.log is 12.4 MB, over the 8 MiB limit"
    assert exc.details == {"path": "big.log", "size": 12_400_000, "limit": DEFAULT_MAX_FILE_SIZE}
    assert exc.suggested_action == (
        "restart the daemon with a higher limit:"
        " editjournal stop && editjournal start --max-file-size 16MiB"
    )


@pytest.mark.parametrize(
    ("size", "fits"),
    [
        (1, "1MiB"),
        (2048, "1MiB"),
        (MIB, "1MiB"),
        (MIB + 1, "2MiB"),
        (12_400_000, "16MiB"),
        (16 * MIB, "16MiB"),
        (16 * MIB + 1, "32MiB"),
        (3 * 1024 * MIB, "4096MiB"),
    ],
)
def test_limit_that_fits_is_a_power_of_two_mib_at_least_the_size(size: int, fits: str) -> None:
    assert limit_that_fits(size) == fits
    assert parse_size(fits) >= size


NOBODY = 65534


def error_code_as_nobody(ws: Workspace, rel: str) -> str:
    """`ws.read(rel)` in a forked child that has dropped root (root reads anything, so
    a permission error only shows for an unprivileged reader); its error code, or "ok"."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = "crash"
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            ws.read(rel)
            code = "ok"
        except ToolError as e:
            code = e.code.value
        finally:
            os.write(write_end, code.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


@posix_only
def test_read_permission_denied() -> None:
    # outside pytest's 0700 temp tree, so that the unprivileged child can reach it
    with tempfile.TemporaryDirectory(prefix="editjournal-perm-") as top:
        root = Path(top)
        root.chmod(0o755)
        ws = Workspace(root)
        (root / "open.txt").write_bytes(b"x")
        (root / "locked.txt").write_bytes(b"x")
        (root / "locked.txt").chmod(0)
        if os.geteuid() == 0:
            assert error_code_as_nobody(ws, "open.txt") == "ok"  # the child can read at all
            assert error_code_as_nobody(ws, "locked.txt") == ErrorCode.PERMISSION_DENIED.value
        else:
            expect(ErrorCode.PERMISSION_DENIED, ws.read, "locked.txt")


def test_stat(ws: Workspace) -> None:
    (ws.root / "a.txt").write_bytes(b"abc")
    result = ws.stat("a.txt")
    assert result is not None
    assert result.st_size == 3
    assert ws.stat("missing.txt") is None
    assert ws.stat("a.txt/under-a-file") is None
    expect(ErrorCode.PATH_OUTSIDE_WORKSPACE, ws.stat, "../x")


# ------------------------------------------------------------ exact round trip

ROUND_TRIPS = {
    "lf": b"one\ntwo\nthree\n",
    "crlf": b"one\r\ntwo\r\nthree\r\n",
    "cr": b"one\rtwo\rthree\r",
    "mixed": b"one\r\ntwo\nthree\rfour\n",
    "bom": b"\xef\xbb\xbfone\ntwo\n",
    "bom_crlf": b"\xef\xbb\xbfone\r\ntwo\r\n",
    "no_final_newline": b"one\ntwo",
    "crlf_no_final_newline": b"one\r\ntwo",
    "empty": b"",
    "only_newlines": b"\n\r\n\r",
    "unicode": "αβγ\n😀 emoji\r\n".encode(),
}


@pytest.mark.parametrize("data", list(ROUND_TRIPS.values()), ids=list(ROUND_TRIPS))
def test_read_preserves_exact_bytes(ws: Workspace, data: bytes) -> None:
    (ws.root / "f.txt").write_bytes(data)
    snap = ws.read("f.txt")
    assert snap.data == data
    assert snap.text == data.decode("utf-8")
    assert snap.text.encode("utf-8") == data


@pytest.mark.parametrize("data", list(ROUND_TRIPS.values()), ids=list(ROUND_TRIPS))
def test_write_then_read_round_trips(ws: Workspace, data: bytes) -> None:
    written = ws.write_atomic("f.txt", data)
    assert (ws.root / "f.txt").read_bytes() == data
    assert ws.read("f.txt") == written
    assert written.data == data


def test_bom_stays_in_text(ws: Workspace) -> None:
    (ws.root / "bom.txt").write_bytes(b"\xef\xbb\xbfx\n")
    assert ws.read("bom.txt").text == "\ufeffx\n"


# -------------------------------------------------------------------- writing


def test_write_atomic_returns_snapshot(ws: Workspace) -> None:
    snap = ws.write_atomic("a.txt", b"new\r\n")
    on_disk = ws.root / "a.txt"
    assert snap.path == "a.txt"
    assert snap.data == b"new\r\n"
    assert snap.text == "new\r\n"
    assert snap.sha256 == hashlib.sha256(b"new\r\n").hexdigest()
    assert snap.size == 5
    assert snap.mtime_ns == on_disk.stat().st_mtime_ns


def test_write_atomic_replaces_existing(ws: Workspace) -> None:
    (ws.root / "a.txt").write_bytes(b"old content that is longer\n")
    ws.write_atomic("a.txt", b"new\n")
    assert (ws.root / "a.txt").read_bytes() == b"new\n"
    assert temp_litter(ws.root) == []


def test_write_atomic_creates_parents(ws: Workspace) -> None:
    snap = ws.write_atomic("deep/er/still/x.txt", b"x\n")
    assert snap.path == "deep/er/still/x.txt"
    assert (ws.root / "deep" / "er" / "still" / "x.txt").read_bytes() == b"x\n"


def test_write_atomic_by_absolute_path(ws: Workspace) -> None:
    snap = ws.write_atomic(str(ws.root / "abs.txt"), b"y")
    assert snap.path == "abs.txt"
    assert (ws.root / "abs.txt").read_bytes() == b"y"


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o604])  # 0o444: read_only_file
def test_write_atomic_keeps_mode_bits(ws: Workspace, mode: int) -> None:
    path = ws.root / "script.sh"
    path.write_bytes(b"#!/bin/sh\n")
    path.chmod(mode)
    ws.write_atomic("script.sh", b"#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode


@pytest.fixture
def umask() -> Iterator[int]:
    previous = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(previous)


@posix_only
def test_write_atomic_new_file_mode_follows_umask(ws: Workspace, umask: int) -> None:
    ws.write_atomic("new.txt", b"x")
    assert stat.S_IMODE((ws.root / "new.txt").stat().st_mode) == 0o644 & ~umask


@posix_only
def test_write_atomic_writes_through_symlink(ws: Workspace) -> None:
    (ws.root / "real").mkdir()
    real = ws.root / "real" / "target.txt"
    real.write_bytes(b"old\n")
    real.chmod(0o640)
    link = ws.root / "link.txt"
    link.symlink_to("real/target.txt")
    snap = ws.write_atomic("link.txt", b"new\n")
    assert snap.path == "link.txt"
    assert link.is_symlink()
    assert os.readlink(link) == "real/target.txt"
    assert real.read_bytes() == b"new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert temp_litter(ws.root) == []


@posix_only
def test_write_atomic_through_dangling_symlink_inside(ws: Workspace) -> None:
    link = ws.root / "link.txt"
    link.symlink_to("sub/created.txt")
    ws.write_atomic("link.txt", b"x")
    assert link.is_symlink()
    assert (ws.root / "sub" / "created.txt").read_bytes() == b"x"


def test_write_atomic_leaves_no_temp_files(ws: Workspace) -> None:
    for i in range(5):
        ws.write_atomic("a.txt", f"v{i}\n".encode())
        ws.write_atomic(f"d/{i}.txt", b"x")
    assert temp_litter(ws.root) == []
    assert sorted(p.name for p in ws.root.iterdir()) == ["a.txt", "d"]


def test_write_atomic_onto_directory(ws: Workspace) -> None:
    (ws.root / "sub").mkdir()
    expect(ErrorCode.IS_A_DIRECTORY, ws.write_atomic, "sub", b"x")
    assert (ws.root / "sub").is_dir()
    assert temp_litter(ws.root) == []


def test_write_atomic_under_a_regular_file_fails_cleanly(ws: Workspace) -> None:
    parent = ws.root / "file.txt"
    parent.write_bytes(b"original\r\n")
    for given in ("file.txt/new.txt", "file.txt/deeper/new.txt"):
        exc = expect(ErrorCode.INVALID_PARAMS, ws.write_atomic, given, b"x")
        assert exc.details["path"] == given
    assert parent.read_bytes() == b"original\r\n"
    assert temp_litter(ws.root) == []
    assert [p.name for p in ws.root.iterdir()] == ["file.txt"]


@posix_only
def test_write_atomic_failure_mid_write_leaves_original(ws: Workspace) -> None:
    """Provoke a real write error (EFBIG) after the temp file exists; works as root too."""
    resource = pytest.importorskip("resource")
    import signal

    target = ws.root / "a.txt"
    target.write_bytes(b"original\n")
    target.chmod(0o600)
    before = target.stat()
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))
    try:
        with pytest.raises(ToolError) as info:
            ws.write_atomic("a.txt", b"x" * 64 * 1024)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert info.value.code is ErrorCode.INTERNAL_ERROR
    assert info.value.details["path"] == "a.txt"
    assert target.read_bytes() == b"original\n"
    assert target.stat().st_ino == before.st_ino
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert temp_litter(ws.root) == []


def test_write_atomic_refuses_content_that_is_not_utf8_text(ws: Workspace) -> None:
    (ws.root / "a.txt").write_bytes(b"keep\n")
    exc = expect(
        ErrorCode.NOT_UTF8, ws.write_atomic, "a.txt", "caf\xe9 cr\xe8me\n".encode("latin-1")
    )
    assert exc.details == {"path": "a.txt", "encoding": "windows-1252", "offset": 3}
    expect(ErrorCode.BINARY_FILE, ws.write_atomic, "a.txt", b"a\x00b")
    expect(ErrorCode.BINARY_FILE, ws.write_atomic, "a.txt", BINARY["random"])
    assert (ws.root / "a.txt").read_bytes() == b"keep\n"
    assert temp_litter(ws.root) == []


def test_write_atomic_refuses_too_large_content(root: Path) -> None:
    ws = Workspace(root, max_file_size=4)
    exc = expect(ErrorCode.FILE_TOO_LARGE, ws.write_atomic, "a.txt", b"12345")
    assert exc.details == {"path": "a.txt", "size": 5, "limit": 4}
    assert exc.message == "the new content of a.txt would be 5 B, over the 4 B limit"
    assert not (root / "a.txt").exists()


def test_write_atomic_refuses_str_content(ws: Workspace) -> None:
    expect(ErrorCode.INVALID_PARAMS, ws.write_atomic, "a.txt", "text")


def test_write_atomic_accepts_bytearray(ws: Workspace) -> None:
    snap = ws.write_atomic("a.txt", bytearray(b"ba\n"))
    assert type(snap.data) is bytes
    assert snap.data == b"ba\n"
