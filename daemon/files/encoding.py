"""Is it UTF-8 text, text in another encoding, or binary data?

The daemon serves UTF-8 text only. When a file's bytes are not UTF-8, a person
needs to know which of two different things they hold: text in another
encoding (Latin-1, windows-1252, UTF-16, Shift_JIS ...), which they can
convert, or binary data, which they should leave alone. Guessing between the
two is charset-normalizer's job (a maintained detector, already a dependency);
this module adds what a detector cannot know: a byte-order mark is a statement,
not a guess; NUL bytes mean binary; and a "text" with control characters in it
is binary whatever the detector says.

`utf8_text` is the one test of "is this served text", for every caller: the
workspace's reads and writes, and its fingerprints for the watcher. The
detector runs only in `refusal`, on bytes that already failed `utf8_text`:
never for a file that decodes, and never for the watcher, which only needs to
know that a file is not text. `is_utf8_name` asks the same of a file's name:
the journal and the protocol speak UTF-8, so the watcher leaves other names
alone. This module reads no files and knows no paths beyond the name it puts in
a message.
"""

from __future__ import annotations

import codecs
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from editjournal.schemas.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

# Byte-order marks, longest first: UTF-32LE's begins with UTF-16LE's.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "UTF-32BE"),
    (codecs.BOM_UTF16_LE, "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "UTF-16BE"),
)
# What the detector may name, most common first, with the names people (and
# iconv, and Python) know them by. A short sample decodes the same in many
# single-byte encodings; among those the detector ranks alike, the commonest wins,
# so a French file is called windows-1252, not the first of a dozen equals (cp1006).
_KNOWN: dict[str, str] = {
    "cp1252": "windows-1252",
    "iso8859-1": "ISO-8859-1",
    "shift_jis": "Shift_JIS",
    "cp932": "CP932",
    "euc_jp": "EUC-JP",
    "gb18030": "GB18030",
    "gbk": "GBK",
    "big5": "Big5",
    "euc_kr": "EUC-KR",
    "cp949": "CP949",
    "cp1251": "windows-1251",
    "koi8-r": "KOI8-R",
    "cp1250": "windows-1250",
    "cp1253": "windows-1253",
    "cp1254": "windows-1254",
    "cp1255": "windows-1255",
    "cp1256": "windows-1256",
    "cp1257": "windows-1257",
    "cp1258": "windows-1258",
    "cp874": "windows-874",
}
_PREFERENCE = {name: rank for rank, name in enumerate(_KNOWN)}
_NOT_A_GUESS = frozenset({"ascii", "utf-8", "utf-16", "utf-32"})  # without a BOM: no
_TIED_CHAOS = 0.1  # the detector's "mess" ratios this close count as a tie
_TIED_COHERENCE = 0.05
_SAMPLE_BYTES = 256 * 1024  # enough to tell; a whole 8 MiB file costs ~0.2 s
# C0 and C1 controls but tab, line feed, vertical tab, form feed, carriage return
# and escape (ANSI colours in logs): real text in any encoding has (nearly) none.
_CONTROL = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_MAX_CONTROL_RATIO = 0.01


@dataclass(frozen=True, slots=True)
class Guess:
    """The encoding some bytes look like, as named to a person and to iconv."""

    encoding: str  # e.g. "windows-1252", "UTF-16LE"
    convert_from: str  # what `iconv -f` should be told: "UTF-16" also drops the BOM
    bom: bool


def utf8_text(data: bytes) -> str | None:
    """The text, when `data` is UTF-8 without NUL bytes; else None.

    NUL is valid UTF-8 but no text file holds one: it marks binary data (and
    UTF-16/32). A UTF-8 BOM is kept, as "\\ufeff", so the bytes survive a rewrite.
    """
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")  # not utf-8-sig: see above
    except UnicodeDecodeError:
        return None


def is_utf8_name(name: str) -> bool:
    """False for a file name whose bytes are not UTF-8 (decoded with surrogate escapes):
    the journal and the protocol speak UTF-8, so such files are left alone."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refusal(data: bytes, rel: str) -> ToolError:
    """Why `data`, which `utf8_text` refused, is not served: `not_utf8` or `binary_file`.

    A UTF-16/32 byte-order mark (with content that decodes) is text in that
    encoding; otherwise NUL bytes mean binary; otherwise the detector decides.
    """
    offset = _first_invalid(data)
    guess = _by_bom(data)
    if guess is None and b"\x00" in data:
        nul = data.index(b"\x00")
        return ToolError(
            ErrorCode.BINARY_FILE,
            f"{rel} contains a NUL byte at offset {nul}",
            {"path": rel, "offset": nul, "reason": "nul byte"},
        )
    guess = guess or detect(data)
    if guess is None:
        return ToolError(
            ErrorCode.BINARY_FILE,
            f"{rel} is not valid UTF-8 at byte offset {offset}, and does not look like"
            " text in another encoding",
            {"path": rel, "offset": offset, "reason": "invalid utf-8"},
        )
    return _not_utf8(rel, guess, offset)


def detect(data: bytes) -> Guess | None:
    """The text encoding `data` (no BOM, not UTF-8) looks like; None when it looks binary."""
    # imported here: only a file that is not UTF-8 needs the detector, and loading it
    # is a noticeable part of every daemon's and command's start
    from charset_normalizer import from_bytes

    sample = _sample(data)
    matches = [m for m in from_bytes(sample) if _plausible(m)]
    if not matches:
        return None
    name = _commonest_of_equals(matches)
    shown = _KNOWN.get(name, name.upper())
    return Guess(shown, shown, bom=False)


def _by_bom(data: bytes) -> Guess | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                return None  # a BOM followed by garbage: judged like any other bytes
            return Guess(encoding, encoding[:6], bom=True)
    return None


def _first_invalid(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return data.find(b"\x00")  # valid UTF-8: refused for its NUL byte


def _sample(data: bytes) -> bytes:
    """The head of a big file, cut after a line feed: no multi-byte character is split
    (0x0A is never part of one in the encodings guessed here; UTF-16/32 go by BOM)."""
    if len(data) <= _SAMPLE_BYTES:
        return data
    head = data[:_SAMPLE_BYTES]
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut > 0 else head


def _plausible(match: CharsetMatch) -> bool:
    if _canonical(match.encoding) in _NOT_A_GUESS:
        return False
    text = str(match)
    return len(_CONTROL.findall(text)) <= len(text) * _MAX_CONTROL_RATIO


def _commonest_of_equals(matches: list[CharsetMatch]) -> str:
    """The detector's best, or the commonest encoding it ranks about as well."""
    best = matches[0]
    names = [_canonical(best.encoding)]
    for match in matches:
        tied = match.chaos <= best.chaos + _TIED_CHAOS and (
            match.coherence >= best.coherence - _TIED_COHERENCE
        )
        if tied:
            names += [_canonical(n) for n in match.could_be_from_charset]
    known = [n for n in names if n in _PREFERENCE]
    return min(known, key=_PREFERENCE.__getitem__) if known else names[0]


def _canonical(name: str) -> str:
    """Python's own name for a codec ("latin_1" -> "iso8859-1"); utf_16_le -> utf-16."""
    try:
        found = codecs.lookup(name).name
    except LookupError:
        return name
    return found[:6] if found.startswith(("utf-16", "utf-32")) else found


def _not_utf8(rel: str, guess: Guess, offset: int) -> ToolError:
    if guess.bom:
        what = f"{rel} is {guess.encoding} text (it starts with a byte-order mark), not UTF-8"
    else:
        what = f"{rel} is not UTF-8 (byte {offset} is invalid); it looks like {guess.encoding} text"
    quoted, converted = shlex.quote(rel), shlex.quote(rel + ".utf8")
    return ToolError(
        ErrorCode.NOT_UTF8,
        f"{what}; only UTF-8 text is served",
        {"path": rel, "encoding": guess.encoding, "offset": offset},
        f"convert it to UTF-8 outside editjournal, e.g. `iconv -f {guess.convert_from}"
        f" -t UTF-8 {quoted} > {converted} && mv {converted} {quoted}`, or leave it alone",
    )
