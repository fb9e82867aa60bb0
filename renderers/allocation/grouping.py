"""Prompt text of Student Grouping: one sentence per rule kind and objective kind, and the
body of the prompt (the shared closing sections are the family's, in __init__)."""

from __future__ import annotations

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import GroupingData
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.renderers.allocation.text import disrupted
from pbsolve.schema import ObjectiveTerm, Rule

G = "student_grouping"
TEXT = TaskText(
    task=G,
    data_type=GroupingData,
    rule_params=rp.RULE_PARAMS[G],
    term_params=rp.TERM_PARAMS[G],
    worst_case="the least favourable values are the low ends of the leadership ranges",
    current="the current grouping",
)
GROUPING_CONTEXT = {
    "project_teams": ("project teams", "for a semester project"),
    "lab_partners": ("lab groups", "for the term's practical sessions; each group needs someone to lead on safety"),
    "study_groups": ("study groups", "for exam revision; students said whom they would like to study with"),
    "sports_teams": ("teams", "for the school tournament; the teams should be evenly matched"),
    "hackathon_teams": (
        "hackathon teams",
        "for a weekend hackathon; a student's track is the role they play, and every team needs a student in each role",
    ),
}


def _pairs(pairs: list[tuple[str, str]], how: str) -> str:
    return "; ".join(f"{a} and {b} are {how}" for a, b in pairs) + "."


@TEXT.rule("group_size")
def _g_size(d: GroupingData, p: rp.GroupSize) -> str:
    if p.min == p.max:
        return f"Every group has exactly {plural(p.min, 'student')}."
    return f"Every group has between {p.min} and {p.max} students."


@TEXT.rule("apart")
def _g_apart(d: GroupingData, p: rp.Apart) -> str:
    return _pairs(p.pairs, "in different groups")


@TEXT.rule("together")
def _g_together(d: GroupingData, p: rp.Together) -> str:
    return _pairs(p.pairs, "in the same group")


@TEXT.rule("leader_floor")
def _g_leader(d: GroupingData, p: rp.LeaderFloor) -> str:
    return f"Every group has at least one student with leadership {p.level} or more."


@TEXT.rule("track_cap")
def _g_track_cap(d: GroupingData, p: rp.TrackCap) -> str:
    return f"No group has more than {plural(p.max, 'student')} of the same track."


@TEXT.rule("skill_floor")
def _g_skill_floor(d: GroupingData, p: rp.SkillFloor) -> str:
    return f"Every group's skill total (the sum of its students' skills) is at least {p.min}."


@TEXT.rule("skill_balance")
def _g_balance(d: GroupingData, p: rp.SkillBalance) -> str:
    if not p.max:
        return "Fairness: every group has the same skill total."
    return f"Fairness: the skill totals of any two groups differ by at most {p.max}."


@TEXT.rule("diversity")
def _g_diversity(d: GroupingData, p: rp.Diversity) -> str:
    if p.min <= 1:
        return f"Every group has students of at least {p.min} track."
    return f"Every group has students of at least {p.min} different tracks."


@TEXT.rule("no_isolation")
def _g_isolation(d: GroupingData, p: rp.NoParams) -> str:
    return "No student is the only one of their track in their group."


@TEXT.rule("wish_guarantee")
def _g_wishes(d: GroupingData, p: rp.WishGuarantee) -> str:
    who = and_list(p.students) + (" each share" if len(p.students) > 1 else " shares")
    return f"{who} a group with at least one of the classmates they wished for."


@TEXT.rule("mentor")
def _g_mentor(d: GroupingData, p: rp.Mentor) -> str:
    return (
        f"Every newcomer shares a group with a mentor: a student who is not a newcomer and has leadership "
        f"{p.level} or more."
    )


@TEXT.rule("dropout_robust")
def _g_dropout(d: GroupingData, p: rp.DropoutRobust) -> str:
    return (
        f"If any one student dropped out, every group would still have a student with leadership {p.level} or "
        f"more. This must hold for each student dropping out on their own."
    )


@TEXT.objective("unmet_wishes")
def _g_unmet(d: GroupingData, p: rp.NoParams) -> str:
    return "the number of unmet wishes: each wish (a student wishing to work with a classmate) whose two students are in different groups counts 1"


@TEXT.objective("skill_spread")
def _g_spread(d: GroupingData, p: rp.NoParams) -> str:
    return "the skill spread: the highest group skill total minus the lowest"


@TEXT.objective("grouping_code")
def _g_code(d: GroupingData, p: rp.NoParams) -> str:
    return (
        "the grouping code: write each student's group number (numbered as above) in list order and read the "
        "digits as one whole number; a smaller code is an earlier grouping"
    )


@TEXT.objective("changes")
def _g_changes(d: GroupingData, p: rp.CurrentGroups) -> str:
    return (
        "the number of pairs of students whose pairing differs from the current grouping: together before and "
        "apart now, or apart before and together now"
    )


@TEXT.body
def _grouping_body(d: GroupingData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    word, context = GROUPING_CONTEXT.get(subtask, ("groups", ""))
    n = len(d.students)
    out = [
        f"You are splitting a class of {n} students into {d.groups} {word} {context}. Every student is in exactly one "
        f"group and no group is empty. Groups have no names or order: a grouping is only who is with whom.",
        "",
        "**Group numbers** (used only by the grouping code): number the groups in the order of their first-listed "
        "student. The group of the first student in the list below is group 1; the group of the earliest-listed "
        "student not in group 1 is group 2; and so on.",
        "",
        f"**Students** (listed order 1 to {n}; skill 1–5, leadership 0–3):",
    ]
    for s in d.students:
        parts = [f"skill {s.skill}", f"track {s.track}", f"leadership {ranged(d, 'leadership', s.id, s.leadership)}"]
        if s.newcomer:
            parts.append("newcomer")
        line = f"- {s.id}: " + ", ".join(parts)
        if s.wishes:
            line += "; wishes to work with " + and_list(list(s.wishes))
        out.append(line)
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current grouping** (made before {disrupted(rules)}; change as few pairings as you can):"]
        out += [f"- {', '.join(g)}" for g in rp.current_plan(G, changes)]
    return out


@TEXT.verification
def _grouping_verification(d: GroupingData) -> str:
    return (
        "under `verification`, report from your grouping `group_skill` (for every student, the skill total of their "
        "group) and `wishes_met` (for every student, how many of their wishes your grouping grants)."
    )
