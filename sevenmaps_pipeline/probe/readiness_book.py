"""What the day's earlier readiness runs have already read, so that a later run that day asks none of it again
(docs/methodology.md, "Readiness": the probe follows the day's slices; per origin, once a UTC day).

Readiness runs after each hourly slice over that slice's endpoints; an origin or a publisher domain with
endpoints in many slices is asked for its documents by the first run that meets it, a repository's status is
read once, and the skills list once. The curated tables already read a day's documents whichever run landed
them (sql/readiness_discovery.sql: the last document per scope, subject and surface of the day), so a document
read at 03:00 serves an endpoint checked at 17:00.

Each document is decided once a day, whatever came of it: an answer, an attempt the server did not answer,
our own prober_error (a request may have gone out), or "not asked" (robots.txt said no, the host opted out,
its robots.txt could not be read): deciding again would mean reading the host's robots.txt again, up to 24
times a day. A repository's status counts once the code host answered it, for an endpoint or a skill (its
trouble, a rate limit, is asked again: a request to the code host, not to a server); a skill once a row of
it landed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from ..lookups.codehost import NO_SUCH_REPOSITORY, RepoStatus, parse_repository_url

# The scopes whose documents are shared by many endpoints; an endpoint's own (its server card, its RFC 9728
# metadata) are asked in its own check, once a day as the check is.
SHARED_SCOPES = ("origin", "domain")


def _skill_repository(skill_key: Any) -> tuple[str, str] | None:
    """(owner, repo) of a skill's key, github.com/<owner>/<repo>/<path>."""
    parts = skill_key.split("/") if isinstance(skill_key, str) else []
    return (parts[1], parts[2]) if len(parts) >= 4 and parts[0] == "github.com" and parts[1] and parts[2] else None


@dataclass
class ReadinessBook:
    """The day's documents, repositories and skills already read, by the runs before this one."""

    documents: set[tuple[str, str, str]] = field(default_factory=set)  # (scope, subject, surface)
    # (owner, repo) in lower case: its status, or the code host's answer that there is no such repository
    repositories: dict[tuple[str, str], RepoStatus | str] = field(default_factory=dict)
    skills: set[str] = field(default_factory=set)  # skill_key

    @classmethod
    def from_rows(cls, surfaces: Iterable[Mapping[str, Any]], checks: Iterable[Mapping[str, Any]] = (),
                  skills: Iterable[Mapping[str, Any]] = ()) -> ReadinessBook:
        book, checks, skills = cls(), list(checks), list(skills)
        for row in surfaces:
            if row.get("scope") in SHARED_SCOPES:
                book.documents.add((str(row["scope"]), str(row.get("subject")), str(row.get("surface"))))
        for row in [*checks, *skills]:
            parsed = parse_repository_url(row.get("repository_url")) or _skill_repository(row.get("skill_key"))
            if parsed is None:
                continue
            key = (parsed[0].lower(), parsed[1].lower())
            if row.get("repo_private") is not None:
                book.repositories[key] = RepoStatus(parsed[0], parsed[1], bool(row["repo_private"]),
                                                    bool(row.get("repo_archived")),
                                                    str(row.get("repo_pushed_at") or ""))
            elif row.get("repo_detail") == NO_SUCH_REPOSITORY:  # the code host's answer, not our trouble
                book.repositories.setdefault(key, NO_SUCH_REPOSITORY)
        book.skills.update(str(row["skill_key"]) for row in skills if row.get("skill_key"))
        return book

    @classmethod
    def from_lake(cls, lake: LakePaths, day: dt.date) -> ReadinessBook:
        """The day's landed readiness parts; an unreadable one is skipped (quarantined later: what it held is asked
        again)."""
        wanted = {"readiness_surfaces": ["scope", "subject", "surface"],
                  "readiness": ["repository_url", "repo_private", "repo_archived", "repo_pushed_at", "repo_detail"],
                  "skills": ["skill_key", "repo_private", "repo_archived", "repo_pushed_at", "repo_detail"]}
        rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in wanted}
        for kind, columns in wanted.items():
            for path in lake.raw_files(kind, day):
                try:
                    table = pq.read_table(path, columns=columns)
                except Exception:  # noqa: BLE001 - an unreadable part is quarantined later; its documents asked again
                    continue
                if kind == "readiness_surfaces":  # only the shared documents become Python objects
                    table = table.filter(pc.is_in(table["scope"], value_set=pa.array(SHARED_SCOPES)))
                rows[kind] += table.to_pylist()
        return cls.from_rows(rows["readiness_surfaces"], rows["readiness"], rows["skills"])

    def read(self, scope: str, subject: str, surface: str) -> bool:
        """Whether the day's earlier runs decided this shared document (an endpoint's own: never)."""
        return scope in SHARED_SCOPES and (scope, subject, surface) in self.documents
