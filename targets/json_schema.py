"""A JSON Schema checker for the few keywords rollcert's own schemas use.

Why not the ``jsonschema`` package: it is a development dependency (it checks
the protocol's messages in the tests), and reading a certificate must work on a
plain ``pip install rollcert`` — ``rollcert html`` on a CI artefact is the very
case the certificate reader exists for. It lives in ``targets/``, the room every
reader of untrusted input may import (certificates in ``reports/``, shard partials in
``stateful_tests/``). The schemas rollcert ships (``reports/certificate.schema.json``,
``stateful_tests/partial.schema.json``) are written with these keywords only: ``type``,
``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``,
``items``, ``minItems``/``maxItems``, ``maxProperties``,
``minLength``/``maxLength``, ``minimum``/``maximum``, ``anyOf`` and local
``$ref`` to ``#/$defs/...``. A schema using any other keyword is refused when
it is loaded, so the checker can never silently accept what it does not
understand. The tests check that it agrees with ``jsonschema`` on real and
mutated certificates.

The checker descends only where the schema describes the value, so its depth
is the schema's, never the document's: a value nested a thousand levels deep
under a key the schema does not name is not visited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_KNOWN = frozenset({
    "$schema", "$id", "$defs", "$ref", "title", "description",
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "minItems", "maxItems", "maxProperties", "minLength", "maxLength", "minimum", "maximum", "anyOf",
})


class SchemaMismatch(ValueError):
    """The document does not fit the schema; the message names the place (a JSON
    pointer) and what was wrong there."""


def _check_keywords(schema: object, where: str) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"schema at {where} is not an object")
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"schema at {where} uses keywords this checker does not implement: {sorted(unknown)}")
    for key in ("properties", "$defs"):
        for name, sub in schema.get(key, {}).items():
            _check_keywords(sub, f"{where}/{key}/{name}")
    for key in ("additionalProperties", "items"):
        if key in schema:
            _check_keywords(schema[key], f"{where}/{key}")
    for position, sub in enumerate(schema.get("anyOf", ())):
        _check_keywords(sub, f"{where}/anyOf/{position}")


def _type_fits(value: object, name: str) -> bool:
    """JSON Schema's types over what ``json.loads`` returns (a bool is not a number;
    a float with no fraction counts as an integer, as the standard says)."""
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise ValueError(f"unknown JSON type {name!r} in a schema")


def _same(left: object, right: object) -> bool:
    """Equality as JSON means it: ``true`` is not ``1``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return left == right


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Checker:
    """One loaded schema; :meth:`check` raises :class:`SchemaMismatch` at the first
    place the document breaks it."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        _check_keywords(dict(schema), "#")
        self._root = dict(schema)

    def _resolve(self, reference: str) -> Any:
        if not reference.startswith("#/$defs/"):
            raise ValueError(f"only local references into $defs are supported, got {reference!r}")
        name = reference.removeprefix("#/$defs/")
        try:
            return self._root["$defs"][name]
        except KeyError:
            raise ValueError(f"the schema has no definition {name!r}") from None

    def check(self, document: object) -> None:
        self._check(document, self._root, "")

    def fits(self, document: object) -> bool:
        try:
            self.check(document)
        except SchemaMismatch:
            return False
        return True

    def _check(self, value: object, schema: Any, where: str) -> None:
        if schema is True:
            return
        if schema is False:
            raise SchemaMismatch(f"{where or '/'}: no value is allowed here")
        if "$ref" in schema:
            self._check(value, self._resolve(schema["$ref"]), where)
        place = where or "/"
        if "anyOf" in schema:
            problems = []
            for option in schema["anyOf"]:
                try:
                    self._check(value, option, where)
                    break
                except SchemaMismatch as problem:
                    problems.append(str(problem))
            else:
                raise SchemaMismatch(f"{place}: {_short(value)} fits none of the allowed forms ({problems[0]})")
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_type_fits(value, name) for name in names):
                raise SchemaMismatch(f"{place}: expected {' or '.join(names)}, got {type(value).__name__}")
        if "const" in schema and not _same(value, schema["const"]):
            raise SchemaMismatch(f"{place}: must be {schema['const']!r}, got {_short(value)}")
        if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
            raise SchemaMismatch(f"{place}: must be one of {', '.join(map(repr, schema['enum']))}, got {_short(value)}")
        if isinstance(value, str):
            if len(value) > schema.get("maxLength", len(value)):
                raise SchemaMismatch(f"{place}: a string of {len(value)} characters, more than {schema['maxLength']}")
            if len(value) < schema.get("minLength", 0):
                raise SchemaMismatch(f"{place}: a string shorter than {schema['minLength']} characters")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                raise SchemaMismatch(f"{place}: {_short(value)} is below {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                raise SchemaMismatch(f"{place}: {_short(value)} is above {schema['maximum']}")
        if isinstance(value, list):
            if len(value) > schema.get("maxItems", len(value)):
                raise SchemaMismatch(f"{place}: {len(value)} items, more than {schema['maxItems']}")
            if len(value) < schema.get("minItems", 0):
                raise SchemaMismatch(f"{place}: fewer than {schema['minItems']} items")
            if "items" in schema:
                for position, item in enumerate(value):
                    self._check(item, schema["items"], f"{where}/{position}")
        if isinstance(value, dict):
            if len(value) > schema.get("maxProperties", len(value)):
                raise SchemaMismatch(f"{place}: {len(value)} keys, more than {schema['maxProperties']}")
            for name in schema.get("required", ()):
                if name not in value:
                    raise SchemaMismatch(f"{place}: the key {name!r} is missing")
            named = schema.get("properties", {})
            extra = schema.get("additionalProperties", True)
            for key, item in value.items():
                pointer = f"{where}/{_pointer_part(key)}"
                if key in named:
                    self._check(item, named[key], pointer)
                elif extra is not True:
                    self._check(item, extra, pointer)


def _pointer_part(key: str) -> str:
    shown = key.replace("~", "~0").replace("/", "~1")
    return shown if len(shown) <= 40 and shown.isprintable() else repr(shown[:37])[1:-1] + "..."
