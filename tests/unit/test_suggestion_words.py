"""One source says what to do; each surface says it in its own words.

The daemon spells a suggested call `method({...})` with the real arguments
(`schemas.suggestions`); the CLI renders each as the command that makes it
(`hints`), the MCP server keeps it a tool call (`mcp_text`). Every catalogue
code's CLI rendering is checked for the daemon's spelling, with and without the
details its suggestion is made from; every call the suggestions make resolves to a
real command of the real click group.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest

from editjournal.client.cli.app import cli as editjournal_group
from editjournal.client.cli.hints import HintContext, cli_text, command_for, suggestion
from editjournal.client.library.errors import RequestError
from editjournal.client.views.mcp_text import error_text
from editjournal.client.views.render import error_lines, flags_named
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.suggestions import SUGGESTIONS, call, calls_in
from editjournal.schemas.tools import TOOL_PARAMS

WIRE_CALL = re.compile(rf"\b(?:[a-z]+(?:_[a-z]+)+|{'|'.join(TOOL_PARAMS)})\(")
COMMAND = re.compile(r"`(editjournal [^`]+)`")
CONFLICTS = [{"seq": 7, "agent": "bob", "kind": "edit_applied", "lines": [2]}]
DETAILS: list[dict[str, Any]] = [
    {},  # the catalogue's fixed words
    {  # what the daemon's errors carry: every suggestion made from them
        "path": "src/my app.py",
        "size": 20_000_000,
        "lines": 250_000,
        "seq": 3,
        "last_seq": 42,
        "your_version": 5,
        "conflicts": CONFLICTS,
        "count": 3,
        "workspace": "/tmp/ws",
    },
    {"path": "a.py", "delta": {"from_version": 3, "to_version": 5, "diff": "@@ -1 +1 @@"}},
    {"path": "a.py", "field": "anchor", "count": 2, "lines": [1, 4]},  # a prepare_* anchor
]
CTX = HintContext(
    command=lambda *words: shlex.join(["editjournal", *words, "--workspace", "/tmp/ws"]),
    root=Path("/tmp/ws"),
    path="a.py",
    program=editjournal_group,
)


def wire_error(code: ErrorCode, details: dict[str, Any], message: str = "m") -> RequestError:
    """The error as a client gets it: the daemon's `ToolError` over the wire."""
    return RequestError.from_wire(ToolError(code, message, dict(details)).to_wire())


def cli_rendering(code: ErrorCode, details: dict[str, Any]) -> str:
    error = wire_error(code, details, "the message")
    return click.unstyle("\n".join(error_lines(error, suggestion(error, CTX))))


def resolved(argv: list[str]) -> click.Context:
    """`argv` parsed by the real group down to its command: a usage error raises."""
    command: click.Command = editjournal_group
    name, rest, parent = argv[0], argv[1:], None
    while isinstance(command, click.Group):
        ctx = command.make_context(name, list(rest), parent=parent)
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        found, sub, rest = command.resolve_command(ctx, rest)
        assert found is not None and sub is not None
        name, command, parent = found, sub, ctx
    return command.make_context(name, list(rest), parent=parent)


def parses(argv: list[str]) -> None:
    """`resolved`, where `--help` (which exits at once, 0) counts as parsed."""
    try:
        resolved(argv)
    except click.exceptions.Exit as e:
        assert e.exit_code == 0 and "--help" in argv, argv


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.value)
def test_no_code_reads_as_a_tool_call_at_a_terminal(code: ErrorCode):
    for details in DETAILS:
        shown = cli_rendering(code, details)
        assert not WIRE_CALL.search(shown), shown
        assert "re-read_file" not in shown and "details." not in shown.split("\n")[-1]
        for span in COMMAND.findall(shown):
            for part in span.split(" && "):
                parses(shlex.split(part))  # every command parses as printed


def test_every_call_a_suggestion_makes_is_a_real_command():
    for details in DETAILS[1:]:
        for make in SUGGESTIONS.values():
            for found in calls_in(make(details) or "", TOOL_PARAMS):
                words = command_for(found.method, found.params, editjournal_group)
                assert words is not None, found
                resolved(["editjournal", *words])


@pytest.mark.parametrize(
    ("method", "params", "command"),
    [
        ("read_file", {"path": "a b.py", "since_version": 3}, ["read", "a b.py", "--since", "3"]),
        ("read_file", {"path": "a.py", "hashes": True}, ["read", "a.py", "--hashes"]),
        ("list_hunks", {}, ["list-hunks"]),
        (
            "apply_file_modification",
            {"hunk_id": "h1"},
            ["apply-file-modification", "--hunk-id", "h1"],
        ),
        ("checkpoint_list", {}, ["checkpoint", "list"]),
        (
            "checkpoint_restore",
            {"id_or_name": "cp", "paths": ["a", "b"], "remove_new": True},
            ["checkpoint", "restore", "cp", "--path", "a", "--path", "b", "--remove-new"],
        ),
        (
            "undo",
            {"path": "a.py", "agent": "bob", "seq": 7},
            ["undo", "a.py", "--of", "bob", "--seq", "7"],
        ),
        ("history", {"path": "a.py"}, ["history", "a.py"]),
        ("show", {"seq": 5}, ["show", "5"]),
        ("log", {"path": "a.py", "agent": "bob"}, ["log", "--path", "a.py", "--by", "bob"]),
        ("edit", {"path": "a.py", "operations": []}, None),  # operations go on stdin
    ],
)
def test_a_call_becomes_the_command_that_makes_it(method, params, command):
    assert command_for(method, params, editjournal_group) == command
    if command is not None:
        resolved(["editjournal", *command])


def test_a_call_no_command_takes_goes_to_call_with_its_params_on_stdin():
    said = cli_text(call("edit", path="a.py", operations=[]), CTX.command, editjournal_group)
    params = """'{"path": "a.py", "operations": []}'"""
    assert said == f"`echo {params} | editjournal call edit --workspace /tmp/ws`"


def test_calls_are_found_again_as_they_were_made():
    made = [call("read_file", path='a "b".py', since_version=3), call("list_hunks")]
    text = f"see {made[0]}, then {made[1]}; not this: foo({{}}) or read_file(x)"
    found = calls_in(text, TOOL_PARAMS)
    assert [(f.method, f.params) for f in found] == [
        ("read_file", {"path": 'a "b".py', "since_version": 3}),
        ("list_hunks", {}),
    ]
    assert [text[f.start : f.end] for f in found] == made


def test_a_param_to_pass_is_named_as_its_option():
    assert flags_named("pass rebase: true to apply it") == "pass --rebase to apply it"
    assert flags_named('pass content_format: "text"') == "pass --content-format text"
    assert flags_named("pass occurrence (1-based)") == "pass --occurrence (1-based)"
    assert flags_named("pass skip_safety_check: true") == "pass --skip-safety-check"
    assert flags_named("it may pass the test") == "it may pass the test"


def test_a_warning_or_message_is_put_in_the_clis_words():
    warning = "kept 1 file(s) (n.txt); " + call(
        "checkpoint_restore", id_or_name="cp", remove_new=True
    )
    restore = "editjournal checkpoint restore cp --remove-new --workspace /tmp/ws"
    assert (
        cli_text(warning, CTX.command, editjournal_group) == f"kept 1 file(s) (n.txt); `{restore}`"
    )


def test_the_mcp_server_keeps_the_calls_with_their_real_arguments():
    for code, needle in [
        (ErrorCode.NOTHING_TO_UNDO, 'history({"path": "src/my app.py"})'),
        (ErrorCode.UNDO_CONFLICT, 'undo({"path": "src/my app.py", "seq": 7})'),
        (ErrorCode.UNKNOWN_SEQ, 'show({"seq": 42})'),
        (ErrorCode.CHECKPOINT_NOT_FOUND, "checkpoint_list({})"),
    ]:
        details = DETAILS[1]
        error = wire_error(code, details)
        assert needle in error_text(error).split("suggested action: ")[1]


def test_a_stale_anchor_with_a_delta_says_no_re_read_is_needed_on_both_surfaces():
    details = DETAILS[2]
    error = wire_error(ErrorCode.ANCHOR_STALE, details)
    for shown in (error_text(error), cli_rendering(ErrorCode.ANCHOR_STALE, details)):
        action = shown.split("suggested action: ")[1]
        assert action.startswith("retry at once with the fresh anchors of the delta above")
        assert "no re-read needed" in action
