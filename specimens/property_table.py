"""``rollcert properties``: one table, read from the code, of where each property
is stated, which machine checks it, which specimens break it and how far ``rollcert prove`` establishes it (proved,
checked symbolically or exhaustively within bounds, or tested only: the table
of :mod:`rollcert.command.proof_reach`).

Nothing here is written by hand: the statement's line is found in
``model/properties.py``, the machine and its rules in the property's family, the
specimens in their registry, the obligations in the proofs' registry. A
property that nothing checks, breaks or proves shows as ``—``, which is the point.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path

from rollcert.command.proof_reach import summary as reach_summary
from rollcert.model import properties as properties_module
from rollcert.model.properties import PROPERTIES
from rollcert.proofs.obligations import REGISTRY
from rollcert.specimens import load_all
from rollcert.stateful_tests.diff_machine import RULES_BY_PROPERTY as DIFF_RULES_BY_PROPERTY
from rollcert.stateful_tests.families import family_of
from rollcert.stateful_tests.machines import rules_for
from rollcert.targets.adapter import Capability


@dataclass(frozen=True)
class PropertyRow:
    property_id: str
    title: str
    stated_at: str
    checked_by: str
    rules: tuple[str, ...]
    broken_by: tuple[str, ...]
    also_caught: tuple[str, ...]
    proved_by: tuple[str, ...]
    #: How far the proofs reach (rollcert.command.proof_reach, the one table of it).
    reach: str = ""


def _stated_at(property_id: str) -> str:
    source = inspect.getsource(properties_module)
    match = re.search(rf"^{re.escape(property_id)} = Property\(", source, re.M)
    path = Path(inspect.getfile(properties_module)).name
    return f"model/{path}:{source[: match.start()].count(chr(10)) + 1}" if match else f"model/{path}"


def _checked_by(property_id: str) -> tuple[str, tuple[str, ...]]:
    family = family_of(property_id)
    if family is None:
        return "—", ()
    if family.name == "programs":
        return "concurrency: programs of threads, Wing–Gong checker (stateful_tests/concurrency.py)", ()
    if family.name == "diffs":
        return "diff family (stateful_tests/diff_machine.py)", DIFF_RULES_BY_PROPERTY[property_id]
    return "rollback family (stateful_tests/machines.py)", rules_for(property_id, frozenset(Capability))


def property_table() -> list[PropertyRow]:
    specimens = load_all()
    rows = []
    for property_id, prop in PROPERTIES.items():
        checked_by, rules = _checked_by(property_id)
        rows.append(
            PropertyRow(
                property_id,
                prop.title,
                _stated_at(property_id),
                checked_by,
                rules,
                tuple(sorted(name for name, s in specimens.items() if property_id in s.breaks))
                or (("every specimen (a violation of any property is one of R0)",) if property_id == "R0" else ()),
                tuple(sorted(name for name, s in specimens.items() if property_id in s.also_caught_by)),
                tuple(o.name for o in REGISTRY if property_id in o.properties and o.kind == "theorem"),
                reach_summary(property_id),
            )
        )
    return rows


def _list(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "—"


def render_text(rows: list[PropertyRow]) -> str:
    lines = []
    for row in rows:
        lines += [
            f"{row.property_id}  {row.title}",
            f"    stated in    {row.stated_at}",
            f"    checked by   {row.checked_by}" + (f"; rules: {_list(row.rules)}" if row.rules else ""),
            f"    broken by    {_list(row.broken_by)}" + (f" (also caught: {_list(row.also_caught)})" if row.also_caught else ""),
            f"    proofs       {row.reach}",
        ]
    return "\n".join(lines)


def render_markdown(rows: list[PropertyRow]) -> str:
    lines = [
        "| property | stated in | checked by | broken by (specimens) | proofs (rollcert prove) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        broken = _list(row.broken_by) + (f"; also caught: {_list(row.also_caught)}" if row.also_caught else "")
        lines.append(
            f"| {row.property_id} {row.title} | `{row.stated_at}` | {row.checked_by} | {broken} | {row.reach} |"
        )
    return "\n".join(lines)
