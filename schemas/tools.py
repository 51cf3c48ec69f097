"""Params and result Structs for every method the daemon serves.

`TOOL_PARAMS` maps each method name to its params Struct; the daemon builds
one typed decoder per entry and the client uses the same names. Params forbid
unknown fields, so a misspelt or misplaced field is an `invalid_params` error
that names it instead of being silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import Meta

from editjournal.schemas.anchorrows import MEANINGS, bodies_of, rendered_rows
from editjournal.schemas.wire import Error

# Numbers a request may carry are range-checked here, so none reaches SQLite or a
# reply's encoder too big (an OverflowError once ended the daemon): line numbers and
# counts fit 31 bits, journal seqs SQLite's signed 64-bit INTEGER.
MAX_LINE_NUMBER = 2**31 - 1
MAX_SEQ = 2**63 - 1
MAX_PATHS_PER_READ = 100  # read_many_files: one request must not hold the daemon for long
# read_many_files: files past this much are not read. 16 MiB is ~4M tokens, past any model's
# context; 32 MiB made the request's final run (its reply, the files judged and read again)
# hold the daemon's thread 110-150 ms at once (issue 40)
MAX_READ_BYTES = 16 * 1024 * 1024
MAX_OPERATIONS = 1000  # edit: the largest batch takes ~0.2 s on 20,000 lines (README Guarantees)
PositiveInt = Annotated[int, Meta(ge=1, le=MAX_LINE_NUMBER)]
NonNegativeInt = Annotated[int, Meta(ge=0, le=MAX_SEQ)]

DEFAULT_MAX_LINES = 2000


class Params(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every params Struct."""


class Result(msgspec.Struct, kw_only=True):
    """Base of every result Struct."""


# --- daemon methods ---------------------------------------------------------


class PingParams(Params):
    """Whether the daemon answers: its pid, version and protocol."""


class PingResult(Result):
    pong: bool
    pid: int
    version: str  # the daemon's package version
    protocol: int = 0  # the wire protocol it speaks (schemas.wire); 0: a daemon too old to say


class StatusParams(Params):
    """The daemon and its journal: workspace, pid, uptime, events, files, watcher."""


class StatusResult(Result):
    workspace: str
    pid: int
    version: str
    uptime_s: float
    event_count: int
    last_seq: int
    known_files: int
    agents: int
    state_digest: str  # equals the digest of a fold of the journal
    journal_path: str
    journal_bytes: int
    socket: str
    events_socket: str  # PUB: every committed event, topic = path + NUL
    log_path: str
    watcher: dict[str, Any] = {}  # state, paths_checked, outside_changes, rescans, ...
    # commits, durable, events, largest, batches_with_writes, writes; and what start-up
    # recovery finished (rolled_forward, unfinished, temps_removed)
    group_commit: dict[str, Any] = {}
    protocol: int = 0  # as in PingResult
    parked: int = 0  # requests whose long work (a checkpoint's) is under way in slices
    workspace_id: str = ""  # generated once (.editjournal/workspace-id): the fleet's name for it


class LogParams(Params):
    """The newest `limit` matching events, oldest first (`since_ts` in ms since the
    epoch; with `patch`, each content change's diff)."""

    path: str | None = None
    agent: str | None = None
    kind: str | None = None
    after_seq: NonNegativeInt = 0
    limit: Annotated[int, Meta(ge=1, le=100_000)] = 50
    until_seq: NonNegativeInt | None = None  # only events at or before this seq
    since_ts: NonNegativeInt | None = None  # only events at or after this time (ms, epoch)
    patch: bool = False  # each content change's unified diff in `diff`


class LogEntry(Result):
    seq: int
    ts: int
    agent: str | None
    kind: str
    path: str | None
    summary: str
    hash: str
    body: dict[str, Any]
    diff: str | None = None  # with `patch` (and in `show`): the content change as a diff
    # the shell command(s) that made this change (a shell window's edit), whole; empty: none
    commands: list[str] = []


class LogResult(Result):
    events: list[LogEntry]
    last_seq: int


# --- reading ------------------------------------------------------------------


class ReadFileParams(Params):
    """`path` is required; `file_path` is its deprecated alias (path wins)."""

    path: str | None = None
    file_path: str | None = None
    hashes: bool = False
    range: str | None = None
    offset: PositiveInt | None = None
    limit: PositiveInt | None = None
    max_lines: NonNegativeInt = DEFAULT_MAX_LINES  # 0: the default (a sentinel)
    since_version: NonNegativeInt | None = None  # only what changed since this version
    at_version: NonNegativeInt | None = None  # the file as it was then (from the journal)

    def __post_init__(self) -> None:
        """Sentinels for providers that make every field required: `range: ""`,
        `max_lines: 0` mean "not given"."""
        if self.range == "":
            self.range = None
        if self.max_lines == 0:
            self.max_lines = DEFAULT_MAX_LINES


class AnchoredLine(Result):
    line: int
    hash: str
    quality: str
    text: str
    kind: str = "line"
    unique: bool = True


class ReadFileResult(Result):
    """A versioned read. `content` holds the lines served, with their endings and
    without the BOM; `sha256` is always of the whole file's bytes on disk."""

    file_path: str
    version: int
    sha256: str
    line_count: int
    content: str
    start_line: int
    end_line: int
    truncated: bool
    eol: str
    bom: bool
    final_newline: bool
    size: int
    # `lines` and `rendered` on the wire; read them as `.lines` and `.rendered` (below)
    sent_lines: list[AnchoredLine] | None = msgspec.field(default=None, name="lines")
    sent_rendered: str | None = msgspec.field(default=None, name="rendered")
    # delta reads (since_version): content is "", `delta` holds the changed hunks with
    # fresh anchors, `lines` the changed lines; `unchanged` says nothing changed
    since_version: int | None = None
    unchanged: bool | None = None
    delta: str | None = None
    # hashes: the daemon sends one anchor and one mark per line served (the text travels
    # once, in `content`); `lines` and `rendered` are rebuilt here (schemas.anchorrows)
    anchors: list[str] | None = None
    marks: str | None = None

    @property
    def lines(self) -> list[AnchoredLine] | None:
        """The served lines as rows; a lean (`anchors` + `marks`) reply's rows are built
        on first use, not on decoding: most callers never look at them."""
        if self.sent_lines is None and self.anchors is not None and self.marks is not None:
            self.sent_lines = self._rows()
        return self.sent_lines

    @lines.setter
    def lines(self, value: list[AnchoredLine] | None) -> None:
        self.sent_lines = value

    @property
    def rendered(self) -> str | None:
        """`LINE#ANCHOR|body` rows as agents see them; built on first use, like `lines`."""
        if self.sent_rendered is None and self.anchors is not None and self.marks is not None:
            bodies = bodies_of(self.content, len(self.anchors))
            self.sent_rendered = rendered_rows(self.start_line, self.anchors, self.marks, bodies)
        return self.sent_rendered

    @rendered.setter
    def rendered(self, value: str | None) -> None:
        self.sent_rendered = value

    def expanded(self) -> ReadFileResult:
        """This result with `lines` and `rendered` built, so that encoding it (`--json`)
        shows them as the daemon once sent them; returns self."""
        self.lines, self.rendered  # noqa: B018 - built and kept by the properties
        return self

    def _rows(self) -> list[AnchoredLine]:
        assert self.anchors is not None and self.marks is not None
        bodies = bodies_of(self.content, len(self.anchors))
        meanings = [MEANINGS[mark] for mark in self.marks]
        return [
            AnchoredLine(
                line=self.start_line + i, hash=a, quality=m[2], text=b, kind=m[0], unique=m[1]
            )
            for i, (a, m, b) in enumerate(zip(self.anchors, meanings, bodies, strict=True))
        ]


class AgentStatusParams(Params):
    agent: str | None = None  # default: the calling agent


class FileSeen(Result):
    """One file an agent has seen: the version it saw and what changed since."""

    path: str
    version_seen: int
    sha256_seen: str
    lines_seen: tuple[int, int] | None
    current: bool
    current_version: int | None
    current_sha256: str | None  # None: the file was deleted
    changed_since: list[dict[str, Any]]
    # lines of the version seen that the agent was never shown (1-based, inclusive
    # ranges): outside a ranged read, or others' changes its own edit was carried over
    unseen_lines: list[tuple[int, int]] = []


class AgentStatusResult(Result):
    agent: str
    files: list[FileSeen]
    stale_files: int
    pending_hunks: list[HunkInfo] = []  # the agent's prepared, unexpired hunks


class ReadManyFilesParams(Params):
    paths: Annotated[list[str], Meta(min_length=1, max_length=MAX_PATHS_PER_READ)]
    hashes: bool = False
    max_lines: PositiveInt = DEFAULT_MAX_LINES


class ReadManyItem(Result):
    """One file of a `read_many_files`: a result, or the error that file got."""

    file_path: str
    ok: bool
    result: ReadFileResult | None = None
    error: Error | None = None
    # not read: the request had read MAX_READ_BYTES already (error says how to get it)
    truncated: bool = False


class ReadManyFilesResult(Result):
    files: list[ReadManyItem]

    def expanded(self) -> ReadManyFilesResult:
        """Every file's `lines` and `rendered` built (ReadFileResult.expanded)."""
        for item in self.files:
            if item.result is not None:
                item.result.expanded()
        return self


# --- editing ------------------------------------------------------------------------

# An anchor as read_file shows it: 4-16 hex digits, optionally with the `LINE#`
# prefix and the quality mark copied from a rendered row (`12#a1b2c3`, `3#b8c2a5~`).
Anchor = Annotated[str, Meta(pattern=r"^\s*(\d+#)?[0-9a-fA-F]{4,16}[~?]?\s*$")]


class Op(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="op"):
    """Base of the six anchored operations, tagged by `op`."""


class SingleLineOp(Op):
    """The four operations that name one line: by `hash`, with `occurrence` (1-indexed
    among several matches) and an advisory `line` to disambiguate."""

    hash: Anchor
    occurrence: PositiveInt | None = None
    line: PositiveInt | None = None


class ReplaceLine(SingleLineOp, tag="replace_line", kw_only=True):
    content: str


class InsertAfter(SingleLineOp, tag="insert_after", kw_only=True):
    content: str


class InsertBefore(SingleLineOp, tag="insert_before", kw_only=True):
    content: str


class DeleteLine(SingleLineOp, tag="delete_line"):
    pass


class ReplaceRange(Op, tag="replace_range"):
    start_hash: Anchor
    end_hash: Anchor
    content: str


class DeleteRange(Op, tag="delete_range"):
    start_hash: Anchor
    end_hash: Anchor


Operation = Union[  # noqa: UP007 - a runtime value
    ReplaceLine, InsertAfter, InsertBefore, DeleteLine, ReplaceRange, DeleteRange
]
SINGLE_ANCHOR_OPS = ("replace_line", "insert_after", "insert_before", "delete_line")
RANGE_OPS = ("replace_range", "delete_range")


class EditParams(Params, kw_only=True):
    """`path` is required (`file_path` is its deprecated alias); operations apply atomically."""

    path: str | None = None
    file_path: str | None = None
    operations: Annotated[list[Operation], Meta(min_length=1, max_length=MAX_OPERATIONS)]
    skip_safety_check: bool = False


class AutoCorrection(Result):
    type: str
    detail: str


class EditDetails(Result):
    writer_type: str
    baseline_continuity: str  # "clean" | "mixed"
    anchors_valid_through: int
    must_refresh_from_line: int


class WrittenResult(Result):
    """What every writing tool that names its file at the top reports (`edit` and the
    atomic tools): where the file stands now and what changed. `diff` shows the changed
    region with new anchors."""

    message: str
    file_path: str
    version: int
    sha256: str
    lines_before: int
    lines_after: int
    net_change: int
    anchors_valid_through: int
    must_refresh_from_line: int
    diff: str
    changed_lines: list[AnchoredLine]
    auto_corrections: list[AutoCorrection]
    safety_check: str  # "clean" | "skipped" | "overridden"
    details: EditDetails


class EditResult(WrittenResult):
    """An applied edit."""

    # set when the agent's anchors were resolved in an older snapshot and carried forward
    rebased_from_version: int | None = None
    rebased_over: list[dict[str, Any]] = []


# --- patching ------------------------------------------------------------------------

Sha256 = Annotated[str, Meta(pattern=r"^[0-9a-fA-F]{64}$")]


class SafePatchParams(Params, kw_only=True):
    """A unified diff of one file, locked by the SHA-256 of the content it was made from.

    `path` is required (`file_path` is its deprecated alias). `rebase: true` applies
    the diff over newer content when none of the lines it relies on changed since.
    """

    path: str | None = None
    file_path: str | None = None
    unified_diff: str
    base_content_sha256: Sha256
    rebase: bool = False
    include_content: bool = True  # false: latest_file_state without the whole content
    skip_safety_check: bool = False


class LatestFileState(Result):
    """The file as it is after the call (applied or not): what to patch next."""

    file_path: str
    version: int
    sha256: str  # of the whole file's bytes; the empty content's when it does not exist
    content: str | None = None  # the whole content (without a BOM); None: not asked for
    exists: bool = True


class HunkPlacement(Result):
    """Where a hunk was applied: the line its header stated and the line it was found at."""

    hunk: int
    header: str
    stated_line: int
    applied_line: int
    offset: int


class SafePatchResult(Result):
    """An applied patch (the seed's success / message / latest_file_state, and more)."""

    success: bool
    message: str
    latest_file_state: LatestFileState
    lines_before: int
    lines_after: int
    net_change: int
    hunks: list[HunkPlacement]
    diff: str  # the changed region with new anchors, as `edit` shows it
    changed_lines: list[AnchoredLine]
    anchors_valid_through: int
    must_refresh_from_line: int
    auto_corrections: list[AutoCorrection]
    safety_check: str  # "clean" | "skipped" | "overridden"
    details: EditDetails
    created: bool = False
    deleted: bool = False
    rebased_from_version: int | None = None
    rebased_over: list[dict[str, Any]] = []


# --- OpenAI's patch envelope (V4A) -------------------------------------------------------
# Codex CLI's `apply_patch` text, or the Responses API's apply_patch operations.

MAX_PATCH_OPERATIONS = 1000  # file operations in one apply_patch: one request, one commit
# hunks of one safe_patch diff, or of one apply_patch (all its files): each is located and
# carried on its own, so 20,000 one-line hunks held every agent for 72 s (issue 40)
MAX_HUNKS = 1000


class PatchOperation(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One operation in the Responses API's shape (`apply_patch_call.operation`):
    `diff` is the V4A body without the envelope: "+" lines for create_file, `@@`
    hunks for update_file, nothing for delete_file. `move_to` renames on update."""

    type: Literal["create_file", "update_file", "delete_file"]
    path: str
    diff: str | None = None
    move_to: str | None = None


class ApplyPatchParams(Params, kw_only=True):
    """Many files at once, all or nothing: `patch` (the envelope, `*** Begin Patch` ...
    `*** End Patch`) or `operations` (the Responses API's shape), exactly one."""

    patch: str | None = None
    operations: (
        Annotated[list[PatchOperation], Meta(min_length=1, max_length=MAX_PATCH_OPERATIONS)] | None
    ) = None
    # the directory (workspace-relative) the patch's relative paths start from, as a
    # shell's working directory would be: a CLI run from a subdirectory sends it
    workdir: str | None = None
    skip_safety_check: bool = False


class ChunkLanding(Result):
    """Where one hunk of an update landed: the first line of its block in the file as
    it was written to (1-based), and the `@@` header it was narrowed by."""

    hunk: int
    line: int
    header: str | None = None


class PatchedFile(Result):
    """One file an applied patch wrote: `action` added, updated, moved or deleted."""

    path: str
    action: Literal["added", "updated", "moved", "deleted"]
    version: int
    sha256: str | None  # None: deleted
    lines_before: int
    lines_after: int
    diff: str  # the changed region with new anchors, as `edit` shows it ("" for a deletion)
    anchors_valid_through: int
    moved_from: str | None = None
    hunks: list[ChunkLanding] = []
    auto_corrections: list[AutoCorrection] = []
    safety_check: str = "clean"
    # an Add File or a move onto a file you had not seen: the changes it replaced
    overwrote_unseen: list[dict[str, Any]] = []
    rebased_from_version: int | None = None  # planned in your older snapshot, carried
    rebased_over: list[dict[str, Any]] = []


class ApplyPatchResult(Result):
    """An applied patch: Codex's own summary (`message`) and each file written."""

    message: str
    files: list[PatchedFile]


# --- atomic text tools ------------------------------------------------------------------
# For agents that cannot hold a file in context: the daemon does the read-modify-write.


class EditFileParams(Params, kw_only=True):
    """Replace the exact text `old_string` with `new_string`: once, or exactly
    `expected_replacements` times (it must occur exactly that often)."""

    path: str
    old_string: Annotated[str, Meta(min_length=1)]
    new_string: str
    expected_replacements: PositiveInt | None = None
    skip_safety_check: bool = False


class AppendToFileParams(Params, kw_only=True):
    """Add `content` at the end of the file (created when missing)."""

    path: str
    content: str
    skip_safety_check: bool = False


class PrependToFileParams(Params, kw_only=True):
    """Add `content` at the start of the file (created when missing)."""

    path: str
    content: str
    skip_safety_check: bool = False


class UpdateSectionParams(Params, kw_only=True):
    """Replace the body of the markdown section `section_header` (e.g. "## Current State")."""

    path: str
    section_header: Annotated[str, Meta(min_length=1)]
    new_content: str
    skip_safety_check: bool = False


class WriteFileParams(Params, kw_only=True):
    """Create a file (and its directories) or fill it; replaces an existing file's content."""

    path: str
    content: str


class AtomicResult(WrittenResult):
    """An applied atomic text tool (edit_file, append/prepend, update_section, write_file)."""

    created: bool = False
    replacements: int | None = None  # edit_file: how many places were changed
    lines: list[tuple[int, int]] = []  # edit_file / update_section: lines written (1-based)
    separator_added: bool = False  # append/prepend: a newline was added between the two
    # write_file over content this agent had not seen: the changes it overwrote
    overwrote_unseen: list[dict[str, Any]] = []


# --- prepare first, apply once -------------------------------------------------------------
# Every incremental edit is planned (a reviewable diff + evidence + hunk_id, nothing
# written) and only apply_file_modification writes. For providers whose schemas make every
# field required, "" (and 0 for occurrence) means "not given".

MatchMode = Literal["", "contains", "exact", "regex"]
Occurrence = Union[NonNegativeInt, Literal[""]]  # noqa: UP007 - a runtime value


def _given(value: Any) -> Any:
    """A sentinel ("" or 0) is "not given"."""
    return None if value == "" or value == 0 else value


class PrepareParams(Params, kw_only=True):
    """What every prepare tool takes: the file, and the hunk to re-plan (if any)."""

    path: str
    existing_hunk_id: str | None = None

    def __post_init__(self) -> None:
        self.existing_hunk_id = _given(self.existing_hunk_id)


class PrepareFileRangeEditParams(PrepareParams, kw_only=True):
    """Replace lines `range` "A-B" (or start_line..end_line, 1-based, inclusive) with
    `content` ("" deletes them)."""

    content: str
    range: str | None = None
    start_line: PositiveInt | None = None
    end_line: PositiveInt | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.range = _given(self.range)


class PrepareFileAppendParams(PrepareParams, kw_only=True):
    """Add `content` at the end of the file."""

    content: str


class PrepareFileInsertParams(PrepareParams, kw_only=True):
    """Insert `content` beside the line `anchor` finds: `match` contains (default), exact
    (the whole line) or regex; or a read_file line anchor such as 12#a1b2c3."""

    anchor: Annotated[str, Meta(min_length=1)]
    content: str
    match: MatchMode | None = None
    occurrence: Occurrence | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.match = _given(self.match)
        self.occurrence = _given(self.occurrence)


class PrepareFileBlockReplaceParams(PrepareParams, kw_only=True):
    """Replace the exact text `old_block` (one place, or the `occurrence`-th) with `new_block`."""

    old_block: Annotated[str, Meta(min_length=1)]
    new_block: str
    occurrence: Occurrence | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.occurrence = _given(self.occurrence)


class ApplyFileModificationParams(Params, kw_only=True):
    """Write a prepared hunk (only its owner, at most once, before it expires)."""

    hunk_id: Annotated[str, Meta(min_length=1)]


class OverwriteEntireFileParams(Params, kw_only=True):
    """Replace the whole file with `content` (created when missing). Content that looks
    like a diff is refused unless `content_format` is "text"."""

    path: str
    content: str
    content_format: Literal["", "text"] | None = None

    def __post_init__(self) -> None:
        self.content_format = _given(self.content_format)


class ListHunksParams(Params, kw_only=True):
    """The calling agent's pending hunks (of one file, or all)."""

    path: str | None = None

    def __post_init__(self) -> None:
        self.path = _given(self.path)


class DiscardHunkParams(Params, kw_only=True):
    """Drop one of the calling agent's pending hunks."""

    hunk_id: Annotated[str, Meta(min_length=1)]


class MatchedLine(Result):
    line: int
    text: str


class HunkEvidence(Result):
    """What the plan matched where, in the content it was made against."""

    path: str
    version: int
    sha256: str
    line_count: int
    start_line: int  # the lines the plan relies on (an append: none, 0)
    end_line: int
    matched: list[MatchedLine]
    match: str | None = None
    anchor: str | None = None
    occurrence: int | None = None
    occurrences: int | None = None  # how many places matched


class HunkNormalized(Result):
    """The EOF-newline rule: every written line ends with a newline, the last one too."""

    file_eof_newline_added: bool
    content_eof_newline_added: bool


class BlanklineStyle(Result):
    """Blank lines at each seam of an append or insert (the file's and the content's)."""

    above: int
    below: int


class HunkPlanResult(Result):
    """A planned hunk: nothing written; apply it with apply_file_modification."""

    message: str
    summary: str  # YAML-style: the plan at a glance
    hunk_id: str
    kind: str
    file_path: str
    evidence: HunkEvidence
    diff: str  # unified diff of the plan
    created_at_ms: int
    expires_at_ms: int
    normalized: HunkNormalized
    blankline_style: BlanklineStyle | None = None
    style_warning: str | None = None
    replanned: bool = False


class ApplyEvidence(Result):
    """What was applied over what: the plan's content, and the file's when applied."""

    hunk_id: str
    kind: str
    planned_version: int
    planned_sha256: str
    applied_to_version: int
    applied_to_sha256: str
    rebased: bool
    rebased_over: list[dict[str, Any]] = []


class ApplyResult(WrittenResult):
    """An applied hunk."""

    hunk_id: str
    apply_evidence: ApplyEvidence
    applied_diff: str  # unified diff of what was written
    normalized: HunkNormalized
    rebased_from_version: int | None = None


class OverwriteResult(WrittenResult):
    created: bool
    normalized: HunkNormalized


class HunkInfo(Result):
    hunk_id: str
    kind: str
    path: str
    created_at_ms: int
    expires_at_ms: int
    base_version: int
    diff: str


class ListHunksResult(Result):
    hunks: list[HunkInfo]
    expired: list[str] = []  # hunk_ids noticed expired by this call (now journaled)


class DiscardHunkResult(Result):
    message: str
    hunk_id: str
    path: str


# --- checkpoints and undo ----------------------------------------------------------------


MAX_LISTED_FILES = 100  # checkpoint replies list this many files; counts say the rest
MAX_PROMPT_CHARS = 1024 * 1024  # a prompt's text a prompt checkpoint is sent (hooks clip it)


class CheckpointCreateParams(Params):
    """Record the workspace as it is now: every file that is not ignored (the watcher's
    rules: .gitignore, .editjournalignore, --ignore), or only `paths` (files, or
    directories: every file below them)."""

    name: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    paths: list[str] | None = None


class PromptCheckpointParams(Params):
    """A harness prompt's checkpoint (its hook on UserPromptSubmit / BeforeAgent): the
    whole workspace, named `<agent>/turn-<n>` (n: one past the agent's newest turn); the
    agent's older prompt checkpoints beyond the config's retention are pruned. `prompt`:
    the prompt's text, kept only when config.toml allows it. A hook's, not an agent's tool."""

    prompt: Annotated[str, Meta(max_length=MAX_PROMPT_CHARS)] | None = None


class CheckpointFile(Result):
    path: str
    sha256: str  # "": listed, not held (binary, not UTF-8 or too large): left alone
    size: int = 0


class CheckpointInfo(Result):
    """One checkpoint: `id` is the seq of its `checkpoint_created` event."""

    id: int
    name: str
    ts: int
    agent: str | None
    files: list[CheckpointFile]  # the first MAX_LISTED_FILES (old journals: all)
    absent: list[str] = []  # named paths that did not exist then
    all_files: bool = False  # (old journals) it took every file the journal knew
    scope: list[str] = []  # the paths it covers; []: the whole workspace
    file_count: int = 0
    total_bytes: int = 0
    not_text: int = 0  # files listed but not held (binary, not UTF-8, too large)


class CheckpointCreateResult(Result):
    message: str
    id: int
    name: str
    version: int
    files: list[CheckpointFile]  # the first MAX_LISTED_FILES, by path
    absent: list[str] = []
    skipped: list[dict[str, Any]] = []  # files it could not take (path, code, message)
    scope: list[str] = []
    file_count: int = 0
    total_bytes: int = 0
    not_text: int = 0
    read_files: int = 0  # files read to take it (the rest were known by their stat)
    stored_bytes: int = 0  # contents the journal did not hold yet
    turn: int | None = None  # a prompt checkpoint's turn
    pruned: list[str] = []  # prompt checkpoints this one's retention pruned


class CheckpointListParams(Params):
    """Every checkpoint, oldest first."""


class CheckpointListResult(Result):
    checkpoints: list[CheckpointInfo]
    message: str = ""  # one line per checkpoint, for people


class CheckpointDiffParams(Params):
    """What changed since a checkpoint, per file, without restoring anything."""

    id_or_name: Annotated[str, Meta(min_length=1)]
    paths: list[str] | None = None  # only these files or directories
    patch: bool = True  # each modified file's unified diff


class CheckpointChange(Result):
    """One file that differs from the checkpoint: `change` is modified, created (new
    since), deleted, or not_text (changed, but not text: a restore leaves it alone)."""

    path: str
    change: str
    lines_added: int | None = None
    lines_removed: int | None = None
    diff: str | None = None
    changed_by: list[dict[str, Any]] = []  # seq, agent, kind of the journal's changes since


class CheckpointDiffResult(Result):
    message: str
    checkpoint: CheckpointInfo
    changes: list[CheckpointChange]
    unchanged: int  # files as the checkpoint has them
    truncated: bool = False  # diffs past the reply's budget left out (`diff` None)


class CheckpointRestoreParams(Params):
    """Write a checkpoint's contents back: all its files, or only `paths`."""

    id_or_name: Annotated[str, Meta(min_length=1)]
    paths: list[str] | None = None
    remove_new: bool = False  # remove files that did not exist at the checkpoint


class RestoredFile(Result):
    """One file a restore wrote: what it overwrote and who had changed it since."""

    path: str
    action: str  # "restored" | "recreated" | "removed"
    version: int  # seq of its edit_applied (writer "restore")
    sha256: str | None  # None: removed
    overwrote_sha256: str | None  # None: the file did not exist
    changed_since: list[dict[str, Any]]  # seq, agent, kind, ts of each change since
    lines_before: int
    lines_after: int
    diff: str


class CheckpointRestoreResult(Result):
    message: str
    checkpoint: CheckpointInfo
    version: int  # seq of the checkpoint_restored event
    files: list[RestoredFile]
    kept_new: list[str] = []  # new since the checkpoint, kept (remove_new not asked)
    unchanged: list[str] = []  # already as the checkpoint has them (first MAX_LISTED_FILES)
    unchanged_count: int = 0
    # changed since, yet not restored: binary, not UTF-8 or too large (path, why)
    left_alone: list[dict[str, Any]] = []


MAX_UNDO_BY_FILES = 1000  # files one `undo` by an agent may revert; past it: invalid_params
# files one `checkpoint_restore` may write; past it: invalid_params, with the parts (by
# directory) it can be done in. Its one commit holds the daemon's thread for every file
# it writes: ~70 ms at 1,000 files, 0.5 s at 5,000 (docs/performance.md)
MAX_RESTORE_FILES = 1000


class UndoParams(Params, kw_only=True):
    """Revert `agent`'s (default: your) latest applied write to `path`, or the one at `seq`;
    or (`by`) every write of agent `by` to every file, after `since` (a checkpoint's name
    or id, or a seq), all or nothing (`dry_run`: only say what it would write)."""

    path: str | None = None  # required without `by`
    agent: str | None = None
    seq: PositiveInt | None = None
    by: Annotated[str, Meta(min_length=1)] | None = None
    since: int | str | None = None  # with `by`: a checkpoint's name or id, or a seq
    dry_run: bool = False  # with `by`: the per-file diffs, nothing written


class UndoneFile(Result):
    """One file an `undo` by an agent reverted (or, in a dry run, would revert)."""

    path: str
    # "reverted" | "removed" (the agent created it) | "recreated" (it deleted it) |
    # "unchanged" (its writes there cancel out, or were undone already: nothing written)
    action: str
    version: int | None  # seq of its edit_applied (writer "undo"); None: none (a dry run)
    sha256: str | None  # the content left; None: removed
    undone_seqs: list[int]  # the agent's writes to it that were reverted, oldest first
    rebased_over: list[dict[str, Any]] = []  # other writers' changes since, kept
    lines_before: int = 0
    lines_after: int = 0
    diff: str = ""  # the changed region, new lines with their anchors


class UndoResult(WrittenResult, kw_only=True):
    """An applied undo: an `edit_applied` with writer `undo`, itself undoable. An undo by
    an agent (`by`) writes many files: `files` says what became of each, and the fields
    about one file keep their defaults (`version` is the last write's seq)."""

    file_path: str = ""
    version: int = 0
    sha256: str = ""
    lines_before: int = 0
    lines_after: int = 0
    net_change: int = 0
    anchors_valid_through: int = 0
    must_refresh_from_line: int = 1
    diff: str = ""
    changed_lines: list[AnchoredLine] = []
    auto_corrections: list[AutoCorrection] = []
    safety_check: str = "skipped"
    details: EditDetails = msgspec.field(
        default_factory=lambda: EditDetails(
            writer_type="undo",
            baseline_continuity="clean",
            anchors_valid_through=0,
            must_refresh_from_line=1,
        )
    )
    by: str | None = None  # the agent whose writes were reverted (`undo` by an agent)
    since: int | None = None  # the seq after which they were (a checkpoint's is its id)
    dry_run: bool = False
    files: list[UndoneFile] = []

    undone: dict[str, Any] = {}  # seq, agent, writer, ts of the write reverted
    rebased_over: list[dict[str, Any]] = []  # later changes elsewhere in the file
    created: bool = False  # the file was recreated (the undone write deleted it)
    deleted: bool = False  # the file was removed (the undone write created it)
    # the undone write was half of a move: the other path, undone with it (path, version,
    # action "recreated" or "removed")
    move_undone: dict[str, Any] | None = None


# --- harness hooks: a harness's own tools, made journal-aware ------------------------------
# Not agent tools: a harness's hook calls them around its built-in Read/Edit/Write
# (`editjournal hook HARNESS`), as the agent whose tool it is.


class HarnessEdit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One string replacement as a harness's Edit tool takes it."""

    old_string: str
    new_string: str
    replace_all: bool = False


class CheckWriteParams(Params, kw_only=True):
    """Before the harness's own tool writes `path`: would the write land on lines
    someone changed since this agent's snapshot? `edits` (replacements, in order) or
    `content` (the whole new file). Allowed: the daemon remembers the content the
    write should produce (at most 64 announcements per agent, for 60 s), and the
    watcher holds back a change of the path only while it holds that announced change
    (an empty `edits` announces nothing). Refused: the error (`anchor_stale`, with who
    and the delta)."""

    path: str
    tool: str  # the harness's tool, journaled as the writer: "claude-code:Edit"
    # as many as `edit` takes operations: each is planned on the whole file
    edits: Annotated[list[HarnessEdit], Meta(max_length=MAX_OPERATIONS)] | None = None
    content: str | None = None


class CheckWriteResult(Result):
    path: str
    version: int  # the version the write will be made to
    exists: bool
    checked: int  # the edits judged (one not found is left to the harness's own check)


class ClaimWriteParams(Params, kw_only=True):
    """After the harness's own tool wrote `path`: journal as this agent's edit only the
    change its `check_write` announced; anything else on disk (a person's save in
    between) is journaled as an outside change first. Only the announcing agent may
    claim (`wrong_owner`); a claim without an announcement journals the content as an
    outside change, with a warning."""

    path: str
    tool: str


class ClaimWriteResult(Result):
    path: str
    version: int
    sha256: str | None  # None: the file does not exist
    recorded: bool  # False: the journal held this content already (nothing changed)
    lines_before: int = 0
    lines_after: int = 0


MAX_SHELL_COMMAND = 64 * 1024  # characters of a command kept on its window (and journaled)
MAX_SHELL_WINDOW_S = 24 * 3600.0
MAX_SHELL_PATHS = 64  # files a command line names that a window keeps as they were


class ShellWindowParams(Params, kw_only=True):
    """A harness's shell command, bracketed: `phase` "open" before it runs (the daemon
    first takes in every change made so far, then opens the window `window` for this
    agent), "close" after it ran (the daemon takes in every change the command made,
    then journals each one observed while only this agent's windows were open as this
    agent's `edit_applied`, writer `tool`, with the command). A change observed while
    another agent's window was open too, or outside every window, stays an outside
    change. A window never closed closes by itself after `expires_s`, crediting nothing."""

    window: Annotated[str, Meta(min_length=1, max_length=512)]  # pairs open and close
    phase: Literal["open", "close"]
    tool: Annotated[str, Meta(min_length=1, max_length=200)]  # "claude-code:Bash"
    command: Annotated[str, Meta(max_length=MAX_SHELL_COMMAND)] = ""
    expires_s: Annotated[float, Meta(gt=0, le=MAX_SHELL_WINDOW_S)] = 600.0
    # open: the workspace files the command line names (the hook finds them); their
    # content now is what a change of one no agent had read is told from at the close
    paths: Annotated[list[str], Meta(max_length=MAX_SHELL_PATHS)] | None = None


class ShellChange(Result):
    """One file a closed window's command changed, and whose it was made."""

    path: str
    change: str  # "created" | "modified" | "deleted"
    credited: bool  # journaled as the agent's edit; False: an outside change
    seq: int | None = None  # the event that journaled it (None: journaled before)
    why: str | None = None  # when not credited: why not


class ShellWindowResult(Result):
    window: str
    phase: str
    opened: bool = False  # open: a window is open now; close: one was open and closed
    settled: bool = True  # every change made before the request was taken in first
    changes: list[ShellChange] = []  # close: the files the window saw change


# --- audit: the journal read back (these record no events) --------------------------------


class ShowParams(Params):
    seq: Annotated[int, Meta(ge=1, le=MAX_SEQ)]


class ShowResult(Result):
    """One event, every field, and for a content change its unified diff (`diff` None:
    not a content change, or one side's content was not stored)."""

    event: LogEntry
    before_sha256: str | None = None
    after_sha256: str | None = None


class HistoryParams(Params):
    path: str


class FileVersion(Result):
    """One version of a file: the event that made it and its size in lines (+/- against
    the version before; None when either content was not stored)."""

    seq: int
    ts: int
    agent: str | None
    author: str  # who wrote this content: the agent, or "outside"
    kind: str
    writer: str | None  # the tool (edit, safe_patch, restore, undo, ...) or "outside"
    sha256: str | None  # None: the file was removed
    stored: bool  # the content is in the journal (read_file at_version can show it)
    line_count: int | None = None
    added: int | None = None
    removed: int | None = None
    path: str | None = None  # the file's path then, when not the one asked (before a move)
    moved_from: str | None = None  # this version moved the file here from that path
    # the shell command(s) that made this change (a shell window's edit), whole; empty: none
    commands: list[str] = []


class HistoryResult(Result):
    path: str
    versions: list[FileVersion]


class BlameParams(Params):
    path: str
    at_version: NonNegativeInt | None = None  # default: the latest


class BlameLine(Result):
    """Who last wrote one line: the event's seq, agent ("outside" for outside changes
    and for lines already there when the journal first saw the file), kind and time."""

    line: int
    text: str
    seq: int
    agent: str
    kind: str
    ts: int
    # the shell command(s) that made this change (a shell window's edit), whole; empty: none
    commands: list[str] = []


class BlameResult(Result):
    path: str
    version: int  # seq of the event that made the content blamed
    sha256: str
    lines: list[BlameLine]


class StatsParams(Params):
    agent: str | None = None  # default: every agent


class AgentStats(Result):
    """One agent's record. A recovery runs from the first of an agent's rejected writes
    to a file to its next applied write to that file; `mean_recovery_*` average them."""

    agent: str
    reads: int
    applied_writes: int
    rejected_writes: int
    rejections: dict[str, int]  # by error code
    rebased_edits: int  # applied over others' changes made since the agent's last view
    recoveries: int
    unrecovered: int  # rejections with no applied write to that file after them
    mean_recovery_events: float | None = None
    mean_recovery_ms: float | None = None
    mean_recovery_attempts: float | None = None  # rejections per recovery
    shell_writes: int = 0  # applied writes made by its shell commands (shell windows)
    # those commands, whole, each with the number of changes it made: the newest SHELL_LISTED
    shell_commands: dict[str, int] = {}


class StatsResult(Result):
    agents: list[AgentStats]
    last_seq: int


def explain_validation(method: str, message: str) -> str | None:
    """A hint for the validation errors agents make most, e.g. mixing op fields."""
    if "matching regex" in message and "hash`" in message:
        return (
            "an anchor is 4-16 hex digits as read_file(hashes: true) shows it: a1b2c3 or 12#a1b2c3"
        )
    if method == "edit" and "length <=" in message and "operations`" in message:
        return f"at most {MAX_OPERATIONS} operations per edit: split the batch into several edits"
    if method == "check_write" and "length <=" in message and "edits`" in message:
        return f"at most {MAX_OPERATIONS} edits per check_write: split the change into several"
    if method != "edit" or "unknown field" not in message:
        return None
    if "`start_hash`" in message or "`end_hash`" in message:
        return (
            "replace_line / delete_line / insert_after / insert_before take `hash` "
            "(one anchor); only replace_range / delete_range take start_hash + end_hash"
        )
    if "`hash`" in message or "`occurrence`" in message or "`line`" in message:
        return (
            "replace_range / delete_range take start_hash + end_hash; `hash`, "
            "`occurrence` and `line` belong to the single-anchor operations"
        )
    return None


TOOL_PARAMS: dict[str, type[Params]] = {
    "ping": PingParams,
    "status": StatusParams,
    "log": LogParams,
    "read_file": ReadFileParams,
    "read_many_files": ReadManyFilesParams,
    "edit": EditParams,
    "safe_patch": SafePatchParams,
    "apply_patch": ApplyPatchParams,
    "agent_status": AgentStatusParams,
    "edit_file": EditFileParams,
    "append_to_file": AppendToFileParams,
    "prepend_to_file": PrependToFileParams,
    "update_section": UpdateSectionParams,
    "write_file": WriteFileParams,
    "prepare_file_range_edit": PrepareFileRangeEditParams,
    "prepare_file_append": PrepareFileAppendParams,
    "prepare_file_insert_after": PrepareFileInsertParams,
    "prepare_file_insert_before": PrepareFileInsertParams,
    "prepare_file_block_replace": PrepareFileBlockReplaceParams,
    "apply_file_modification": ApplyFileModificationParams,
    "overwrite_entire_file": OverwriteEntireFileParams,
    "list_hunks": ListHunksParams,
    "discard_hunk": DiscardHunkParams,
    "checkpoint_create": CheckpointCreateParams,
    "checkpoint_list": CheckpointListParams,
    "checkpoint_restore": CheckpointRestoreParams,
    "checkpoint_diff": CheckpointDiffParams,
    "undo": UndoParams,
    "check_write": CheckWriteParams,
    "claim_write": ClaimWriteParams,
    "shell_window": ShellWindowParams,
    "prompt_checkpoint": PromptCheckpointParams,
    "show": ShowParams,
    "history": HistoryParams,
    "blame": BlameParams,
    "stats": StatsParams,
}

TOOL_RESULTS: dict[str, type[Result]] = {
    "ping": PingResult,
    "status": StatusResult,
    "log": LogResult,
    "read_file": ReadFileResult,
    "read_many_files": ReadManyFilesResult,
    "edit": EditResult,
    "safe_patch": SafePatchResult,
    "apply_patch": ApplyPatchResult,
    "agent_status": AgentStatusResult,
    "edit_file": AtomicResult,
    "append_to_file": AtomicResult,
    "prepend_to_file": AtomicResult,
    "update_section": AtomicResult,
    "write_file": AtomicResult,
    "prepare_file_range_edit": HunkPlanResult,
    "prepare_file_append": HunkPlanResult,
    "prepare_file_insert_after": HunkPlanResult,
    "prepare_file_insert_before": HunkPlanResult,
    "prepare_file_block_replace": HunkPlanResult,
    "apply_file_modification": ApplyResult,
    "overwrite_entire_file": OverwriteResult,
    "list_hunks": ListHunksResult,
    "discard_hunk": DiscardHunkResult,
    "checkpoint_create": CheckpointCreateResult,
    "checkpoint_list": CheckpointListResult,
    "checkpoint_restore": CheckpointRestoreResult,
    "checkpoint_diff": CheckpointDiffResult,
    "undo": UndoResult,
    "check_write": CheckWriteResult,
    "claim_write": ClaimWriteResult,
    "shell_window": ShellWindowResult,
    "prompt_checkpoint": CheckpointCreateResult,
    "show": ShowResult,
    "history": HistoryResult,
    "blame": BlameResult,
    "stats": StatsResult,
}
