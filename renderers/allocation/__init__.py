"""Template prompts for the Allocation & Matching family.

Each task type has its own module (its sentences, one per rule kind and objective kind,
and the body of its prompt) that fills one :class:`~pbsolve.render_kit.TaskText`; the
closing sections (rules, objective, recovery, explanation, uncertainty, verification)
are the kit's (:class:`~pbsolve.render_kit.FamilyRenderer`).
"""

from __future__ import annotations

from pbsolve.render_kit import FamilyRenderer, Sentence, TaskText
from pbsolve.renderers.allocation import education, grouping, material, procurement

TEXTS: dict[str, TaskText] = {m.TEXT.task: m.TEXT for m in (procurement, material, education, grouping)}
SENTENCES: dict[str, dict[str, Sentence]] = {task: text.sentences for task, text in TEXTS.items()}

FAMILY_RENDERER = FamilyRenderer(TEXTS)
sentence_kinds = FAMILY_RENDERER.sentence_kinds
render_rule = FAMILY_RENDERER.render_rule
render_objective = FAMILY_RENDERER.render_objective
render_prompt = FAMILY_RENDERER.render_prompt
