"""The authorship log's text (daemon/audit/authorlog.py) against the Git AI Standard
v3.0.0: the standard's own examples parse and render back, our session hash is the
reference implementation's, ranges round-trip, and a log carried across a rewrite
follows its lines; and `authorship` over journal versions built by hand attests the
agents' lines of a commit and no one else's."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.audit.authorlog import (
    MAX_PROMPT_TEXT,
    AuthorshipLog,
    NoteError,
    agent_id,
    carried,
    format_ranges,
    key_of,
    line_map,
    merged,
    parse,
    parse_ranges,
    prompts_in,
    render,
    session_key,
)
from editjournal.daemon.audit.authorship import (
    CommittedFile,
    authorship,
    prompts_of,
    prompts_until,
)
from editjournal.schemas.events import (
    AnyEvent,
    CheckpointCreated,
    EditApplied,
    FileRead,
    OutsideChangeRecorded,
    Record,
)
from tests.gitai_standard import problems

# the standard's section 1.2.7 example (mixed: legacy, session and human keys), verbatim
MIXED = """src/main.rs
  s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10
  h_31dce776f88375 15-20
src/lib.rs
  abcd1234abcd1234 1-50
---
{
  "schema_version": "authorship/3.0.0",
  "git_ai_version": "1.4.5",
  "base_commit_sha": "7734793b756b3921c88db5375a8c156e9532447b",
  "prompts": {
    "abcd1234abcd1234": {
      "agent_id": {"tool": "cursor", "id": "old_session_id", "model": "gpt-4"},
      "human_author": "Developer <dev@example.com>",
      "total_additions": 50, "total_deletions": 0, "accepted_lines": 50, "overriden_lines": 0
    }
  },
  "humans": {"h_31dce776f88375": {"author": "Developer <dev@example.com>"}},
  "sessions": {
    "s_c9883b05a2487d": {
      "agent_id": {"tool": "claude", "id": "conv_abc123", "model": "claude-sonnet-4-5-20250514"},
      "human_author": "dev@example.com"
    }
  }
}"""

# git-ai's serializer snapshot `file_names_with_spaces` (quoted paths, a legacy key)
QUOTED = (
    '"src/my file.rs"\n  c9883b05a2487d6d 1-10\n"docs/README (copy).md"\n  c9883b05a2487d6d 5\n'
    "test/file-with-dashes.js\n  c9883b05a2487d6d 20-25\n---\n"
    + json.dumps(
        {
            "schema_version": "authorship/3.0.0",
            "git_ai_version": "development",
            "base_commit_sha": "",
            "prompts": {
                "c9883b05a2487d6d": {
                    "agent_id": {"tool": "cursor", "id": "session_123", "model": "claude-3-sonnet"},
                    "human_author": None,
                    "total_additions": 0,
                    "total_deletions": 0,
                    "accepted_lines": 0,
                    "overriden_lines": 0,
                }
            },
        },
        indent=2,
    )
)


def test_the_standards_examples_conform_parse_and_render_back_unchanged():
    for text in (MIXED, QUOTED):
        assert problems(text) == []
        log = parse(text)
        again = parse(render(log))
        assert again.files == log.files and again.metadata == log.metadata
        assert problems(render(log)) == []
    assert parse(MIXED).files["src/lib.rs"] == {"abcd1234abcd1234": list(range(1, 51))}
    assert list(parse(QUOTED).files) == ["src/my file.rs", "docs/README (copy).md",
                                         "test/file-with-dashes.js"]  # fmt: skip


def test_the_session_hash_is_the_reference_implementations():
    """git-ai's snapshot: tool "cursor", id "session_123" -> c9883b05a2487d6d."""
    assert session_key("cursor", "session_123") == "c9883b05a2487d6d"
    assert key_of("claude-code:abc") == hashlib.sha256(b"claude:abc").hexdigest()[:16]


def test_agent_ids_name_the_harness_as_the_standard_names_tools():
    assert agent_id("claude-code:9f2") == {"tool": "claude", "id": "9f2", "model": "unknown"}
    assert agent_id("gemini-cli:s") == {"tool": "gemini", "id": "s", "model": "unknown"}
    assert agent_id("alice") == {"tool": "editjournal", "id": "alice", "model": "unknown"}


@given(st.sets(st.integers(min_value=1, max_value=400), min_size=1))
def test_line_ranges_round_trip_ascending_and_compact(lines: set[int]):
    text = format_ranges(lines)
    assert parse_ranges(text) == sorted(lines)
    assert problems(f"f\n  {'a' * 16} {text}\n---\n{{}}")[:1] != ["ranges not ascending"]
    assert all(" " not in part for part in text.split(","))


def test_a_malformed_note_is_refused_with_what_is_wrong():
    for text, said in (
        ("a\n  k 1\n{}", "divides"),
        ("  k 1\n---\n{}", "without a file"),
        ("a\n  k 3-1\n---\n{}", "line range"),
        ("---\n[1]", "not a JSON object"),
        ('---\n{"schema_version": "authorship/2.0.0"}', "schema_version"),
    ):
        try:
            parse(text)
        except NoteError as e:
            assert said in str(e)
        else:
            raise AssertionError(f"{text!r} parsed")


def test_a_carried_log_follows_its_lines_and_drops_the_changed_ones():
    log = AuthorshipLog(
        {"a.py": {"k1": [2, 3]}, "gone.py": {"k1": [1]}},
        {"schema_version": "authorship/3.0.0", "base_commit_sha": "old",
         "prompts": {"k1": {"accepted_lines": 3}}},
    )  # fmt: skip
    moves = line_map(["x", "two", "three"], ["new", "x", "two", "THREE"])
    out = carried(log, {"a.py": moves, "gone.py": None}, "new-sha")
    assert out.files == {"a.py": {"k1": [3]}}
    assert out.metadata["base_commit_sha"] == "new-sha"
    assert out.metadata["prompts"]["k1"]["accepted_lines"] == 1
    assert log.metadata["prompts"]["k1"]["accepted_lines"] == 3  # the input is untouched


def test_a_merge_keeps_the_first_logs_key_where_both_attest_a_line():
    meta = {"schema_version": "authorship/3.0.0", "base_commit_sha": "x"}
    first = AuthorshipLog({"a": {"k1": [1, 2]}}, {**meta, "prompts": {"k1": {}}})
    second = AuthorshipLog({"a": {"k2": [2, 3]}, "b": {"k2": [1]}}, {**meta, "prompts": {"k2": {}}})
    both = merged(first, second, "sha")
    assert both.files == {"a": {"k1": [1, 2], "k2": [3]}, "b": {"k2": [1]}}
    assert set(both.metadata["prompts"]) == {"k1", "k2"}
    assert both.metadata["base_commit_sha"] == "sha"


# --- authorship over a journal built by hand --------------------------------------------------


class Journal:
    """Records and blobs, as `JournalReader` reads them (a journal folded by hand)."""

    def __init__(self) -> None:
        self.rows: list[Record] = []
        self.blobs: dict[str, bytes] = {}
        self.sha = hashlib.sha256(b"").hexdigest()

    def _put(self, text: str) -> str:
        data = text.encode()
        sha = hashlib.sha256(data).hexdigest()
        self.blobs[sha] = data
        return sha

    def read(self, agent: str, path: str, text: str) -> None:
        self.sha = self._put(text)
        event = FileRead(path=path, sha256=self.sha, size=len(text), line_count=text.count("\n"))
        self._add(agent, event)

    def write(self, agent: str, path: str, text: str) -> None:
        before, self.sha = self.sha, self._put(text)
        event = EditApplied(
            path=path, writer="edit", before_sha256=before, after_sha256=self.sha,
            size=len(text), lines_before=0, line_count=text.count("\n"),
        )  # fmt: skip
        self._add(agent, event)

    def outside(self, path: str, text: str) -> None:
        before, self.sha = self.sha, self._put(text)
        event = OutsideChangeRecorded(path=path, change="modified", old_sha256=before,
                                      new_sha256=self.sha)  # fmt: skip
        self._add(None, event)

    def _add(self, agent: str | None, event: AnyEvent) -> None:
        seq = len(self.rows) + 1
        self.rows.append(Record(seq=seq, ts=0, agent=agent, event=event, prev_hash="", hash=""))

    def records(self, *, path: str | None = None, until_seq: int | None = None) -> list[Record]:
        last = until_seq if until_seq is not None else len(self.rows)
        return [r for r in self.rows if r.event.path == path and r.seq <= last]

    def blob(self, sha256: str) -> bytes | None:
        return self.blobs.get(sha256)


def lines(*rows: str) -> str:
    return "".join(r + "\n" for r in rows)


def test_a_commit_attests_the_agents_added_lines_and_not_the_persons():
    j = Journal()
    parent = lines("l1", "l2", "l3")
    j.read("alice", "a.txt", parent)
    j.write("alice", "a.txt", lines("l1", "alice 1", "alice 2", "l2", "l3"))
    j.write("claude-code:s1", "a.txt", lines("l1", "alice 1", "alice 2", "l2", "claude 3"))
    j.outside("a.txt", lines("l1", "person 1", "alice 2", "l2", "claude 3"))
    committed = lines("l1", "person 1", "alice 2", "l2", "claude 3")
    file = CommittedFile("a.txt", "a.txt", committed.encode(), parent.encode(), (2, 3, 5))
    log = authorship(j, "c0ffee", [file]).log
    alice, claude = key_of("alice"), key_of("claude-code:s1")
    assert log.files == {"a.txt": {alice: [3], claude: [5]}}
    prompts = log.metadata["prompts"]
    assert prompts[alice] | {"agent_id": None} == {
        "agent_id": None, "total_additions": 2, "total_deletions": 0,
        "accepted_lines": 1, "overriden_lines": 1,
    }  # fmt: skip
    assert prompts[claude]["total_additions"] == 1 and prompts[claude]["total_deletions"] == 1
    assert log.metadata["base_commit_sha"] == "c0ffee"
    assert problems(render(log)) == []


def test_a_staged_version_is_attested_as_committed_not_as_the_journal_has_it_now():
    j = Journal()
    j.write("alice", "s.txt", lines("a1", "a2"))
    j.write("alice", "s.txt", lines("a1", "a2", "a3 after git add"))
    j.outside("s.txt", lines("person 0", "a1", "a2", "a3 after git add"))
    staged = CommittedFile("s.txt", "s.txt", lines("a1", "a2").encode(), None, (1, 2))
    log = authorship(j, "c", [staged]).log
    assert log.files == {"s.txt": {key_of("alice"): [1, 2]}}


def test_lines_the_journal_never_saw_are_not_attested():
    j = Journal()
    j.write("alice", "p.txt", lines("x", "y"))
    partial = CommittedFile(
        "p.txt", "p.txt", lines("x", "typed in the index").encode(), None, (1, 2)
    )
    unknown = CommittedFile("q.txt", "q.txt", b"q\n", None, (1,))
    outside = CommittedFile("../r.txt", None, b"r\n", None, (1,))
    found = authorship(j, "c", [partial, unknown, outside])
    assert found.log.files == {"p.txt": {key_of("alice"): [1]}}
    assert found.unknown == {"q.txt": "not in the journal", "../r.txt": "outside the workspace"}


def test_a_sessions_kept_prompts_go_in_its_record_as_the_standards_messages():
    """Only what the journal kept (a prompt checkpoint with its text), only the prompts
    recorded by the commit, in `messages_url` (E-002 removed `messages`)."""
    j = Journal()
    j.write("claude-code:s1", "a.txt", lines("claude 1"))
    j.write("alice", "a.txt", lines("claude 1", "alice 2"))
    kept = [
        Record(seq=10, ts=1_764_270_000_123, agent="claude-code:s1", prev_hash="", hash="",
               event=CheckpointCreated(name="claude-code:s1/turn-1", prompt="fix café \"x\"")),
        Record(seq=11, ts=1_764_270_001_000, agent="claude-code:s1", prev_hash="", hash="",
               event=CheckpointCreated(name="claude-code:s1/turn-2", prompt="é" * 9000)),
        Record(seq=12, ts=1_764_270_009_000, agent="claude-code:s1", prev_hash="", hash="",
               event=CheckpointCreated(name="claude-code:s1/turn-3", prompt="after the commit")),
        Record(seq=13, ts=1_764_270_000_500, agent="alice", prev_hash="", hash="",
               event=CheckpointCreated(name="not-a-prompt")),  # a checkpoint without text
    ]  # fmt: skip
    found = prompts_of(kept)
    assert list(found) == ["claude-code:s1"]
    file = CommittedFile("a.txt", "a.txt", lines("claude 1", "alice 2").encode(), None, (1, 2))
    log = authorship(j, "c", [file], prompts_until(found, 1_764_270_002_000)).log
    claude, alice = (log.metadata["prompts"][key_of(a)] for a in ("claude-code:s1", "alice"))
    assert "messages_url" not in alice and "messages" not in claude
    assert claude["messages_url"].startswith("data:application/json;charset=utf-8,%5B")
    assert prompts_in(claude) == [
        {"type": "user", "text": 'fix café "x"', "timestamp": "2025-11-27T19:00:00.123Z"},
        {"type": "user", "text": "é" * MAX_PROMPT_TEXT + " [clipped]",
         "timestamp": "2025-11-27T19:00:01.000Z"},
    ]  # fmt: skip
    note = render(log)
    assert problems(note) == [] and note.isascii()
    assert prompts_in(parse(note).metadata["prompts"][key_of("claude-code:s1")]) == prompts_in(
        claude
    )
