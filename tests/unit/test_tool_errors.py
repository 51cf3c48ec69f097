"""Every code a tool can return is in its guidance (issue 40's loose end).

"Can return" comes from the code, not from a list kept here: `schemas/toolerrors.py`
declares each method's codes and the daemon checks every refusal it sends against it
(it logs an undeclared one); this file checks that table against the handlers' own
source (every code a handler, or a handler module's function it reaches, raises is
declared for its method), against the catalogue (a new code must be declared for a
method or as not a tool's), and against what an agent reads: `instructions([tool])`,
the guidance an MCP server or `editjournal tools --instructions` gives for that tool.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import editjournal.daemon.handlers as handlers_package
from editjournal.client.tools.guidance import DESCRIPTIONS, instructions
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.toolerrors import (
    ANY_REQUEST,
    NOT_A_TOOLS,
    READING,
    TOOL_ERRORS,
    declared,
)
from editjournal.schemas.tools import TOOL_PARAMS

HANDLERS = Path(handlers_package.__file__).parent
PACKAGE = "editjournal.daemon.handlers"
DOCS = Path(__file__).resolve().parents[2] / "docs"
Ref = tuple[str, str]  # (module, function)


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(HANDLERS.glob("*.py"))}


MODULES = _modules()
FUNCTIONS: dict[Ref, ast.FunctionDef] = {
    (mod, node.name): node
    for mod, tree in MODULES.items()
    for node in tree.body
    if isinstance(node, ast.FunctionDef)
}


def _imports(mod: str) -> dict[str, Ref]:
    """Names `mod` imports from the other handler modules, to the function they name."""
    found: dict[str, Ref] = {}
    for node in ast.walk(MODULES[mod]):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{PACKAGE}."):
            source = (node.module or "").removeprefix(f"{PACKAGE}.")
            for alias in node.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


IMPORTS = {mod: _imports(mod) for mod in MODULES}


def _constants(mod: str) -> dict[str, str]:
    """The module's string constants (`APPLY = "apply_file_modification"`)."""
    return {
        target.id: node.value.value
        for node in MODULES[mod].body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }


def _handlers() -> dict[str, Ref]:
    """method -> the function `@handles(method)` registers."""
    found: dict[str, Ref] = {}
    for (mod, name), node in FUNCTIONS.items():
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "handles":
                arg = deco.args[0]
                method = arg.value if isinstance(arg, ast.Constant) else None
                if isinstance(arg, ast.Name):
                    method = _constants(mod)[arg.id]
                assert isinstance(method, str), ast.dump(arg)
                found[method] = (mod, name)
    return found


def _raised(node: ast.AST) -> set[str]:
    """The `ErrorCode.X` a function names, but not those it only compares with (a
    code it catches and lets through, or swallows)."""
    compared = {
        id(part)
        for cmp in ast.walk(node)
        if isinstance(cmp, ast.Compare)
        for part in [cmp.left, *cmp.comparators]
    }
    return {
        ErrorCode[ref.attr].value
        for ref in ast.walk(node)
        if isinstance(ref, ast.Attribute)
        and isinstance(ref.value, ast.Name)
        and ref.value.id == "ErrorCode"
        and id(ref) not in compared
    }


def _reached(start: Ref) -> Iterator[Ref]:
    """`start` and every handler-module function it names, transitively."""
    seen, todo = {start}, [start]
    while todo:
        mod, name = todo.pop()
        yield mod, name
        for ref in ast.walk(FUNCTIONS[(mod, name)]):
            if not isinstance(ref, ast.Name):
                continue
            found = (mod, ref.id) if (mod, ref.id) in FUNCTIONS else IMPORTS[mod].get(ref.id)
            if found in FUNCTIONS and found not in seen:
                seen.add(found)
                todo.append(found)


def raised_by(method: str) -> set[str]:
    return set().union(*(_raised(FUNCTIONS[ref]) for ref in _reached(_handlers()[method])))


def test_every_method_has_a_row_and_every_handler_is_found():
    assert set(TOOL_ERRORS) == set(TOOL_PARAMS)
    assert set(_handlers()) == set(TOOL_PARAMS)


def test_every_code_is_declared_for_a_method_or_as_no_tools():
    declared_codes = set().union(*TOOL_ERRORS.values())
    assert declared_codes.isdisjoint(NOT_A_TOOLS)
    assert declared_codes | NOT_A_TOOLS == set(ErrorCode)


@pytest.mark.parametrize("method", sorted(TOOL_PARAMS))
def test_a_code_a_handler_raises_is_declared_for_its_method(method: str):
    undeclared = sorted(c for c in raised_by(method) if not declared(method, c))
    assert undeclared == [], f"{method} raises codes schemas/toolerrors.py does not declare"


def mentions(text: str, code: ErrorCode) -> bool:
    return re.search(rf"\b{code.value}\b", text) is not None


@pytest.mark.parametrize("tool", sorted(DESCRIPTIONS))
def test_every_code_a_tool_can_return_is_in_its_guidance(tool: str):
    guidance = instructions([tool])
    missing = sorted(c.value for c in TOOL_ERRORS[tool] if not mentions(guidance, c))
    assert missing == [], f"{tool}'s guidance names none of these codes it can return"


@pytest.mark.parametrize("method", ["check_write", "claim_write"])
def test_the_hook_methods_own_codes_are_in_the_harness_docs(method: str):
    """Not an agent's tools (no guidance): the hook reads their refusals, a person the
    docs (docs/harnesses.md)."""
    text = (DOCS / "harnesses.md").read_text()
    own = TOOL_ERRORS[method] - ANY_REQUEST - READING
    missing = sorted(c.value for c in own if not mentions(text, c))
    assert missing == []
