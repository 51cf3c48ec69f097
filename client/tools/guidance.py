"""The tool descriptions and usage rules an agent reads before it calls a tool.

An agent learns how to use `read_file` and `edit` only from text: what the
rendered anchor rows mean, which operation fits which change, and what to do
with each error. That text decides whether anchored editing works, so it
lives here once instead of being paraphrased in every harness. It is too long
for a tool definition (OpenAI refuses a description over 1,024 characters), so
the definitions carry the short `summaries.SUMMARIES` and `instructions()`
gives this text — `TOOL_USE_RULES`, then each tool's `DESCRIPTIONS` entry — as
system-prompt text: the MCP server's instructions, or `editjournal tools
--instructions FILE`. The CLI's help shows `DESCRIPTIONS` too.

The spec's "System prompt SHALL ..." passages (anchor freshness, anchor
selection, the operation-selection matrix, multi-file order, parameter notes)
and the anchor-hash identity disclaimer are kept close to verbatim;
`tests/unit/test_guidance.py` checks each one, and that every operation,
edit error code and read_file parameter is mentioned. One deliberate change:
the daemon still accepts `file_path` with a warning during the transition,
so the parameter notes say so rather than claim it is rejected already.
"""

from __future__ import annotations

from editjournal.schemas.tools import DEFAULT_MAX_LINES

ANCHOR_HASH_IDENTITY_DISCLAIMER = (
    "In read_file output the line number is advisory (snapshot position) only, and the hash "
    "is the authoritative identity for edit operations."
)

ANCHOR_FRESHNESS_RULE = (
    "Anchor freshness: After reading a file with read_file(hashes: true), apply edits to that "
    "file in the same response turn or the immediate next turn. Do not read file A, then read "
    "file B, then later edit file A — the anchors from A will be stale and cause cross-version "
    "conflicts. Process one file completely (read → edit) before reading anchors for another "
    "file."
)

ANCHOR_SELECTION_GUIDANCE = (
    "Anchor selection guidance: Prefer lines with unique, distinctive content as anchors. "
    "Avoid anchoring on empty lines, closing braces (}), or frequently repeated boilerplate "
    "(e.g., position: fixed;, display: flex; in CSS, </div> in HTML). For files with "
    "repetitive content, use replace_range with two unique boundary anchors instead of "
    "replace_line — range operations enforce uniqueness on both endpoints: an endpoint anchor "
    "that identical lines share is resolved by the line number copied with it (LINE#ANCHOR, "
    "the number you read it at) and rejected if that number does not single one out. When a "
    "replace_line anchor matches multiple lines, copy it with its line number the same way; "
    "without a read of the file, use the occurrence field (1-indexed) and line field "
    "(advisory line number) together to disambiguate."
)

OPERATION_SELECTION_MATRIX = """\
Operation selection:

| Situation | Recommended Operation |
|---|---|
| Change a single line with unique content | replace_line |
| Change a contiguous block of lines | replace_range |
| Insert new content between two existing lines | insert_after / insert_before |
| Remove a single unique line | delete_line |
| Remove a contiguous block of lines | delete_range |
| Target line is repetitive (empty line, }, boilerplate) | replace_range wrapping it with unique neighbor anchors |
| Several separate changes in one file | one edit call with several operations |
| Target line is marked ? (identical lines share its anchor) | its anchor copied whole as LINE#ANCHOR: the number picks the one you read (a blank ?: end a replace_range on it) |"""  # noqa: E501 - a markdown table row is one line

MULTI_FILE_EDITING_RULE = (
    "Multi-file editing: When modifying multiple files, complete all operations on one file "
    "before moving to the next. Batch operations targeting the same file into a single edit "
    "call where possible (all operations in one call are atomic against the same snapshot). "
    "Avoid interleaving reads and edits across different files — read A → edit A → read B → "
    "edit B, not read A → read B → edit A → edit B."
)

PARAMETER_NOTES = """\
Parameter notes:
- Use path to specify the file; file_path is deprecated (accepted for now with a warning) \
and will be rejected.
- replace_line / delete_line / insert_after / insert_before use hash (single anchor).
- replace_range / delete_range use start_hash + end_hash (two anchors).
- Mixing these (e.g., start_hash on a replace_line) causes validation failure."""

# The state-verified patch protocol (seed 002, section 6), close to verbatim; "session-unique"
# versions are journal seqs here: unique and increasing across all agents and restarts.
SAFE_PATCH_READ_GUIDANCE = (
    "Reads the content of a file and returns it along with a session-unique version number and "
    "a SHA-256 hash. This versioned data is required for safely modifying files with the "
    "`safe_patch` tool."
)

READ_MANY_FILES_GUIDANCE = (
    "Reads the content of multiple files and returns an array of objects, where each object "
    "contains the file content along with a session-unique version number and a SHA-256 hash. "
    "This versioned data is required for safely modifying files."
)

SAFE_PATCH_USAGE_PROTOCOL = """\
Applies a set of changes to a file using a unified diff patch. This is the preferred tool for \
all file modifications.

**Usage Protocol:**
1.  To use this tool, you must operate on the latest version of the file available in your \
context. Identify this by finding the file content with the **highest version number**.
2.  If no versioned content is available, you **MUST** call `read_file` or `read_many_files` \
first to get it.
3.  When generating the `unified_diff`, you **MUST** include at least 10 lines of unchanged \
context around each change hunk (equivalent to `diff -U 10`) to ensure the patch can be \
applied reliably.
4.  You **MUST** provide the `sha256` hash that was returned with that version as the \
`base_content_sha256` parameter. This hash acts as a lock; the operation will fail if the \
file has been modified since you read it."""

READ_FILE_DESCRIPTION = f"""\
Read a text file of the workspace. Every read is recorded as your snapshot of the file: the \
anchors it shows are what edit checks your operations against. {SAFE_PATCH_READ_GUIDANCE}

Parameters:
- path: the file, relative to the workspace root (or absolute inside it). file_path is a \
deprecated alias of path: it still works but earns a warning, and path wins when both are \
given.
- hashes: true to get line anchors for edit (default false). Read with hashes: true before \
you edit.
- range: which lines, 1-based and inclusive: "A-B", "A-" (A to the end) or "A" (one line). \
Or use offset (first line, 1-based) and limit (number of lines) instead; not both.
- max_lines: the most lines served in one read (default {DEFAULT_MAX_LINES}). When a read \
is cut short, truncated is true and end_line is the last line served; read on from \
end_line + 1.
- since_version: a version you read before. Returns only what changed since then: \
unchanged: true when nothing did, otherwise delta (the changed hunks, new lines shown as \
LINE#ANCHOR with fresh anchors) and lines (the changed lines). Cheaper than a full re-read \
after someone else edited the file; afterwards your anchors for the whole file are current.
- at_version: a version from history(path) or a reply. Returns the file as the journal \
stored it then (read-only: it records nothing and does not change your snapshot, so its \
anchors are not for editing). Not together with since_version.

Returns file_path, version (higher is newer, across all agents), sha256 (of the whole file \
on disk, even for a partial read), line_count, content (the served lines with their line \
endings), start_line, end_line, truncated, eol, bom, final_newline and size.

With hashes: true it also returns lines (line, hash, quality, text, kind, unique for each \
line) and rendered, one row per line in the form LINE#ANCHOR|text:

    1#a5ac1e|def foo():
    2#f5d78c|    return 1
    3#b8c2a5~|}}

LINE is the 1-based line number; it is advisory only (the position in this snapshot). \
ANCHOR is a short content hash of the line and is what edit uses to find it. The text after \
the first | is the line exactly as in the file; it is not part of the anchor. Anchors are \
computed over the whole file, so a partial read shows the same anchors as a full one.
- A ~ after the anchor marks a low-quality line: blank, a bracket or punctuation line such \
as }}, or boilerplate repeated 3 or more times. Do not use it as the anchor of a single-line \
operation; anchor on a distinctive neighbor or wrap it in a replace_range. (A boilerplate \
line that is marked ~ only because it repeats can still be targeted by the context anchor \
read_file shows for it, by an occurrence, or by the line number that picks it among \
identical lines; blank and bracket lines never can.)
- A ? after the anchor marks a line that no anchor identifies uniquely: an identical line \
with identical neighbors elsewhere in the file, a run of blank lines too (? is shown \
before ~). Its anchor names every twin; copy it whole with its line number (LINE#ANCHOR, \
or give line) and the number picks the one you read at that line, even after others moved \
lines: it is read in the file as you read it (with your own edits since) and followed to \
the file as it is now. Refused only when it cannot pick: the line changed since \
(anchor_stale), or the number names no twin in the file as you were shown it \
(anchor_ambiguous, anchor_context_ambiguous). Without a read of the file, occurrence \
(1-indexed, counting the twins from the top) picks. A blank or bracket ? line is still no \
single-line target: end a range on it.

Errors: invalid_range (range, offset or limit outside the file or malformed), and with \
at_version: unknown_seq (past the journal's last event), file_not_in_journal (never \
recorded), version_not_stored (the file did not exist then, or its content was not \
kept: history(path) lists the stored versions)."""

EDIT_DESCRIPTION = f"""\
Edit one text file by content-hash anchors taken from read_file(hashes: true), where each \
row reads LINE#ANCHOR|text. {ANCHOR_HASH_IDENTITY_DISCLAIMER} If an anchor no longer matches \
the file, the edit is rejected; it is never applied to whatever now sits at that line number.

Call with path, operations (a list of one or more) and optionally skip_safety_check \
(default false), e.g.
{{"path": "src/app.py", "operations": [
  {{"op": "replace_line", "hash": "a1b2c3", "content": "    return x + 1"}},
  {{"op": "insert_after", "hash": "12#d4e5f6", "content": "log(x)\\nlog(y)"}},
  {{"op": "delete_range", "start_hash": "0f1e2d", "end_hash": "9a8b7c"}}]}}

Operations (op picks one):
- replace_line: hash, content, optional occurrence and line. Replaces the line with content.
- insert_after: hash, content, optional occurrence and line. Inserts content after the line.
- insert_before: hash, content, optional occurrence and line. Inserts content before the line.
- delete_line: hash, optional occurrence and line. Deletes the line.
- replace_range: start_hash, end_hash, content. Replaces the lines from start to end, \
both included.
- delete_range: start_hash, end_hash. Deletes the lines from start to end, both included.

Anchors may be given as "a1b2c3" or copied whole as "12#a1b2c3" (a copied ~ or ? is \
ignored; a copied line number counts as the advisory line). content is the new text only, \
with no anchors or line numbers; separate lines with \\n; a final newline is optional and "" \
is one empty line. The file keeps its line endings, BOM and final-newline state. Do not \
repeat the anchor line itself in the content of insert_after or insert_before.

{PARAMETER_NOTES}

Batches: all operations of one call are atomic against one snapshot. Every anchor is \
resolved before anything changes, and one bad anchor rejects the whole batch; nothing is \
written, and the error lists every problem it found (under problems: when there \
are several). Operations address the initial snapshot, not each other's results: take every \
anchor from your read, and do not shift anything to allow for earlier operations in the \
batch. Two operations that touch the same line are rejected as overlapping_operations; \
merge them into one.

{ANCHOR_FRESHNESS_RULE}

{ANCHOR_SELECTION_GUIDANCE}

{OPERATION_SELECTION_MATRIX}

{MULTI_FILE_EDITING_RULE}

On success the reply has message ("N operations applied"), version, sha256, lines_before, \
lines_after, net_change, anchors_valid_through and must_refresh_from_line: your earlier \
anchors are still good for lines up to anchors_valid_through; from must_refresh_from_line \
on, use the new anchors or re-read. diff shows the changed region as LINE#ANCHOR|text rows \
with the new anchors, and changed_lines lists the new lines with theirs; you can keep \
editing with those without re-reading. auto_corrections and warnings report anything \
adjusted, such as a reversed range that was swapped (range_order_swapped) or an occurrence \
that disagreed with line (the occurrence wins).

Other agents may edit the same file. Your anchors are resolved in the version you last \
read (or last wrote) and carried to the current file: an edit whose lines nobody else \
changed still applies (the reply says rebased_from_version), while an edit that relies on a \
line someone changed — or on a range someone inserted into — is refused, never applied to \
the wrong line.

Errors (by code, then what to do); the file is unchanged after any error:
- anchor_stale: a line your operation relies on changed since you read the file (or the \
anchor matches nothing). The conflicts it lists name who changed it (seq, agent, kind, \
lines; "an outside writer" for a change made outside the daemon) and the delta shows what \
changed, new lines with fresh anchors: retry with those anchors in the same turn, no \
re-read needed. Without a delta, re-read the file.
- anchor_ambiguous: a hash matches several lines and no line number picked one. Give \
the anchor with the line number you read it at (LINE#ANCHOR); when the message says that \
number does not single one out (lines moved between your read and your write), re-read \
the file, or add occurrence (1-indexed) and line. The candidates it lists give each \
line's number and text.
- anchor_context_ambiguous: the anchor matches identical lines with identical neighbors \
and no line number picked one. Give it with the line number you read it at; or, for a \
range endpoint, choose a unique boundary (a distinctive line nearby, widening the range); \
for a single-line operation, add occurrence and line.
- anchor_low_entropy: the target is a blank, bracket or boilerplate line. Use one of \
the neighbour anchors it lists, or a replace_range around it.
- invalid_range_order: start_hash and end_hash resolve to the same line. Use replace_line \
or delete_line.
- overlapping_operations: two operations touch the same line. Merge them.
- safety_check_failed: the edit looked like a mistake and was not written, e.g. its first \
or last new line repeats the line next to the edit, or it changes the bracket balance. Read \
the safety warnings (the message itself, or listed under it when there are several) and \
fix the operations. Pass skip_safety_check: true only when you \
are sure the edit is what you intend.
- invalid_params: a field is missing, misspelt or belongs to another op; the message names \
it."""

TOOL_USE_RULES = f"""\
## Tool Use Rules

Edit files with edit, using anchors from read_file(hashes: true). \
{ANCHOR_HASH_IDENTITY_DISCLAIMER}

{ANCHOR_FRESHNESS_RULE}

{MULTI_FILE_EDITING_RULE}

{ANCHOR_SELECTION_GUIDANCE}

{OPERATION_SELECTION_MATRIX}"""

READ_MANY_FILES_DESCRIPTION = f"""\
{READ_MANY_FILES_GUIDANCE}

Call with paths (a list of one or more), and optionally hashes and max_lines as read_file \
takes them. Returns files: one item per path, in order, each with file_path, ok, and either \
result (what read_file returns: version, sha256, content, ...) or error (that file's error; \
the other files are still read): invalid_range as read_file, or read_budget_exceeded \
(the files before it took the bytes one call may read: read it in another call)."""

SAFE_PATCH_DESCRIPTION = f"""\
{SAFE_PATCH_USAGE_PROTOCOL}

Call with path, unified_diff and base_content_sha256, e.g.
{{"path": "src/app.py", "base_content_sha256": "<sha256 from read_file>", "unified_diff": \
"--- a/src/app.py\\n+++ b/src/app.py\\n@@ -3,3 +3,3 @@\\n def f(x):\\n-    return x\\n+    \
return x + 1\\n \\n"}}
file_path is a deprecated alias of path. Hunks are found by their context and removed lines, \
whatever line numbers the @@ headers state (the nearest occurrence wins when a block repeats); \
wrong header counts are recounted. All hunks apply or none. The file keeps its line endings \
and BOM; "\\ No newline at end of file" adds or removes the final newline. A diff from \
/dev/null creates a file (base_content_sha256 is then the SHA-256 of empty content, \
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855); a diff to /dev/null \
deletes it.

Options: include_content (default true): false leaves the whole content out of \
latest_file_state, to spare your context. rebase (default false): when the file changed since \
your base version, apply the diff over the newer content anyway, but only if none of the lines \
your hunks remove (or, for an addition, the lines around it) changed; context lines only find \
the place and may have changed (auto_corrections says so, as context_carried). The reply \
then says rebased_from_version and rebased_over. skip_safety_check (default false), as for \
edit.

Every reply carries latest_file_state {{file_path, version, sha256, content}}: on success the \
file as written (success true, message "Patch applied successfully.", hunks says where each \
hunk was applied); on an error, the file as it is now, shown after the error. Use \
it to retry at once.

Errors (by code); the file is unchanged after any error:
- state_mismatch: "State Mismatch: File has changed on disk since it was last read." When \
your base is a version the daemon recorded, the conflicts it lists name who changed the \
lines your hunks rely on (seq, agent, kind, lines) and the delta shows every change since, \
with fresh anchors: redo the diff against the file as it is now, or pass rebase: true when \
it lists no conflicts.
- invalid_diff: "Invalid Diff: The provided diff content does not match the file's \
content. The context or lines to be removed may be incorrect." The message names the hunk \
and its first row that did not match, and what the file has there; also for a malformed \
diff, a diff of several files, or overlapping hunks.
- patch_failed: "Internal Error: The corrected patch failed to apply. Please review the diff \
for subtle errors."
- safety_check_failed: as for edit; fix the diff, or pass skip_safety_check: true."""

APPLY_PATCH_FORMAT = """\
The patch is OpenAI's apply_patch envelope (Codex's format): file operations between \
"*** Begin Patch" and "*** End Patch", each starting with a header line:
- "*** Add File: PATH", then the new file's lines, each prefixed with +.
- "*** Delete File: PATH", nothing after it.
- "*** Update File: PATH", optionally "*** Move to: NEW_PATH" (a rename), then hunks: \
each starts with "@@" (or "@@ " and a class or function line that narrows the search; \
stack several @@ lines to narrow further), then lines that start with " " (context), "-" \
(removed) or "+" (added). "*** End of File" after a hunk pins it to the end of the file.
Show 3 lines of context above and below each change (not repeated between close changes); \
there are no line numbers: a hunk is found by its context and - lines. Paths are relative \
to the workspace, never absolute. Example:
*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch"""

APPLY_PATCH_DESCRIPTION = f"""\
Change one or many files in one call, all or nothing: if any operation cannot apply, no \
file is changed. Choose it to change several files together (a rename and its callers, \
say), or when you write this patch format naturally; for one change to one file, edit \
(anchors from read_file), safe_patch (a unified diff) or edit_file (a string replacement) \
serve as well.

{APPLY_PATCH_FORMAT}

Call with patch (the text above), or with operations in the Responses API's shape: a list \
of {{"type": "create_file" | "update_file" | "delete_file", "path": ..., "diff": ...}} \
(create_file's diff is the + lines, update_file's the @@ hunks, optionally "move_to"). \
skip_safety_check (default false) as for edit.

Read a file before you change it: the daemon knows which version you saw. When someone \
else changed the file since, your hunks are still applied over their changes if the lines \
you change are untouched (rebased_from_version says so); otherwise the patch is refused. \
An Add File over an existing file replaces it (a warning names whose changes it replaced \
when you had not seen them); over one that changed since you read it, it is refused.

Returns message ("Success. Updated the following files:" then A, M or D and each path) \
and files: for each file its path, action (added, updated, moved, deleted), moved_from, \
version, sha256, lines_before, lines_after, diff (the changed region with new anchors, \
for edit), hunks (where each landed) and overwrote_unseen.

Errors (by code); no file is changed after any error, and the operation: and path: \
lines under the message name the operation:
- invalid_diff: the patch is malformed; line: is its line (for operations, of that \
operation's diff).
- no_match: a hunk's context or - lines are not in the file; the message names the hunk, \
the first line not found and the file's most similar lines. Read the file and redo the \
hunk.
- anchor_stale: lines your hunk changes were changed by someone else since you read the \
file; the conflicts it lists name who (seq, agent, kind) and the delta shows the changes \
with fresh content. Redo the hunk from the delta.
- file_not_found: an Update or Delete of a file that does not exist.
- invalid_params: two operations change the same file (put them in one), or neither or \
both of patch and operations.
- safety_check_failed, path_outside_workspace, path_protected, permission_denied: as for \
edit."""

AGENT_STATUS_DESCRIPTION = """\
Lists every file you (or the agent you name) have read or written, the version you saw, and \
whether it changed since: current false means someone else (another agent, or a change made \
outside the daemon) changed it after you saw it, and changed_since names each change (seq, \
agent, kind; agent null for an outside change). Call it when you resume work or are unsure \
which of your anchors are still good; re-read a stale file with read_file(since_version: \
version_seen) to get just what changed, with fresh anchors.

Call with no parameters for yourself, or with agent to ask about another agent. Returns \
agent, files (path, version_seen, sha256_seen, lines_seen, current, current_version, \
current_sha256, changed_since, unseen_lines: lines of the version you saw that you were \
never shown) and stale_files (how many are not current)."""

# The atomic text tools (seed 004): for agents whose context is compacted, so they cannot
# hold a file to rewrite it. The seed's "Tool Selection Guide" table, verbatim.
TOOL_SELECTION_GUIDE = """\
| Scenario | Tool |
|----------|------|
| Change a specific value | `edit_file` |
| Add new entry/section | `append_to_file` |
| Update markdown section | `update_section` |
| Create new file | `write_file` |
| Full file replacement (rare) | Read first, then `write_file` |"""

ATOMIC_TOOLS_NOTE = f"""\
Atomic tools: the daemon reads, changes and writes the file in one step, so you never need \
to hold the file in your context. Prefer them to rewriting a whole file.

{TOOL_SELECTION_GUIDE}

Every change is journaled; the file keeps its line endings and BOM. If you read the file \
earlier and someone else changed the lines your call touches since, the call is refused \
anchor_stale: the conflicts it lists name who changed them and the delta shows the change \
with fresh anchors; retry with what it shows. If you never read the file, it simply applies."""

EDIT_FILE_DESCRIPTION = f"""\
Replace old_string with new_string in a file, without reading it first. old_string must \
match exactly, whitespace and indentation included (write line breaks as \\n; they match \
the file's own endings), and must be unique in the file unless you pass \
expected_replacements, the exact number of places to change.

Call with path, old_string, new_string and optionally expected_replacements and \
skip_safety_check, e.g. {{"path": "workspace.md", "old_string": "Status: Initializing", \
"new_string": "Status: Phase 2 complete"}}

{ATOMIC_TOOLS_NOTE}

Errors (by code); the file is unchanged after any error:
- no_match: "old_string not found in PATH. Make sure it matches exactly (including \
whitespace)." The closest similar lines are listed under it with their anchors: a hint \
only, never applied. Copy the text exactly and retry.
- multiple_matches: "old_string appears N times in PATH. Include more surrounding context to \
make it unique." The lines it occurs at are listed under it (lines:).
- anchor_stale: the lines your replacement changes were changed by someone else since you \
last saw the file (see above); the delta shows them with fresh anchors.
- safety_check_failed: as for edit.

If the text is no longer in the file but is in the version you last saw, the edit still \
lands when the lines it changes are untouched: the rest of old_string is context, used to \
find the place (the reply's auto_corrections says which context lines changed since)."""

APPEND_TO_FILE_DESCRIPTION = f"""\
Add content at the end of a file, without reading it first; the file (and its directories) \
is created when missing. Use it to add new entries, notes or sections. When the file does \
not end with a newline, one is added before content (the reply says separator_added).

Call with path and content, e.g. {{"path": "workspace.md", "content": "## New \
Accomplishment\\n- Extracted 47 requirements\\n"}}

{ATOMIC_TOOLS_NOTE}"""

PREPEND_TO_FILE_DESCRIPTION = f"""\
Add content at the start of a file, without reading it first; the file (and its \
directories) is created when missing. content becomes whole lines before the first line \
(separator_added says a newline was put after content that had none).

Call with path and content. {ATOMIC_TOOLS_NOTE}"""

UPDATE_SECTION_DESCRIPTION = f"""\
Replace the content of one section of a markdown file: everything after its header up to \
the next header of the same or a higher level (sub-sections included). The header stays; \
headers inside fenced code blocks are not headers.

Call with path, section_header (e.g. "## Current State"; without #s it matches a header of \
any level) and new_content (without the header), e.g. {{"path": "workspace.md", \
"section_header": "## Current State", "new_content": "Phase: 2\\nStatus: Processing"}}

{ATOMIC_TOOLS_NOTE}

Errors: section_not_found (the message lists the headers that exist), \
section_ambiguous (several headers match; the message gives their lines: give the level), \
anchor_stale (someone changed the section since you saw it)."""

WRITE_FILE_DESCRIPTION = f"""\
Create a file with content (its directories inside the workspace are created too), or fill \
an empty one. Use it for new files; to change part of an existing file use edit_file, \
append_to_file or update_section. On an existing file you have not read since its last \
change, the file is still written, but with a warning that names the changes you \
overwrote (overwrote_unseen: seq, agent, kind): read first, then write_file.

Call with path and content. Returns message ("Created: PATH (N bytes)" or "Written: ...") \
and version, sha256 and diff as edit does.

{TOOL_SELECTION_GUIDE}"""

# Prepare first, apply once (seed 003): every incremental edit is planned and reviewed,
# and only apply_file_modification writes.
PREPARE_APPLY_RULES = """\
Prepare first, apply once: a prepare_* tool plans an edit and writes nothing. Its reply \
is the plan to review: summary (YAML-style), evidence (what matched where: line numbers, \
the matched text, the file's sha256 and version when planned), diff (unified), hunk_id, \
expires_at_ms (hunks live 1 hour unless the workspace configures otherwise) and \
normalized.* (file_eof_newline_added / content_eof_newline_added: every written line ends \
with a newline, the last one too). Then, in a LATER message (tools called in one message \
run in parallel and cannot see each other's results), apply it: \
apply_file_modification({"hunk_id": "<hunk_id>"}).

Rules: hunk_ids are made by the daemon, never by you. To change a plan, prepare again \
with existing_hunk_id set to your pending hunk of the same kind (another kind's hunk is \
refused hunk_kind_mismatch); omit existing_hunk_id (or pass "") for a new hunk. Only the \
agent that prepared a hunk may apply or discard it; a hunk applies at most once. Hunks \
survive a daemon restart until they expire; list_hunks shows yours, discard_hunk drops one.

Hunk errors (apply_file_modification, discard_hunk, existing_hunk_id): hunk_not_found \
(no such hunk: prepare again), hunk_expired (prepare again), wrong_owner (another agent's \
hunk: prepare your own), hunk_identity_mismatch (prepared under your agent name by \
another client, one holding another credential: a name alone does not make it yours; \
prepare your own), hunk_already_applied (read the file to see it), hunk_kind_mismatch \
(existing_hunk_id is another prepare tool's hunk).

If your provider makes every parameter required, these values mean "not given": \
existing_hunk_id: "", occurrence: "" or 0, match: "" (the default, contains; match is the \
match MODE, not the text to find), range: "", content_format: "" (and on read_file \
range: "", max_lines: 0)."""

PREPARE_FILE_RANGE_EDIT_DESCRIPTION = f"""\
Plan replacing lines of a file; nothing is written. Lines A..B (1-based, inclusive) \
become content ("" deletes them): give range "A-B" (or "A" for one line), or start_line \
and end_line.

Call with path, range (or start_line/end_line), content and optionally existing_hunk_id, \
e.g. {{"path": "notes.md", "range": "3-4", "content": "Status: done\\n"}}

{PREPARE_APPLY_RULES}

Errors: invalid_range (outside the file, or not "A-B"), file_not_found, and the hunk \
errors of existing_hunk_id (above)."""

PREPARE_FILE_APPEND_DESCRIPTION = f"""\
Plan adding content at the end of a file; nothing is written. The file is created when \
missing. The reply also has blankline_style (blank lines above/below the content) and \
style_warning (a double blank line, or a last line without newline that the content would \
glue onto).

Call with path, content and optionally existing_hunk_id.

{PREPARE_APPLY_RULES}"""

PREPARE_FILE_INSERT_AFTER_DESCRIPTION = f"""\
Plan inserting content after an anchor line; nothing is written. anchor is text: \
match "contains" (default: the line contains it), "exact" (the whole line) or "regex" \
(Python syntax, searched in each line); or a line anchor from read_file(hashes: true) \
such as "12#a1b2c3". When it matches several lines, pass occurrence (1-based) to choose \
one. The reply has blankline_style and style_warning (double blank lines).

Call with path, anchor, content and optionally match, occurrence, existing_hunk_id, e.g. \
{{"path": "app.py", "anchor": "import os", "match": "exact", "content": "import sys\\n"}}

{PREPARE_APPLY_RULES}

Errors: no_match (nothing matches, or fewer matches than occurrence), multiple_matches \
(the message lists their lines: pass occurrence), invalid_params (a bad regex), regex_timeout \
(the regex took too long: simplify it or use "contains"), for a line anchor the anchor \
errors of edit (anchor_stale: the line changed since you read it, re-read; \
anchor_ambiguous, anchor_context_ambiguous: give it with its line number, or occurrence; \
anchor_low_entropy: anchor on a distinctive line), and the hunk errors of existing_hunk_id."""

PREPARE_FILE_INSERT_BEFORE_DESCRIPTION = PREPARE_FILE_INSERT_AFTER_DESCRIPTION.replace(
    "inserting content after an anchor line", "inserting content before an anchor line"
)

PREPARE_FILE_BLOCK_REPLACE_DESCRIPTION = f"""\
Plan replacing a block of text; nothing is written. The exact text old_block (one or more \
whole or partial lines; line breaks as \\n) becomes new_block. old_block must be unique, or \
pass occurrence (1-based) to choose which place.

Call with path, old_block, new_block and optionally occurrence, existing_hunk_id.

{PREPARE_APPLY_RULES}

Errors: no_match, multiple_matches (the message lists their lines), and the hunk errors of \
existing_hunk_id."""

APPLY_FILE_MODIFICATION_DESCRIPTION = f"""\
Write a prepared hunk. This is the only way a plan made by a prepare_* tool is written; \
call it in a later message than the prepare. If the file changed since the plan was made, the \
plan is carried over the changes when the lines it relies on are untouched (the reply \
says rebased_from_version); otherwise it is refused apply_rejected, its conflicts \
naming who changed those lines and its delta showing the changes with fresh anchors: \
prepare again. The reply carries apply_evidence (the version planned against and the one \
applied to), applied_diff (unified), diff (changed lines with new anchors) and normalized.*.

Call with hunk_id, e.g. {{"hunk_id": "h3f9a0c1b2e"}}

{PREPARE_APPLY_RULES}

Errors: the hunk errors above (hunk_already_applied names the write that applied it), \
apply_rejected, write_access_denied (the workspace does not let you write)."""

OVERWRITE_ENTIRE_FILE_DESCRIPTION = """\
Replace a file's whole content. The file is created when missing. For a change to part \
of a file prefer prepare_* + apply_file_modification. Content that looks like a diff or \
patch (@@ hunk headers, ---/+++ file headers, diff --git, *** Begin Patch) is refused \
content_looks_like_diff, since a patch written as a file's content destroys it; if you \
mean to store such text as it is, declare it with content_format: "text" \
(content_format: "" means not declared). Every line ends with a newline, the last one \
too (normalized.content_eof_newline_added says one was added).

Call with path, content and optionally content_format.

Errors: content_looks_like_diff, write_access_denied."""

LIST_HUNKS_DESCRIPTION = """\
List your pending hunks. Those prepared, not applied and not expired, of one file (path) \
or all, oldest first: hunk_id, kind, path, created_at_ms, expires_at_ms, base_version and the \
plan's diff. Hunks it finds expired are reported in expired and dropped."""

DISCARD_HUNK_DESCRIPTION = """\
Drop a pending hunk. One of yours (hunk_id), without applying it. Errors: hunk_not_found, \
hunk_expired, wrong_owner (another agent's hunk), hunk_identity_mismatch (prepared under \
your agent name by another client), hunk_already_applied."""

SHOW_DESCRIPTION = """\
Shows one journal event by its seq (the version a reply gave): every field, and for a \
write or an outside change the unified diff of what it changed. Records nothing. Use it to \
see exactly what another agent's change did before you build on it.

Call with seq, e.g. {"seq": 42}. Returns event (seq, ts, agent, kind, path, summary, \
hash, body, diff), before_sha256 and after_sha256. Errors: unknown_seq."""

HISTORY_DESCRIPTION = """\
Lists every version of a file, oldest first: seq, ts, agent, author (the agent that wrote \
the content, or "outside"), kind, writer, sha256 (null: removed), stored, line_count and \
lines added/removed. read_file(path, at_version: seq) shows any stored version. Records \
nothing. Errors: file_not_in_journal."""

BLAME_DESCRIPTION = """\
For each current line of a file: the seq, agent, kind and time of the event that last wrote \
it ("outside" for changes made outside the daemon and for lines that were already there when \
the journal first saw the file). at_version blames the file as it was then. Records nothing.

Call with path, e.g. {"path": "src/app.py"}. Errors: file_not_in_journal, \
version_not_stored (the file did not exist then, or its content was not kept), \
unknown_seq (at_version is past the journal's last event)."""

STATS_DESCRIPTION = """\
Per agent (or only agent): reads, applied_writes, rejected_writes, rejections by error code, \
rebased_edits (applied over others' changes made since the agent's last view), and recovery: \
from an agent's first rejected write to a file to its next applied write there, \
mean_recovery_events / _ms / _attempts, with unrecovered rejections counted. Records nothing."""

CHECKPOINT_CREATE_DESCRIPTION = """\
Record a checkpoint: the whole workspace as it is now, to come back to with \
checkpoint_restore (before a risky change, or at the end of a phase). It covers every file \
that is not ignored (.gitignore, .editjournalignore, .git/), read or not, whoever wrote it; \
or only paths (files, or directories: every file below). It costs little: contents are \
stored once, by hash, and unchanged files are known by their stat.

Call with an optional name (unique; default "checkpoint-SEQ"; not only digits) and optional \
paths (a named file that does not exist is recorded as absent, so a restore can remove it). \
Returns id (the checkpoint's seq: an id works wherever a name does), name, file_count, \
total_bytes, files (the first 100: path, sha256, size) and not_text (binary or too large \
files: listed, not held, left alone by a restore).

Errors: checkpoint_exists (the name is taken: the message gives that checkpoint's id)."""

CHECKPOINT_LIST_DESCRIPTION = """\
List every checkpoint, oldest first: id (its seq), name, ts, agent, file_count, \
total_bytes, scope (the paths it covers; empty: the whole workspace). No parameters."""

CHECKPOINT_DIFF_DESCRIPTION = """\
Show what changed since a checkpoint, per file, without restoring anything: modified \
(with lines_added, lines_removed and a unified diff), created, deleted, or not_text \
(changed, but not text: a restore leaves it alone), each with changed_by (the journal's \
changes since: seq, agent, kind; agent null for an outside change).

Call with id_or_name, optionally paths (files or directories) and patch: false for no \
diffs. Errors: checkpoint_not_found."""

CHECKPOINT_RESTORE_DESCRIPTION = """\
Write a checkpoint's contents back, byte for byte: every file it covers that changed since \
(by any agent, any tool or an outside writer; deleted files are recreated), or only paths. \
All or nothing: if any file is refused, none is written. Files created since are kept \
(kept_new, with a warning) unless remove_new: true removes them.

Call with id_or_name (the checkpoint's name or id, e.g. "before-refactor" or "12"), \
optionally paths and remove_new. Returns message, version, and files: for each file written \
its action (restored, recreated or removed), version, sha256, overwrote_sha256 (what it \
replaced) and changed_since (every change since the checkpoint: seq, agent, kind; agent \
null for an outside change), with diff; unchanged_count, and left_alone (changed binary or \
too large files it cannot put back). Each file's write is journaled as edit_applied by \
writer restore, so undo reverts it like any write.

Errors: checkpoint_not_found (the message lists the latest names); invalid_params when it \
would write more than 1,000 files: restore it in the parts its message names (by directory), \
one call each with those paths, each all or nothing."""

UNDO_DESCRIPTION = """\
Revert your latest write to a file (or another agent's with agent, or the write at seq). \
It works when the lines that write changed still read as it left them, compared by \
content: a later write that was undone, or changes that cancel out, do not stand in the \
way; other changes elsewhere in the file are kept (rebased_over names them). An undo is \
itself a write (writer undo): calling undo again on the same file undoes the undo, \
restoring the write. A write that created the file is undone by removing it; one that \
deleted it, by recreating it.

Call with path, optionally agent (whose latest write; default you) or seq (the write's \
version; the version of a checkpoint_restore names its write to path). Returns what edit \
returns (message, version, sha256, diff with new anchors, ...) and undone (seq, agent, \
writer, ts).

Or take back everything one agent wrote: call with by (the agent; no path) and \
optionally since (a checkpoint's name or id, or a seq: only its writes after that) and \
dry_run: true (the per-file diffs, nothing written). Every applied write of that agent, \
through any tool, in every file, is reverted over everyone else's later changes, which \
stay; files it created are removed, files it deleted come back; all files or none (at \
most 1000 files: give a later since past that). Each file's write is journaled as yours, \
naming by; undo with by set to you puts it all back. Returns message, version, and files: \
per file its action (reverted, removed, recreated, or unchanged: not written), version, \
undone_seqs, rebased_over and diff. To rewind a session: by the session's agent, since \
the checkpoint of that turn.

Errors; no file is changed after any error:
- undo_conflict: lines the write changed differ now; the conflicts it lists name the writes \
whose changes are still there (seq, agent, kind, lines). Undo the latest by its seq, then \
this write again by its seq (the suggested action names both calls), or edit the file \
yourself; an outside change has no undo. With by: a line the agent wrote that someone \
else changed since refuses the whole undo; the message names the file and its lines, \
the delta shows the changes.
- nothing_to_undo: no applied write of that agent to the file, or seq is not a write to \
it; with by, no write of that agent after since.
- checkpoint_not_found: since names no checkpoint (and is not a seq).
- write_identity_mismatch: a plain undo (no seq, no agent) takes back only your own \
latest write, and the latest write under your agent name was made by another client (one \
holding another credential). Undo it by the seq the message names, if you mean to."""

COMMON_ERRORS = """\
## Errors any tool can meet

Besides each tool's own errors above; every refusal's message says what happened and \
what to do.
- Any call: invalid_params or bad_request (a field is missing, mistyped or unknown; the \
message names it: fix the call), request_too_large (split the change into smaller calls), \
idempotency_key_reused (that key was used for another request: use a fresh key for each \
request), internal_error (the daemon failed; nothing was changed), journal_corrupt, \
journal_unavailable or disk_full (the journal could not record the call; nothing was \
changed: tell the user), daemon_stopping (the daemon was stopping and did not run the \
call; nothing was changed: make the same call again).
- A tool that reads a file by path: path_outside_workspace, file_not_found, \
is_a_directory, binary_file, not_utf8 (only UTF-8 text is served), file_too_large and \
file_too_many_lines (over the daemon's limits: leave the file, or ask the user), \
permission_denied.
- A tool that writes (nothing is written after any of these): path_protected (nothing \
under .git/ is written), hard_linked, read_only_file (the file has no write bit: ask the \
user), write_access_denied (the workspace does not let you write), config_invalid (the \
workspace's .editjournal/config.toml cannot be read: tell the user), file_changing (the \
file kept changing while it was written: retry once the other writer is done), \
write_displaced (someone saved the same lines as your write landed, and theirs were \
kept: read the file again and redo your change), anchor_stale (lines your change relies \
on changed since you saw them: the conflicts it lists name who, the delta shows the \
change)."""

DESCRIPTIONS: dict[str, str] = {
    "read_file": READ_FILE_DESCRIPTION,
    "read_many_files": READ_MANY_FILES_DESCRIPTION,
    "edit": EDIT_DESCRIPTION,
    "safe_patch": SAFE_PATCH_DESCRIPTION,
    "apply_patch": APPLY_PATCH_DESCRIPTION,
    "agent_status": AGENT_STATUS_DESCRIPTION,
    "edit_file": EDIT_FILE_DESCRIPTION,
    "append_to_file": APPEND_TO_FILE_DESCRIPTION,
    "prepend_to_file": PREPEND_TO_FILE_DESCRIPTION,
    "update_section": UPDATE_SECTION_DESCRIPTION,
    "write_file": WRITE_FILE_DESCRIPTION,
    "prepare_file_range_edit": PREPARE_FILE_RANGE_EDIT_DESCRIPTION,
    "prepare_file_append": PREPARE_FILE_APPEND_DESCRIPTION,
    "prepare_file_insert_after": PREPARE_FILE_INSERT_AFTER_DESCRIPTION,
    "prepare_file_insert_before": PREPARE_FILE_INSERT_BEFORE_DESCRIPTION,
    "prepare_file_block_replace": PREPARE_FILE_BLOCK_REPLACE_DESCRIPTION,
    "apply_file_modification": APPLY_FILE_MODIFICATION_DESCRIPTION,
    "overwrite_entire_file": OVERWRITE_ENTIRE_FILE_DESCRIPTION,
    "list_hunks": LIST_HUNKS_DESCRIPTION,
    "discard_hunk": DISCARD_HUNK_DESCRIPTION,
    "show": SHOW_DESCRIPTION,
    "history": HISTORY_DESCRIPTION,
    "blame": BLAME_DESCRIPTION,
    "stats": STATS_DESCRIPTION,
    "checkpoint_create": CHECKPOINT_CREATE_DESCRIPTION,
    "checkpoint_list": CHECKPOINT_LIST_DESCRIPTION,
    "checkpoint_restore": CHECKPOINT_RESTORE_DESCRIPTION,
    "checkpoint_diff": CHECKPOINT_DIFF_DESCRIPTION,
    "undo": UNDO_DESCRIPTION,
}


def instructions(methods: list[str]) -> str:
    """The long guidance for a set of tools, as system-prompt text: the tool-use rules
    (they are about `edit`, so only with it), then each tool's full description, then
    the errors any of them can meet (`COMMON_ERRORS`, once rather than in every tool's
    text: schemas/toolerrors.py says which tool can meet which)."""
    parts = [TOOL_USE_RULES] if "edit" in methods else []
    parts += [f"## {m}\n\n{DESCRIPTIONS[m]}" for m in methods if m in DESCRIPTIONS]
    if any(m in DESCRIPTIONS for m in methods):
        parts.append(COMMON_ERRORS)
    return "\n\n".join(parts) + "\n"
