"""The short tool descriptions: what each tool does and when to use it, in a few lines.

A tool definition's description must pass every harness's API (OpenAI refuses one
over 1,024 characters, see `vendor_limits`) and is paid for in tokens on every
request, so the definitions carry these summaries; the full usage guidance
(`guidance.DESCRIPTIONS`, with `TOOL_USE_RULES`) travels once, as system-prompt
text: the MCP server's instructions, or `editjournal tools --instructions FILE`.
Each summary still has to stand alone — some clients cut or drop the
instructions — so the anchored tools keep the facts a model cannot guess: the row
format, the operations, what a refusal hands back. Pure data: no I/O.
"""

from __future__ import annotations

from editjournal.client.tools.guidance import (
    CHECKPOINT_LIST_DESCRIPTION,
    DISCARD_HUNK_DESCRIPTION,
    HISTORY_DESCRIPTION,
    LIST_HUNKS_DESCRIPTION,
    STATS_DESCRIPTION,
)

READ_FILE_SUMMARY = """\
Read a text file of the workspace; the read is recorded as your snapshot of it. Read \
before you change a file. Returns version (higher is newer, across all agents), sha256 \
(of the whole file), content, line_count. With hashes: true each line is also shown as \
LINE#ANCHOR|text, e.g. 12#a1b2c3|return x: the ANCHOR is what edit targets, the line \
number is advisory only; ~ after an anchor marks a line too weak to anchor on (blank, \
bracket, boilerplate), ? one whose identical twins share its anchor (blank runs too): \
copied whole with its number, LINE#ANCHOR, it picks the one you read. range "A-B" reads \
part of a file; a long read stops at max_lines with truncated: true (read on from end_line + 1). \
since_version: V returns only what changed since V, with fresh anchors. at_version: V \
shows a stored version (read-only: not for editing). version and sha256 are the base a \
safe_patch needs."""

EDIT_SUMMARY = """\
Edit one file by line anchors from read_file(hashes: true), rows LINE#ANCHOR|text: the \
anchor is the line's identity, the number only advisory. operations (one or more, all \
applied or none): replace_line, insert_after, insert_before, delete_line take hash \
(for a ? line copy LINE#ANCHOR whole: the number picks the twin you read); \
replace_range, delete_range take start_hash and end_hash (both included). content is \
the new text only, lines separated by \\n. Take every anchor from your read: operations \
do not shift each other. Put all changes to a file in one call and finish it (read, \
edit) before reading the next. Do not anchor on ~ or blank ? lines: use replace_range \
between distinctive neighbours. The reply's diff has the new anchors: keep editing with \
them. A line someone changed since your read is refused anchor_stale with the delta it \
shows holding fresh anchors: retry with those at once. The file is unchanged after any \
error."""

SAFE_PATCH_SUMMARY = """\
Apply a unified diff to one file, locked by the content it was made from: \
base_content_sha256 is the sha256 read_file returned for the highest version you have \
(read the file first). Give each hunk 10 lines of context (diff -U 10). Hunks are found \
by their context, not the @@ numbers; all apply or none. If the file changed since, it \
is refused state_mismatch; rebase: true applies it over others' changes when none of \
your hunks' lines changed. A diff from /dev/null creates a file (base: the sha256 of \
empty content), one to /dev/null deletes it. Every reply, and every error, carries \
latest_file_state (version, sha256, content) to retry from at once; include_content: \
false leaves the content out."""

APPLY_PATCH_SUMMARY = """\
Change one or many files in one call, all or nothing, with OpenAI's apply_patch format: \
patch is "*** Begin Patch", then "*** Add File: PATH" (+ lines), "*** Delete File: PATH" \
or "*** Update File: PATH" (optionally "*** Move to: NEW") with hunks: "@@" (optionally \
a class or def line), then " " context, "-" removed, "+" added lines, 3 lines of context \
around each change, no line numbers; then "*** End Patch". Or operations in the \
Responses API's shape (create_file, update_file, delete_file with diff). Read files \
first: a hunk whose lines someone changed since is refused anchor_stale with the delta; \
one not found is no_match with the nearest lines. Paths are relative."""

AGENT_STATUS_SUMMARY = """\
List the files you (or agent) have read or written, the version you saw and whether it \
changed since: current false, with changed_since naming each change (seq, agent, kind; \
agent null for an outside change). Call it when you resume work or are unsure which \
anchors are still good; re-read a stale file with read_file(since_version: \
version_seen) to get only what changed, with fresh anchors."""

READ_MANY_FILES_SUMMARY = """\
Read several files in one call (paths), each as read_file would (version, sha256, \
content; hashes and max_lines as there). One item per path, in order, with result or \
error: one file's error does not stop the others."""

ATOMIC_NOTE = (
    "The daemon reads, changes and writes the file in one step: no read needed first, "
    "and a change that meets someone else's change to the same lines is refused "
    "anchor_stale with the change shown."
)

EDIT_FILE_SUMMARY = f"""\
Replace old_string with new_string in a file. old_string must match exactly \
(whitespace and indentation too; line breaks as \\n) and be unique, or pass \
expected_replacements, the exact count. Use it to change a value or a few lines; \
prefer it to rewriting a file. {ATOMIC_NOTE} no_match lists the closest similar lines \
under it (copy the text exactly and retry); multiple_matches wants more \
context. The file is unchanged after any error."""

APPEND_TO_FILE_SUMMARY = f"""\
Add content at the end of a file (a newline is put first when the file lacks one); the \
file and its directories are created when missing. Use it for new entries, notes or \
sections. {ATOMIC_NOTE}"""

PREPEND_TO_FILE_SUMMARY = f"""\
Add content at the start of a file, as whole lines before the first; the file and its \
directories are created when missing. {ATOMIC_NOTE}"""

UPDATE_SECTION_SUMMARY = f"""\
Replace the body of one markdown section: everything after its header up to the next \
header of the same or a higher level. section_header e.g. "## Status" (without #s it \
matches any level); new_content without the header. {ATOMIC_NOTE} section_not_found \
lists the headers; section_ambiguous wants the level."""

WRITE_FILE_SUMMARY = """\
Create a file with content (its directories too), or fill an empty one. Use it for new \
files; to change part of an existing file use edit_file, append_to_file or \
update_section. Over an existing file you have not read since its last change it still \
writes, with a warning naming the changes you overwrote."""

PLAN_NOTE = (
    "Nothing is written: the reply is the plan (summary, diff, hunk_id). Apply it in a "
    'LATER message with apply_file_modification({"hunk_id": ...}); to change it, '
    "prepare again with existing_hunk_id."
)

PREPARE_FILE_RANGE_EDIT_SUMMARY = f"""\
Plan replacing lines A..B of a file (range "A-B", 1-based, inclusive) with content; "" \
deletes them. {PLAN_NOTE}"""

PREPARE_FILE_APPEND_SUMMARY = f"""\
Plan adding content at the end of a file (created when missing). {PLAN_NOTE}"""

PREPARE_FILE_INSERT_AFTER_SUMMARY = f"""\
Plan inserting content after the line that anchor finds: text matched as match says \
("contains", the default; "exact"; "regex"), or a line anchor such as "12#a1b2c3"; \
occurrence picks one of several matches. {PLAN_NOTE}"""

PREPARE_FILE_INSERT_BEFORE_SUMMARY = PREPARE_FILE_INSERT_AFTER_SUMMARY.replace(
    "inserting content after", "inserting content before"
)

PREPARE_FILE_BLOCK_REPLACE_SUMMARY = f"""\
Plan replacing the exact text old_block (one or more lines, line breaks as \\n) with \
new_block; old_block must be unique, or occurrence picks one. {PLAN_NOTE}"""

APPLY_FILE_MODIFICATION_SUMMARY = """\
Write a hunk planned by a prepare_* tool (its hunk_id), in a later message than the \
prepare. If the file changed since the plan, it lands when the lines it relies on are \
untouched; otherwise it is refused apply_rejected, the delta it shows holding the \
changes: prepare again. Only the agent that prepared a hunk may apply it, once."""

OVERWRITE_ENTIRE_FILE_SUMMARY = """\
Replace a file's whole content (created when missing). For a change to part of a file \
prefer prepare_* + apply_file_modification. Content that looks like a diff is refused \
content_looks_like_diff unless content_format: "text" says it is meant."""

CHECKPOINT_CREATE_SUMMARY = """\
Record a checkpoint to come back to with checkpoint_restore, before a risky change or \
at the end of a phase: the whole workspace (every file not ignored) as it is now, or \
only paths. Cheap: contents are stored once, by hash. name is optional and unique; the \
reply's id works wherever a name does."""

CHECKPOINT_DIFF_SUMMARY = """\
Show what changed since a checkpoint, per file (modified with a diff, created, \
deleted), and who changed it; restores nothing. patch: false leaves out the diffs."""

CHECKPOINT_RESTORE_SUMMARY = """\
Put back a checkpoint's files byte for byte: every file it covers that changed since, \
by anyone (deleted files recreated), or only paths; all or nothing. Files created since \
are kept unless remove_new: true. Each write is journaled, so undo reverts it; \
checkpoint_diff shows first what would change."""

UNDO_SUMMARY = """\
Revert your latest write to a file (or agent's, or the write at seq) when the lines it \
changed still read as it left them (by content); other changes in the file are kept. \
by: every write of that agent in every file (since a checkpoint or seq; dry_run to \
preview), all or nothing. An undo is a write too: undo again to redo. Refused \
undo_conflict (the conflicts it lists name the writes still in the way) or \
nothing_to_undo."""

SHOW_SUMMARY = """\
Show one journal event by its seq (a version from a reply): its fields and, for a write \
or an outside change, the diff. Use it to see exactly what another agent's change did. \
Records nothing."""

BLAME_SUMMARY = """\
For each current line of a file, the event that last wrote it: seq, agent, kind, time \
("outside" for changes made outside the daemon). at_version blames an older version. \
Records nothing."""

SUMMARIES: dict[str, str] = {
    "read_file": READ_FILE_SUMMARY,
    "read_many_files": READ_MANY_FILES_SUMMARY,
    "edit": EDIT_SUMMARY,
    "safe_patch": SAFE_PATCH_SUMMARY,
    "apply_patch": APPLY_PATCH_SUMMARY,
    "agent_status": AGENT_STATUS_SUMMARY,
    "edit_file": EDIT_FILE_SUMMARY,
    "append_to_file": APPEND_TO_FILE_SUMMARY,
    "prepend_to_file": PREPEND_TO_FILE_SUMMARY,
    "update_section": UPDATE_SECTION_SUMMARY,
    "write_file": WRITE_FILE_SUMMARY,
    "prepare_file_range_edit": PREPARE_FILE_RANGE_EDIT_SUMMARY,
    "prepare_file_append": PREPARE_FILE_APPEND_SUMMARY,
    "prepare_file_insert_after": PREPARE_FILE_INSERT_AFTER_SUMMARY,
    "prepare_file_insert_before": PREPARE_FILE_INSERT_BEFORE_SUMMARY,
    "prepare_file_block_replace": PREPARE_FILE_BLOCK_REPLACE_SUMMARY,
    "apply_file_modification": APPLY_FILE_MODIFICATION_SUMMARY,
    "overwrite_entire_file": OVERWRITE_ENTIRE_FILE_SUMMARY,
    "list_hunks": LIST_HUNKS_DESCRIPTION,  # the guidance is short already
    "discard_hunk": DISCARD_HUNK_DESCRIPTION,
    "show": SHOW_SUMMARY,
    "history": HISTORY_DESCRIPTION,
    "blame": BLAME_SUMMARY,
    "stats": STATS_DESCRIPTION,
    "checkpoint_create": CHECKPOINT_CREATE_SUMMARY,
    "checkpoint_list": CHECKPOINT_LIST_DESCRIPTION,
    "checkpoint_diff": CHECKPOINT_DIFF_SUMMARY,
    "checkpoint_restore": CHECKPOINT_RESTORE_SUMMARY,
    "undo": UNDO_SUMMARY,
}
