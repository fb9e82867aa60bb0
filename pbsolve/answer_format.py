"""The answer contract, generated from an answer schema (never reworded by an LLM).

The section is fixed text built only from the JSON Schema of the answer, so it is the
same for feasible and infeasible instances of a task: the format never gives away
which kind an instance is.
"""

from __future__ import annotations

import json
from typing import Any


def _example(schema: dict[str, Any], name: str = "", nested: bool = False) -> Any:
    """A placeholder answer for the schema; a ``title`` names what a placeholder stands
    for (an element of a nested list is a 'student', not another 'groups'). A list of the
    answer's own rows keyed by an enum (every task, every commuter) shows one row per
    key; a list inside a row (a trip's legs) shows one example row, since its rows are
    not one per value of their first field."""
    name = schema.get("title", name)
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {key: _example(sub, key, nested) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        items = schema.get("items", {})
        props = items.get("properties", {})
        first = next(iter(props), None)
        if first is not None and "enum" in props[first] and not nested:
            # one row per value of the key field, other fields left as placeholders
            return [
                {k: (v if k == first else _example(sub, k, True)) for k, sub in props.items()}
                for v in props[first]["enum"]
            ]
        return [_example(items, name, True), "..."]
    if kind == "integer":
        return "<int>"
    return f"<{name or 'value'}>"


def skeleton(form: dict[str, Any]) -> str:
    """Compact JSON skeleton; integer placeholders are shown bare as <int>."""
    text = json.dumps(_example(form), ensure_ascii=False)
    return text.replace('"<int>"', "<int>").replace("}, {", "},\n  {").replace("[{", "[\n  {")


def _values(enum: list[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in enum)


def _row_fields(props: dict[str, Any], depth: int = 0) -> list[str]:
    """The fields of a list's rows: the values a field may take, and what a field holds
    where the schema says (a row's start unit, a list's order, a sign convention); rows
    nested in a row (a trip's legs, an incident's materials) are described in turn."""
    lines = []
    for field, spec in props.items():
        what = spec.get("description")
        if "enum" in spec:
            lines.append(f"- `{field}`: one of {_values(spec['enum'])}" + (f" ({what})." if what else "."))
        elif spec.get("type") == "array" and "enum" in spec.get("items", {}):
            each = f"each one of {_values(spec['items']['enum'])}"
            lines.append(f"- `{field}`: a list, {what}; {each}." if what else f"- `{field}`: a list, {each}.")
        elif spec.get("type") == "array" and "properties" in spec.get("items", {}) and depth < 2:
            if what:
                lines.append(f"- `{field}`: {what}.")
            lines += _row_fields(spec["items"]["properties"], depth + 1)
        elif what:
            lines.append(f"- `{field}`: {what}.")
    return lines


def _describe(form: dict[str, Any]) -> list[str]:
    lines = []
    for key, sub in form.get("properties", {}).items():
        if "description" in sub and sub.get("type") != "object":
            lines.append(f"- `{key}`: {sub['description']}.")
        props = sub.get("items", {}).get("properties", {}) if sub.get("type") == "array" else {}
        lines += _row_fields(props)
        if sub.get("type") == "object" and "properties" in sub:
            props = sub["properties"]
            if all(p.get("type") == "integer" for p in props.values()):
                keys = ", ".join(f"`{k}`" for k in props)
                if len(props) == 1:
                    lines.append(f"- `{key}` holds the integer {keys}, computed from your own plan.")
                else:
                    lines.append(f"- `{key}` holds the integers {keys}, each computed from your own plan.")
            else:
                parts = [f"`{k}` ({p['description']})" if "description" in p else f"`{k}`" for k, p in props.items()]
                what = f" ({sub['description']})" if "description" in sub else ""
                lines.append(f"- `{key}`{what} holds {', '.join(parts)}.")
    return lines


def render_answer_format(schema: dict[str, Any]) -> str:
    forms = schema.get("oneOf", [schema])
    plan_form, *others = forms
    parts = [
        "## Answer format",
        "",
        "End your reply with one JSON object (a ```json fenced block is fine) and write nothing after it.",
        "If a plan satisfying every rule exists, give the best one:",
        "",
        "```json",
        skeleton(plan_form),
        "```",
        "",
        *_describe(plan_form),
    ]
    for form in others:
        parts += [
            "",
            "If no plan can satisfy every rule, answer instead:",
            "",
            "```json",
            skeleton(form).replace('["<conflict>", "..."]', '["R?", "R?"]'),
            "```",
            "",
            *_describe(form),
        ]
    return "\n".join(parts)
