"""The Agent Skills listings source (docs/methodology.md, "Readiness"): a file the operator keeps, one skill
folder of a public GitHub repository per line, as GitHub links it
(`https://github.com/<owner>/<repo>/tree/<ref>/<path>`); blank lines and `#` comments are ignored. Each
folder's SKILL.md and its repository's status are read through the code-host client, never cloned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..lookups.codehost import RepoFolder, parse_folder_url
from .list_file import list_lines

SKILLS_LIST_ENV = "SEVENMAPS_SKILLS_LIST"
MAX_SKILLS = 10_000


@dataclass(frozen=True)
class SkillsList:
    folders: tuple[RepoFolder, ...]
    problems: tuple[str, ...]  # "line N: why", for lines that are not a skill folder


def read_skills_list(path: str | os.PathLike[str]) -> SkillsList:
    """The folders of the list, each once, in file order, and why any other line was refused."""
    folders: dict[str, RepoFolder] = {}
    problems: list[str] = []
    for number, line in list_lines(path, "skills list"):
        folder = parse_folder_url(line)
        if folder is None:
            problems.append(f"line {number}: not a GitHub folder URL (https://github.com/<owner>/<repo>/tree/"
                            f"<ref>/<path>): {line[:200]!r}")
        elif len(folders) >= MAX_SKILLS:
            problems.append(f"line {number}: more than {MAX_SKILLS:,} skills; the rest are not read")
            break
        else:
            folders.setdefault(folder.url.lower(), folder)
    return SkillsList(tuple(folders.values()), tuple(problems))
