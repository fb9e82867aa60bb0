"""Checks for Shift & Duty Scheduling answers: a roster of staff over the shifts of a run
of days (Early/Late/Night over a week, Day/Night round the clock, ...).

The answer lists the shifts each person works, one row per (person, day, shift); a
person-day not listed is a day off. At most one shift per person per day is part of the
answer's form (a person listed twice on one day fails the format item), so every rule
here judges a roster in which each person works at most one shift a day. Every rule is
re-implemented from the plan in plain Python (nothing here imports the solver models):
coverage and skill counts per shift, contract hours, rest between shifts measured on the
clock, consecutive-day runs, complete weekends, fatigue after night runs and the running
hours since the last day off.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from pbsolve.checker_kit import OK, PerData, PlanChecker, lookup, row_names, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "shift_duty_scheduling"
OFF = "off"  # not a shift: what the roster says on a day off (never written in answers)


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Day(_Frozen):
    id: str
    weekend: bool = False


class Shift(_Frozen):
    id: str
    start: int = Field(ge=0, le=23, description="starting hour on its day (0-23)")
    hours: PositiveInt = Field(le=12)


class Person(_Frozen):
    id: str
    skills: tuple[str, ...] = ()
    wage: NonNegativeInt = Field(description="cost per hour worked")
    holidays: tuple[str, ...] = Field(default=(), description="days of booked leave")


class Cover(_Frozen):
    day: str
    shift: str
    need: NonNegativeInt = Field(description="staff required on this shift")


class Request(_Frozen):
    id: str
    person: str
    day: str
    shift: str | None = Field(default=None, description="None: the whole day off")
    weight: PositiveInt


class ShiftDutyData(BaseModel):
    """A roster instance: days in order, shifts of a day in order, staff in listed
    (seniority) order, the cover every shift needs and the staff's soft requests."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    days: tuple[Day, ...]
    shifts: tuple[Shift, ...]
    skills: tuple[str, ...] = ()
    staff: tuple[Person, ...]
    cover: tuple[Cover, ...]
    requests: tuple[Request, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def day_index(self) -> dict[str, int]:
        return {d.id: i for i, d in enumerate(self.days)}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "day": self.day_index,
            "shift": self.shift_by_id,
            "person": self.person_by_id,
            "skill": {k for p in self.staff for k in p.skills},  # a skill nobody has covers nothing
        }
        return names[what]

    @cached_property
    def shift_by_id(self) -> dict[str, Shift]:
        return {s.id: s for s in self.shifts}

    @cached_property
    def person_by_id(self) -> dict[str, Person]:
        return {p.id: p for p in self.staff}

    @cached_property
    def need(self) -> dict[tuple[str, str], int]:
        """(day, shift) -> staff required (0 where the data lists no cover)."""
        out = {(d.id, s.id): 0 for d in self.days for s in self.shifts}
        for c in self.cover:
            out[c.day, c.shift] = c.need
        return out

    @cached_property
    def cover_slots(self) -> tuple[tuple[tuple[str, str], str, str, int], ...]:
        """((day, shift), day, shift, need) for each cover entry, in the data's order."""
        return tuple(((c.day, c.shift), c.day, c.shift, c.need) for c in self.cover)

    @cached_property
    def row_figures(self) -> tuple[dict[tuple[str, str, str], int], dict[tuple[str, str, str], int]]:
        """(person, day, shift) -> (its wage cost, its rota score): the objective figures
        of one roster row, for every person, day and shift of the data."""
        wage, rota = {}, {}
        for pn, q in enumerate(self.staff, 1):
            for xn, x in enumerate(self.days, 1):
                for sn, s in enumerate(self.shifts, 1):
                    wage[q.id, x.id, s.id] = q.wage * s.hours
                    rota[q.id, x.id, s.id] = pn * xn * sn
        return wage, rota

    @cached_property
    def weekends(self) -> list[list[str]]:
        """Runs of consecutive weekend days (each a weekend), in day order."""
        runs: list[list[str]] = []
        prev = False
        for d in self.days:
            if d.weekend:
                if prev:
                    runs[-1].append(d.id)
                else:
                    runs.append([d.id])
            prev = d.weekend
        return runs


def slot_name(day: str, shift: str) -> str:
    """'Mon Early': how the prompt and the uncertain inputs name one shift of one day."""
    return f"{day} {shift}"


# -- parameters (one model per rule kind and objective kind) --------------------------
DayName = Annotated[str, Names("day")]
ShiftName = Annotated[str, Names("shift")]
PersonName = Annotated[str, Names("person")]
SkillName = Annotated[str, Names("skill")]


class SkillCover(Params):
    """Each listed (day, shift) has at least ``min`` rostered staff with ``skill``."""

    skill: SkillName
    min: PositiveInt
    slots: list[tuple[DayName, ShiftName]]


class MaxHours(Params):
    """Each named person works at most ``max`` hours over the roster (contract maximum)."""

    people: list[PersonName]
    max: NonNegativeInt


class MinHours(Params):
    """Each named person works at least ``min`` hours over the roster (contract minimum)."""

    people: list[PersonName]
    min: NonNegativeInt


class ForbiddenSuccession(Params):
    """Nobody works ``then`` on the day after working ``first``."""

    first: ShiftName
    then: ShiftName


class ShiftBan(Params):
    """The person never works the listed shifts."""

    person: PersonName
    shifts: list[ShiftName]


class MaxConsecutive(Params):
    """Nobody works more than ``max`` days in a row."""

    max: PositiveInt


class CompleteWeekends(Params):
    """Each named person works every day of a weekend or none of it."""

    people: list[PersonName]


class ShiftBalance(Params):
    """Any two staff members' counts of ``shift`` differ by at most ``max``."""

    shift: ShiftName
    max: NonNegativeInt


class WeekendCap(Params):
    """Each named person works at most ``max`` weekend days."""

    people: list[PersonName]
    max: NonNegativeInt


class MinRest(Params):
    """At least ``hours`` hours between the end of one shift of a person and the start of their next."""

    hours: PositiveInt


class NightFatigue(Params):
    """After ``run`` consecutive days on ``shift``, the next ``rest`` days are days off."""

    shift: ShiftName
    run: PositiveInt
    rest: PositiveInt


class RunHours(Params):
    """A person's running hours since their last day off never exceed ``max``."""

    max: PositiveInt


class PersonAbsent(Params):
    """The person works no shift on the named days (a disruption or recovery scenario)."""

    person: PersonName
    days: list[DayName]


class UnsocialMax(Params):
    """Objective: the largest count of ``shift`` worked by any one person. A min-max load,
    not a max-min spread: a spread would be lowered by giving the least-loaded person an
    extra, uncovered-for shift, so the optimum would over-staff the unsocial shift."""

    shift: ShiftName


class CurrentRoster(Params):
    """The current roster a ``changes`` term counts against: [person, day, shift] rows."""

    existing: list[tuple[PersonName, DayName, ShiftName]]


RULE_PARAMS: dict[str, type[Params]] = {
    "coverage": NoParams,
    "skill_cover": SkillCover,
    "holidays": NoParams,
    "max_hours": MaxHours,
    "forbidden_succession": ForbiddenSuccession,
    "shift_ban": ShiftBan,
    "max_consecutive": MaxConsecutive,
    "min_hours": MinHours,
    "complete_weekends": CompleteWeekends,
    "shift_balance": ShiftBalance,
    "weekend_cap": WeekendCap,
    "min_rest": MinRest,
    "night_fatigue": NightFatigue,
    "run_hours": RunHours,
    "person_absent": PersonAbsent,
    "absence_cover": NoParams,
}
TERM_PARAMS: dict[str, type[Params]] = {
    "requests": NoParams,
    "wage_cost": NoParams,
    "unsocial_max": UnsocialMax,
    "rota_score": NoParams,
    "changes": CurrentRoster,
}


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Roster:
    """A plan read against the data, once (every rule and figure reads it): each person's
    line of shifts, the people on each (day, shift) in staff order, and the rows."""

    lines: dict[str, list[str]]
    slots: dict[tuple[str, str], list[str]]
    rows: list[tuple[str, str, str]]


@dataclass(frozen=True)
class Plan:
    """person -> day -> the shift worked (days off absent)."""

    shifts: dict[str, dict[str, str]]
    _roster: PerData[Roster] = field(default_factory=PerData, compare=False, repr=False)

    def of(self, person: str, day: str) -> str:
        return self.shifts.get(person, {}).get(day, OFF)

    def rows(self, d: ShiftDutyData) -> list[tuple[str, str, str]]:
        """(person, day, shift) in staff then day order."""
        return list(roster(d, self).rows)


def roster(d: ShiftDutyData, plan: Plan) -> Roster:
    """The plan read against ``d``: computed once per plan and data."""
    return plan._roster.get(d, lambda: _read(d, plan))


def _read(d: ShiftDutyData, plan: Plan) -> Roster:
    lines: dict[str, list[str]] = {}
    slots: dict[tuple[str, str], list[str]] = {}
    rows: list[tuple[str, str, str]] = []
    days = [x.id for x in d.days]
    for p in d.staff:
        mine = plan.shifts.get(p.id, {})
        lines[p.id] = line = [mine.get(x, OFF) for x in days]
        for x, s in zip(days, line):
            if s != OFF:
                rows.append((p.id, x, s))
                on = slots.get((x, s))
                if on is None:
                    slots[x, s] = [p.id]
                else:
                    on.append(p.id)
    return Roster(lines, slots, rows)


def with_shift(plan: Plan, person: str, day: str, shift: str) -> Plan:
    """``plan`` with ``person`` working ``shift`` on ``day`` (``OFF``: a day off)."""
    mine = {k: v for k, v in plan.shifts.get(person, {}).items() if k != day}
    if shift != OFF:
        mine[day] = shift
    return Plan({**plan.shifts, person: mine})


def neighbours(d: ShiftDutyData, plan: Plan) -> Iterator[Plan]:
    """Rosters one move from ``plan``: one person-day changed (another shift, or off), or
    two people's shifts of one day swapped (cover kept, the people changed)."""
    for q in d.staff:
        for x in d.days:
            now = plan.of(q.id, x.id)
            for s in [OFF, *[s.id for s in d.shifts]]:
                if s != now:
                    yield with_shift(plan, q.id, x.id, s)
    for x in d.days:
        for a, b in itertools.combinations([q.id for q in d.staff], 2):
            sa, sb = plan.of(a, x.id), plan.of(b, x.id)
            if sa != sb:
                yield with_shift(with_shift(plan, a, x.id, sb), b, x.id, sa)


def hours(d: ShiftDutyData, plan: Plan, person: str) -> int:
    return sum(d.shift_by_id[s].hours for s in plan.shifts.get(person, {}).values())


def count(plan: Plan, person: str, shift: str) -> int:
    n = 0
    for s in plan.shifts.get(person, {}).values():
        if s == shift:
            n += 1
    return n


def on_shift(d: ShiftDutyData, plan: Plan, day: str, shift: str) -> list[str]:
    return list(on_shift_of(d, plan)(day, shift))


def on_shift_of(d: ShiftDutyData, plan: Plan) -> Callable[[str, str], Sequence[str]]:
    """``on_shift`` for one plan, the roster read once: (day, shift) -> the people on it
    in staff order (not to be changed)."""
    slots = roster(d, plan).slots

    def find(day: str, shift: str) -> Sequence[str]:
        if shift == OFF:  # the people off that day: no slot of the roster
            return [p.id for p in d.staff if plan.of(p.id, day) == shift]
        return slots.get((day, shift), ())

    return find


def line(d: ShiftDutyData, plan: Plan, person: str) -> list[str]:
    """The person's shift (or OFF) for every day, in day order."""
    found = roster(d, plan).lines.get(person)
    return list(found) if found is not None else [plan.of(person, x.id) for x in d.days]


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("coverage")
def _coverage(d: ShiftDutyData, plan: Plan, p: NoParams) -> Verdict:
    staff, slots = on_shift_of(d, plan), roster(d, plan).slots
    for key, day, shift, need in d.cover_slots:
        n = len(slots.get(key, ())) if shift != OFF else len(staff(day, shift))
        if n < need:
            return False, f"{slot_name(day, shift)} has {n} staff; it needs {need}"
    return OK


@check("skill_cover")
def _skill_cover(d: ShiftDutyData, plan: Plan, p: SkillCover) -> Verdict:
    staff = on_shift_of(d, plan)
    people = d.person_by_id
    for day, s in p.slots:
        n = 0
        for q in staff(day, s):
            if p.skill in people[q].skills:
                n += 1
        if n < p.min:
            return False, f"{slot_name(day, s)} has {n} staff with skill {p.skill}; it needs {p.min}"
    return OK


@check("holidays")
def _holidays(d: ShiftDutyData, plan: Plan, p: NoParams) -> Verdict:
    for person in d.staff:
        for day in person.holidays:
            if plan.of(person.id, day) != OFF:
                return False, f"{person.id} is on leave on {day} but works {plan.of(person.id, day)}"
    return OK


@check("max_hours")
def _max_hours(d: ShiftDutyData, plan: Plan, p: MaxHours) -> Verdict:
    for person in p.people:
        h = hours(d, plan, person)
        if h > p.max:
            return False, f"{person} works {h} hours (at most {p.max})"
    return OK


@check("min_hours")
def _min_hours(d: ShiftDutyData, plan: Plan, p: MinHours) -> Verdict:
    for person in p.people:
        h = hours(d, plan, person)
        if h < p.min:
            return False, f"{person} works {h} hours (at least {p.min})"
    return OK


@check("forbidden_succession")
def _forbidden_succession(d: ShiftDutyData, plan: Plan, p: ForbiddenSuccession) -> Verdict:
    for person in d.staff:
        days = line(d, plan, person.id)
        for k in range(len(days) - 1):
            if days[k] == p.first and days[k + 1] == p.then:
                return False, f"{person.id} works {p.first} on {d.days[k].id} then {p.then} on {d.days[k + 1].id}"
    return OK


@check("shift_ban")
def _shift_ban(d: ShiftDutyData, plan: Plan, p: ShiftBan) -> Verdict:
    for x in d.days:
        if plan.of(p.person, x.id) in p.shifts:
            return False, f"{p.person} works {plan.of(p.person, x.id)} on {x.id}"
    return OK


def _runs(days: list[str]) -> list[tuple[int, int]]:
    """(first index, length) of every run of working days."""
    runs, start = [], None
    for k, s in enumerate([*days, OFF]):
        if s != OFF and start is None:
            start = k
        elif s == OFF and start is not None:
            runs.append((start, k - start))
            start = None
    return runs


@check("max_consecutive")
def _max_consecutive(d: ShiftDutyData, plan: Plan, p: MaxConsecutive) -> Verdict:
    for person in d.staff:
        for start, n in _runs(line(d, plan, person.id)):
            if n > p.max:
                return False, f"{person.id} works {n} days in a row from {d.days[start].id} (at most {p.max})"
    return OK


@check("complete_weekends")
def _complete_weekends(d: ShiftDutyData, plan: Plan, p: CompleteWeekends) -> Verdict:
    for person in p.people:
        for weekend in d.weekends:
            worked = [x for x in weekend if plan.of(person, x) != OFF]
            if worked and len(worked) < len(weekend):
                return False, f"{person} works {', '.join(worked)} but not all of {', '.join(weekend)}"
    return OK


@check("shift_balance")
def _shift_balance(d: ShiftDutyData, plan: Plan, p: ShiftBalance) -> Verdict:
    counts = {person.id: count(plan, person.id, p.shift) for person in d.staff}
    return spread_verdict(counts, p.max, "works", f"{p.shift} shifts")


@check("weekend_cap")
def _weekend_cap(d: ShiftDutyData, plan: Plan, p: WeekendCap) -> Verdict:
    weekend = [x.id for x in d.days if x.weekend]
    for person in p.people:
        n = sum(1 for x in weekend if plan.of(person, x) != OFF)
        if n > p.max:
            return False, f"{person} works {n} weekend days (at most {p.max})"
    return OK


@check("min_rest")
def _min_rest(d: ShiftDutyData, plan: Plan, p: MinRest) -> Verdict:
    """Every pair of one person's shifts, placed on the clock (hours from the first
    day's midnight): the later one starts at least ``hours`` after the earlier one ends."""
    for person in d.staff:
        times = []
        for x in d.days:
            s = plan.of(person.id, x.id)
            if s != OFF:
                sh = d.shift_by_id[s]
                start = 24 * d.day_index[x.id] + sh.start
                times.append((start, start + sh.hours, x.id, s))
        times.sort()
        for (_, end_a, day_a, a), (start_b, _, day_b, b) in itertools.pairwise(times):
            if start_b - end_a < p.hours:
                return (
                    False,
                    f"{person.id} has {start_b - end_a} hours between {a} on {day_a} and {b} on {day_b} "
                    f"(at least {p.hours})",
                )
    return OK


@check("night_fatigue")
def _night_fatigue(d: ShiftDutyData, plan: Plan, p: NightFatigue) -> Verdict:
    for person in d.staff:
        days = line(d, plan, person.id)
        streak = 0
        for k, s in enumerate(days):
            streak = streak + 1 if s == p.shift else 0
            if streak >= p.run:
                for j in range(k + 1, min(len(days), k + 1 + p.rest)):
                    if days[j] != OFF:
                        return (
                            False,
                            f"{person.id} works {days[j]} on {d.days[j].id} within {p.rest} days after "
                            f"{p.run} {p.shift} shifts in a row ending {d.days[k].id}",
                        )
    return OK


@check("run_hours")
def _run_hours(d: ShiftDutyData, plan: Plan, p: RunHours) -> Verdict:
    for person in d.staff:
        running = 0
        for x in d.days:
            s = plan.of(person.id, x.id)
            running = 0 if s == OFF else running + d.shift_by_id[s].hours
            if running > p.max:
                return False, f"{person.id} reaches {running} hours without a day off on {x.id} (at most {p.max})"
    return OK


@check("person_absent")
def _person_absent(d: ShiftDutyData, plan: Plan, p: PersonAbsent) -> Verdict:
    for day in p.days:
        if plan.of(p.person, day) != OFF:
            return False, f"{p.person} is absent on {day} but works {plan.of(p.person, day)}"
    return OK


@check("absence_cover")
def _absence_cover(d: ShiftDutyData, plan: Plan, p: NoParams) -> Verdict:
    """Each person absent in turn: the shifts left must still meet their cover."""
    staff = on_shift_of(d, plan)
    for absent in d.staff:
        for c in d.cover:
            n = sum(1 for q in staff(c.day, c.shift) if q != absent.id)
            if n < c.need:
                return False, f"if {absent.id} were absent, {slot_name(c.day, c.shift)} would have {n} of {c.need}"
    return OK


# -- objective -------------------------------------------------------------------------
def request_broken(plan: Plan, r: Request) -> bool:
    worked = plan.of(r.person, r.day)
    return worked != OFF if r.shift is None else worked == r.shift


def objective_value(d: ShiftDutyData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "requests":
        return sum(r.weight for r in d.requests if request_broken(plan, r))
    if kind == "wage_cost":
        wage, total = d.row_figures[0], 0
        for row in roster(d, plan).rows:
            total += wage[row]
        return total
    if kind == "unsocial_max":
        shift = as_model(tp, UnsocialMax).shift
        return max(count(plan, q.id, shift) for q in d.staff)
    if kind == "rota_score":
        rota, total = d.row_figures[1], 0
        for row in roster(d, plan).rows:
            total += rota[row]
        return total
    if kind == "changes":
        old = {tuple(r) for r in as_model(tp, CurrentRoster).existing}
        new = set(plan.rows(d))
        return len(old ^ new)
    raise ValueError(f"unknown objective kind {term.kind!r}")


# -- the task checker ------------------------------------------------------------------
class ShiftDuty(PlanChecker):
    family = "workforce"
    task = TASK_ID
    plan_key = "roster"
    plan_text = (
        "a list of roster entries, each naming a listed person, a listed day and a listed shift, with at most one "
        "shift per person per day (a person-day not listed is a day off)"
    )
    data_type = ShiftDutyData
    checks = CHECKS
    rule_params: ClassVar[dict[str, type[Params]]] = RULE_PARAMS
    term_params: ClassVar[dict[str, type[Params]]] = TERM_PARAMS

    def lookups(self, d: ShiftDutyData) -> dict[str, Any]:
        return {
            "person": lookup([q.id for q in d.staff]),
            "day": lookup([x.id for x in d.days]),
            "shift": lookup([s.id for s in d.shifts]),
        }

    def read_plan(
        self, d: ShiftDutyData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("roster") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'roster' is missing or not a list"
        shifts: dict[str, dict[str, str]] = {}
        px, dx, sx = lk["person"].exact, lk["day"].exact, lk["shift"].exact
        for k, row in enumerate(rows):
            try:  # the usual entry, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                person, day, shift = px[row["person"]], dx[row["day"]], sx[row["shift"]]
            except (KeyError, TypeError):
                found, why = row_names(row, k, "roster entry", lk)  # lk: person, day, shift, in this order
                if found is None:
                    return None, why
                person, day, shift = found
            mine = shifts.get(person)
            if mine is None:
                mine = shifts[person] = {}
            elif day in mine:
                return None, f"{person} is rostered more than once on {day}"
            mine[day] = shift
        return Plan(shifts), "complete plan"

    def objective_value(self, d: ShiftDutyData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ShiftDutyData, plan: Plan) -> dict[str, dict[str, int]]:
        return {
            "hours": {q.id: hours(d, plan, q.id) for q in d.staff},
            "days_worked": {q.id: len(plan.shifts.get(q.id, {})) for q in d.staff},
        }

    def existing(self, d: ShiftDutyData, plan: Plan) -> list[list[str]]:
        return [list(r) for r in plan.rows(d)]

    def plan_schema(self, d: ShiftDutyData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        props: dict[str, Any] = {
            "person": {"enum": [q.id for q in d.staff]},
            "day": {"enum": [x.id for x in d.days]},
            "shift": {"enum": [s.id for s in d.shifts]},
        }
        row = {"type": "object", "properties": props, "required": list(props)}
        return {
            "type": "array",
            "items": row,
            "description": "one entry per shift worked; at most one shift per person per day; unlisted days are off",
        }

    def verification_schema(self, d: ShiftDutyData) -> dict[str, Any]:
        names = [q.id for q in d.staff]
        return figures_schema({
            "hours": (names, "for each person, the hours they work over the roster"),
            "days_worked": (names, "for each person, the number of days on which they work a shift"),
        })  # fmt: skip

    def plan_json(self, d: ShiftDutyData, plan: Plan) -> list[dict[str, str]]:
        return [{"person": q, "day": x, "shift": s} for q, x, s in plan.rows(d)]

    def neighbours(self, data: ShiftDutyData, plan: Plan) -> Iterator[Plan]:
        return neighbours(data, plan)

    def baseline_plan(self, d: ShiftDutyData, instance: Instance) -> Plan:
        """Shift by shift in roster order, the first listed people not yet working that
        day and not on leave, until the shift's cover is met: valid cover, blind to every
        other rule and to the objective."""
        shifts: dict[str, dict[str, str]] = {}
        for x in d.days:
            for s in d.shifts:
                need = d.need[x.id, s.id]
                for q in d.staff:
                    if need <= 0:
                        break
                    if x.id not in shifts.get(q.id, {}) and x.id not in q.holidays:
                        shifts.setdefault(q.id, {})[x.id] = s.id
                        need -= 1
        return Plan(shifts)


TASK = ShiftDuty()
