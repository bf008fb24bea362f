"""JSON Schemas (draft 2020-12) of every ``rollcert-protocol`` message, shipped as package data.

One file per message and version: ``v1.<op>.request.json``, ``v1.<op>.reply.json``,
``v2.<op>.request.json``, ``v2.<op>.reply.json``, and the same with ``v2.1``. An author of a server in
another language validates the lines their server reads and writes against
them; rollcert's tests validate its own client's requests and the reference
server's replies, and check that the schemas and the Python validator of
:mod:`rollcert.targets.protocol` agree.

The files are built from the operation tables of that module (the one source
of truth of the wire format) by :func:`build_schemas`, and written with
``python -m rollcert.targets.protocol_schemas``; a test fails if the
shipped files and the tables drift apart. What a schema cannot say is left to
the Python validator and said in each file's ``description``: a reply carries
its request's id (a schema sees one message), a line is at most 16 MiB, an
integer at most 100 digits, nesting at most 32 deep.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any
from typing import Final

from rollcert.model.reference import POLICIES
from rollcert.targets.protocol import CAPABILITIES_BY_VERSION
from rollcert.targets.protocol import DURABILITY_MODES
from rollcert.targets.protocol import OPERATIONS_BY_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION_2
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
#: The short tag of each version in the file names.
VERSION_TAGS: Final = {PROTOCOL_VERSION: "v1", PROTOCOL_VERSION_2: "v2", PROTOCOL_VERSION_2_1: "v2.1"}
#: The two messages of every operation.
KINDS: Final = ("request", "reply")

#: Standard base64 with padding: what ``base64.b64decode(..., validate=True)`` takes.
_BASE64: Final = {
    "type": "string",
    "contentEncoding": "base64",
    "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
}
_INTEGER: Final = {"type": "integer"}

_LIMITS_NOT_IN_SCHEMA: Final = (
    "Not expressed here (the Python validator of rollcert.targets.protocol checks them): "
    "a line is at most 16 MiB, an integer has at most 100 digits and no fraction or exponent, "
    "arrays and objects nest at most 32 deep."
)


def schema_name(protocol: str, op: str, kind: str) -> str:
    """The file name of one message's schema."""
    return f"{VERSION_TAGS[protocol]}.{op}.{kind}.json"


def load_schema(protocol: str, op: str, kind: str) -> dict[str, Any]:
    """The shipped schema of ``op``'s ``kind`` ("request" or "reply") in ``protocol``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if op not in OPERATIONS_BY_VERSION.get(protocol, {}):
        raise ValueError(f"{op!r} is not an operation of {protocol!r}")
    text = resources.files(__package__).joinpath(schema_name(protocol, op, kind)).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _wire_type(wire_type: str) -> dict[str, Any]:
    """The schema of one wire type of ``protocol.OperationSpec``."""
    if wire_type == "int":
        return dict(_INTEGER)
    if wire_type == "int-or-null":
        return {"type": ["integer", "null"]}
    if wire_type == "bytes":
        return dict(_BASE64)
    if wire_type == "string":
        return {"type": "string"}
    if wire_type == "null":
        return {"type": "null"}
    if wire_type == "bool":
        return {"type": "boolean"}
    if wire_type == "string-list":
        return {"type": "array", "items": {"type": "string"}}
    if wire_type == "durability":
        return {"enum": list(DURABILITY_MODES)}
    if wire_type == "hunks":
        return {
            "type": "array",
            "description": "[start, end, replacement] in the snapshot's byte offsets",
            "items": {"type": "array", "prefixItems": [_INTEGER, _INTEGER, _BASE64], "minItems": 3, "maxItems": 3},
        }
    if wire_type == "regions":
        return {
            "type": "array",
            "description": "[start, end] read regions in the snapshot's byte offsets",
            "items": {"type": "array", "prefixItems": [_INTEGER, _INTEGER], "minItems": 2, "maxItems": 2},
        }
    raise ValueError(f"no schema for wire type {wire_type!r}")


def _hello_result(protocol: str) -> dict[str, Any]:
    capabilities = sorted(capability.value for capability in CAPABILITIES_BY_VERSION[protocol])
    capability_list: dict[str, Any] = {"type": "array", "items": {"enum": capabilities}}
    properties: dict[str, Any] = {
        "protocol": {"const": protocol},
        "name": {"type": "string", "minLength": 1},
        "version": {"type": "string"},
        "capabilities": capability_list,
    }
    required = ["protocol", "name", "version", "capabilities"]
    if protocol == PROTOCOL_VERSION:
        capability_list["contains"] = {"const": "core"}
    else:
        capability_list["anyOf"] = [{"contains": {"const": "core"}}, {"contains": {"const": "diffs"}}]
        size = {"type": ["integer", "null"], "minimum": 1}
        properties["limits"] = {
            "type": "object",
            "required": ["alphabet", "max_buffer_bytes", "max_insert_bytes"],
            "properties": {
                "alphabet": {"anyOf": [{"type": "null"}, {**_BASE64, "minLength": 1}]},
                "max_buffer_bytes": size,
                "max_insert_bytes": dict(size),
            },
        }
        required.append("limits")
    if protocol == PROTOCOL_VERSION_2_1:
        properties["history_bound"] = {
            "description": (
                "optional: null (or absent) when a bounded history honours both policies; else the one "
                "policy of the server's bounded history (needs capability bounded)"
            ),
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["policy"],
                    "additionalProperties": False,
                    "properties": {
                        "policy": {"enum": list(POLICIES)},
                        "description": {"type": "string"},
                    },
                },
            ],
        }
    return {"type": "object", "required": required, "properties": properties}


def build_schemas() -> dict[str, dict[str, Any]]:
    """Every message's schema, by file name, from the operation tables."""
    schemas: dict[str, dict[str, Any]] = {}
    for protocol, operations in OPERATIONS_BY_VERSION.items():
        for op, spec in operations.items():
            request = {
                "$schema": DIALECT,
                "$id": f"urn:rollcert:{VERSION_TAGS[protocol]}:{op}:request",
                "title": f"{protocol} {op} request",
                "description": f"One line from the client: the {op} request. {_LIMITS_NOT_IN_SCHEMA}",
                "type": "object",
                "required": ["id", "op", *spec.fields],
                "properties": {
                    "id": dict(_INTEGER),
                    "op": {"const": op},
                    **{name: _wire_type(wire_type) for name, wire_type in spec.fields.items()},
                },
            }
            if "mode" in spec.fields:
                request["properties"]["mode"]["description"] = (  # type: ignore[index]
                    '"positional" or "content"; another mode is a malformed diff the implementation refuses '
                    "(ValueError), not a malformed request"
                )
            result = _hello_result(protocol) if spec.result == "hello" else _wire_type(spec.result)
            reply = {
                "$schema": DIALECT,
                "$id": f"urn:rollcert:{VERSION_TAGS[protocol]}:{op}:reply",
                "title": f"{protocol} {op} reply",
                "description": (
                    f"One line from the server: its answer to a {op} request, a result or an error. "
                    "It must carry the request's id (an error to a line that could not be read carries null). "
                    + _LIMITS_NOT_IN_SCHEMA
                ),
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["id", "ok", "result"],
                        "properties": {"id": dict(_INTEGER), "ok": {"const": True}, "result": result},
                    },
                    {
                        "type": "object",
                        "required": ["id", "ok", "error"],
                        "properties": {
                            "id": {"type": ["integer", "null"]},
                            "ok": {"const": False},
                            "error": {
                                "type": "object",
                                "description": "kind: a name of rollcert.model.errors, or ProtocolError",
                                "required": ["kind"],
                                "properties": {"kind": {"type": "string", "minLength": 1}, "message": {"type": "string"}},
                            },
                        },
                    },
                ],
            }
            schemas[schema_name(protocol, op, "request")] = request
            schemas[schema_name(protocol, op, "reply")] = reply
    return schemas


def render(schema: dict[str, Any]) -> str:
    """A schema as its file holds it."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path | None = None) -> list[Path]:
    """Write every schema file (into this package's folder by default)."""
    folder = directory if directory is not None else Path(__file__).parent
    written = []
    for name, schema in build_schemas().items():
        path = folder / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


__all__ = ["DIALECT", "KINDS", "VERSION_TAGS", "build_schemas", "load_schema", "render", "schema_name", "write_schemas"]
