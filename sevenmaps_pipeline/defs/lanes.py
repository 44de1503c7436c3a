"""The lanes (docs/operations.md, "Schedules"): each cadence's runs in a Dagster concurrency pool of its own,
so a long run of one cadence never holds up another's.

Every step names its lane's pool; the instance (defs/home.py) gives each pool one place and counts them per
run (`granularity: run`): the run queue starts a run only when no run of its lane is in flight, and runs
of different lanes run side by side. A pool at run granularity is counted from the runs in flight, never
claimed by a step, so a run killed mid-way holds nothing afterwards. What the lanes keep true:

- the runs that write `warehouse.duckdb` and sign (the day's map, signing, retention) are one lane, `day`:
  never two at once, and signing keeps chain order;
- the runs that contact servers (slices, readiness, hourly, five-minute, submitted servers) each take the
  host's lease (probe/leases.py): one request at a time per host across the lanes too;
- a day's map and signing wait for the runs that land that day's files (its slices, its readiness runs, its
  lookups), through the run queue's tag limits (`LANDS`).
"""

SLICE = "slice"
READINESS = "readiness"
HOURLY = "hourly"
FIVE_MINUTE = "five_minute"
SUBMISSIONS = "submissions"
LOOKUPS = "lookups"
DAY = "day"
LANES = (SLICE, READINESS, HOURLY, FIVE_MINUTE, SUBMISSIONS, LOOKUPS, DAY)

# The lanes whose runs land files of the UTC day they run in that the day's map reads and its root covers.
LANDS = (SLICE, READINESS, LOOKUPS)


def lands_tag(lane: str) -> str:
    """The tag a run of `lane` carries with the day it lands into; the day's map and signing carry all three
    with the day they build, and the run queue runs one run per tag and value at a time."""
    return f"sevenmaps/lands-{lane}"


def lands_day(lane: str, day: str) -> dict[str, str]:
    return {lands_tag(lane): day}


def reads_day(day: str) -> dict[str, str]:
    """The tags of a run that builds or signs `day`: it waits while a run lands files into that day."""
    return {lands_tag(lane): day for lane in LANDS}
