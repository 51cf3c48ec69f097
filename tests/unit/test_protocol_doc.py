"""docs/protocol.md is the wire contract: every envelope field, error code (under its
family), event kind, run-file field, read-only method, limit and the protocol version of
the code appear in it, so a client written from the page misses nothing."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import msgspec

from editjournal.client.library.errors import _BY_CODE
from editjournal.client.library.recovery import READ_ONLY_METHODS
from editjournal.daemon.files.workspace import DEFAULT_MAX_FILE_SIZE
from editjournal.daemon.model.idempotency import MAX_ANSWERS
from editjournal.daemon.runtime.server import MAX_BATCH
from editjournal.daemon.settings.limits import DEFAULT_FILE_LINES, MIB, Limits
from editjournal.schemas.endpoint import Endpoint
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.events import AnyEvent
from editjournal.schemas.tools import MAX_OPERATIONS, MAX_PATHS_PER_READ, MAX_READ_BYTES
from editjournal.schemas.wire import (
    MAX_AGENT_LEN,
    PROTOCOL_VERSION,
    Error,
    PublishedEvent,
    Request,
    Response,
)

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "protocol.md").read_text()
_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def section(title: str) -> str:
    """The text under `## title`, up to the next `## ` heading."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert found, f"docs/protocol.md has no section '## {title}'"
    return found.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row in `text`; header rows and rules left out."""
    lines = [line.strip() for line in text.splitlines() if line.startswith("|")]
    rows = []
    for i, line in enumerate(lines):
        is_header = i + 1 < len(lines) and _RULE.match(lines[i + 1])
        if not _RULE.match(line) and not is_header:
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def names(text: str) -> list[str]:
    """The `code`-quoted words of `text`, in order."""
    return re.findall(r"`([^`]+)`", text)


def flat(text: str) -> str:
    """`text` with every run of whitespace one space: phrases survive rewrapping."""
    return " ".join(text.split())


def first_column(title: str) -> list[str]:
    return [names(row[0])[0] for row in table_rows(section(title)) if names(row[0])]


def fields(struct: type[msgspec.Struct]) -> set[str]:
    return set(struct.__struct_fields__)


def test_the_request_table_has_exactly_the_request_fields():
    assert sorted(first_column("Request")) == sorted(fields(Request))


def test_the_response_table_has_exactly_the_response_fields_and_the_error_map_is_spelt_out():
    assert sorted(first_column("Response")) == sorted(fields(Response))
    assert fields(Error) <= set(names(section("Response")))


def test_every_error_code_is_in_the_table_once_under_its_clients_family():
    family = ""
    documented: dict[str, str] = {}
    for row in table_rows(section("Error codes")):
        family = names(row[0])[0] if names(row[0]) else family
        code = names(row[1])[0]
        assert code not in documented, f"{code} is in the table twice"
        documented[code] = family
    assert set(documented) == {code.value for code in ErrorCode}
    wrong = {c: f for c, f in documented.items() if _BY_CODE[c].__name__ != f}
    assert wrong == {}, "codes listed under another family than client/library/errors.py raises"


def test_every_event_kind_is_in_the_events_table():
    kinds = {event.__struct_config__.tag for event in typing.get_args(AnyEvent)}
    assert sorted(first_column("Events (PUB)")) == sorted(kinds)


def test_the_published_event_and_its_topic_are_spelt_out():
    text = section("Events (PUB)")
    assert fields(PublishedEvent) <= set(names(text))
    assert "NUL" in text and "[topic," in text


def test_every_run_file_field_is_documented():
    assert fields(Endpoint) <= set(names(section("Finding and trusting the daemon")))


def test_the_read_only_methods_are_the_ones_the_client_resends():
    line = re.search(r"^Read-only methods: (.*)$", section("Retrying"), re.M)
    assert line, "the Retrying section lists no read-only methods"
    assert set(names(line.group(1))) == READ_ONLY_METHODS


def test_the_versions_table_ends_at_the_current_protocol_version():
    versions = [int(row[0]) for row in table_rows(section("Versions"))]
    assert versions == list(range(1, PROTOCOL_VERSION + 1))
    assert f"[protocol version](#versions) {PROTOCOL_VERSION}:" in flat(DOC)


def test_the_limits_are_the_codes():
    limits = flat(section("Limits"))
    frame = Limits.for_file_size(DEFAULT_MAX_FILE_SIZE).frame_bytes
    for stated in (
        f"{frame // MIB} MiB by default",
        f"({DEFAULT_MAX_FILE_SIZE // MIB} MiB)",
        f"({DEFAULT_FILE_LINES:,})",
        f"| {MAX_OPERATIONS:,} |",
        f"| {MAX_PATHS_PER_READ:,} |",
        f"| {MAX_READ_BYTES // MIB} MiB;",
        f"| {MAX_AGENT_LEN} characters |",
    ):
        assert stated in limits, stated
    key = next(f for f in msgspec.inspect.type_info(Request).fields if f.name == "idempotency_key")
    assert isinstance(key.type, msgspec.inspect.UnionType)
    assert {t.max_length for t in key.type.types if isinstance(t, msgspec.inspect.StrType)} == {
        MAX_AGENT_LEN
    }
    assert f"up to {MAX_BATCH})" in flat(section("Ordering and durability"))
    assert f"The last {MAX_ANSWERS:,} keys" in flat(section("Idempotency keys"))
