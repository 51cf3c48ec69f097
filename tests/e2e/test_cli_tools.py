"""`editjournal tools`: definitions for a profile or a list, the long guidance to a file,
and what each set costs in tokens. No daemon is needed for any of it."""

from __future__ import annotations

import json
from pathlib import Path

from editjournal.client.tools.guidance import DESCRIPTIONS, TOOL_USE_RULES
from editjournal.client.tools.summaries import SUMMARIES
from editjournal.client.tools.tooldefs import agent_methods
from tests.e2e.cli_support import cli


def test_the_default_is_every_tool_with_its_short_description():
    done = cli(None, "tools", "--format", "anthropic")
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)
    assert [t["name"] for t in tools] == agent_methods()
    assert all(t["description"] == SUMMARIES[t["name"]] for t in tools)


def test_a_profile_and_its_instructions_file(tmp_path: Path):
    guide = tmp_path / "system-prompt.md"
    done = cli(
        None, "tools", "--format", "openai", "--profile", "anchored", "--instructions", str(guide)
    )
    assert done.returncode == 0, done.stderr
    names = [t["function"]["name"] for t in json.loads(done.stdout)]
    assert names == ["read_file", "edit", "agent_status"]
    text = guide.read_text(encoding="utf-8")
    assert text.startswith(TOOL_USE_RULES)
    assert all(DESCRIPTIONS[name] in text for name in names)
    assert DESCRIPTIONS["safe_patch"] not in text


def test_a_list_of_tools_in_gemini_shape():
    done = cli(None, "tools", "--format", "gemini", "--tools", "undo, read_file")
    assert done.returncode == 0, done.stderr
    declarations = json.loads(done.stdout)["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["read_file", "undo"]


def test_an_unknown_tool_or_profile_is_a_usage_error():
    done = cli(None, "tools", "--tools", "read_file,rename_symbol")
    assert done.returncode == 2
    assert "unknown tool rename_symbol; the tools are read_file" in done.stderr
    done = cli(None, "tools", "--profile", "tiny")
    assert done.returncode == 2 and "tiny" in done.stderr


def test_stats_give_each_profiles_size_in_tokens():
    done = cli(None, "tools", "--format", "openai", "--stats")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "openai format; tokens estimated as characters / 4"
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert list(rows) == ["minimal", "anchored", "patch", "all"]
    assert rows["all"][0] == str(len(agent_methods())) and rows["anchored"][0] == "3"
    chars, tokens = (int(n.replace(",", "")) for n in rows["all"][1:3])
    assert tokens == -(-chars // 4)


def test_stats_as_json_with_a_chosen_set():
    done = cli(None, "--json", "tools", "--format", "mcp", "--tools", "read_file", "--stats")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["name"] for r in rows] == ["minimal", "anchored", "patch", "all", "--tools"]
    chosen = rows[-1]
    assert chosen["tools"] == 1 and chosen["tokenizer"] == "characters / 4"
    assert chosen["instructions_tokens"] == -(-chosen["instructions_chars"] // 4)
