"""Template prompts for the Routing & Travel family: each task type's module fills one
:class:`~pbsolve.render_kit.TaskText` (``TEXT``), found by
:func:`pbsolve.kit.task_modules`; the closing sections are the kit's."""

from __future__ import annotations

from pbsolve.kit import task_modules
from pbsolve.render_kit import FamilyRenderer, TaskText

TEXTS: dict[str, TaskText] = {m.TEXT.task: m.TEXT for m in task_modules(__name__, "TEXT")}

FAMILY_RENDERER = FamilyRenderer(TEXTS)
sentence_kinds = FAMILY_RENDERER.sentence_kinds
render_rule = FAMILY_RENDERER.render_rule
render_objective = FAMILY_RENDERER.render_objective
render_prompt = FAMILY_RENDERER.render_prompt
