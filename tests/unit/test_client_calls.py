"""The client's typed calls are the params Structs' fields, with the Structs' defaults.

`client/library/calls.py` is generated from `schemas.tools` (client/tools/callgen.py): this holds
the committed file to what the generator writes now, and the methods of both clients
to the Structs, so a field added to a tool's params reaches `Client` and
`AsyncClient` or fails here.
"""

from __future__ import annotations

import inspect

import msgspec
import pytest

from editjournal.client import AsyncClient, Client
from editjournal.client.library.exchange import encoded_params, wire_params
from editjournal.client.tools.callgen import CALLS_PATH, DEPRECATED_ALIASES, source
from editjournal.schemas.tools import (
    TOOL_PARAMS,
    EditParams,
    LogParams,
    ReadFileParams,
    ReplaceLine,
)


def test_the_committed_calls_are_what_callgen_writes_now() -> None:
    assert CALLS_PATH.read_text(encoding="utf-8") == source(), (
        "client/library/calls.py is stale: run `python -m editjournal.client.tools.callgen`"
    )


@pytest.mark.parametrize("client_class", [Client, AsyncClient])
@pytest.mark.parametrize("method", sorted(TOOL_PARAMS))
def test_each_tool_is_a_method_taking_its_params_fields_with_their_defaults(
    client_class: type, method: str
) -> None:
    call = getattr(client_class, method)
    assert inspect.iscoroutinefunction(call) == (client_class is AsyncClient)
    parameters = dict(inspect.signature(call).parameters)
    parameters.pop("self")
    fields = [
        f for f in msgspec.structs.fields(TOOL_PARAMS[method]) if f.name not in DEPRECATED_ALIASES
    ]
    assert sorted(parameters) == sorted(f.name for f in fields)
    for field in fields:
        given = parameters[field.name]
        if given.default is inspect.Parameter.empty:  # required: path, or a required field
            assert field.required or field.name == "path", (method, field.name)
        elif field.default is not msgspec.NODEFAULT:
            assert given.default == field.default, (method, field.name)


def test_a_struct_with_no_required_field_takes_its_first_positionally() -> None:
    assert list(inspect.signature(Client.stats).parameters)[:2] == ["self", "agent"]
    kinds = {p.name: p.kind for p in inspect.signature(Client.log).parameters.values()}
    assert kinds["path"] is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert kinds["limit"] is inspect.Parameter.KEYWORD_ONLY


def test_only_what_differs_from_a_default_is_sent() -> None:
    assert wire_params(LogParams()) == {}
    assert wire_params(LogParams(path="a.txt", limit=50, patch=True)) == {
        "path": "a.txt",
        "patch": True,
    }
    # a sentinel the Struct turns into its default is not sent either
    assert wire_params(ReadFileParams(path="a.txt", max_lines=0)) == {"path": "a.txt"}


def test_operations_go_out_as_structs_or_as_the_dicts_given() -> None:
    op = ReplaceLine(hash="1#abcd", content="x")
    as_struct = encoded_params("edit", EditParams(path="a", operations=[op]))
    as_dict = encoded_params(
        "edit",
        {"path": "a", "operations": [{"op": "replace_line", "hash": "1#abcd", "content": "x"}]},
    )
    # the daemon reads both as the same params (an unset optional field goes out as null)
    decoded = [msgspec.msgpack.decode(b, type=EditParams) for b in (as_struct, as_dict)]
    assert decoded[0] == decoded[1]
