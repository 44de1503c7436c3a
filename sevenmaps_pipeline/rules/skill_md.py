"""Reading an Agent Skill's SKILL.md (docs/methodology.md, "Readiness"): YAML frontmatter between two `---`
lines, parsed strictly with a YAML library (safe loading, duplicate keys refused, a mapping of string keys
required), then the Markdown body. Never raises on what a file holds: a bad file is (None, reason, body).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .readiness import SkillFacts, injection_hits
from .tokens import count_tokens

MAX_SKILL_MD_BYTES = 1_000_000  # a SKILL.md beyond this is not read (and its lines judged as not fetched)


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML that refuses a key given twice (PyYAML keeps the last one silently)."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


@dataclass(frozen=True)
class SkillMd:
    frontmatter: dict[str, Any] | None
    error: str | None
    body: str


def parse_skill_md(text: str) -> SkillMd:
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return SkillMd(None, "no frontmatter: SKILL.md must start with a '---' line", text)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return SkillMd(None, "frontmatter is not closed by a '---' line", text)
    block, body = "\n".join(lines[1:end]), "\n".join(lines[end + 1:])
    try:
        data = yaml.load(block, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        return SkillMd(None, f"frontmatter is not valid YAML: {' '.join(str(exc).split())[:200]}", body)
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        return SkillMd(None, "frontmatter is not a mapping of names to values", body)
    return SkillMd(data, None, body)


def skill_facts_from_text(text: str | None, folder_name: str | None, today: dt.date,
                          repository: dict | None = None) -> SkillFacts:
    """What a SKILL.md (None: not fetched) shows, with its folder's name and its repository's status."""
    facts = SkillFacts(folder=folder_name, today=today, repository=repository)
    if text is None:
        facts.fetched = False
        return facts
    facts.fetched = True
    parsed = parse_skill_md(text)
    facts.frontmatter, facts.frontmatter_error = parsed.frontmatter, parsed.error
    facts.body_tokens = count_tokens(parsed.body)
    description = (parsed.frontmatter or {}).get("description")
    facts.description_tokens = count_tokens(description) if isinstance(description, str) else None
    facts.injection_hits = injection_hits([parsed.body, description])
    return facts


def skill_facts_from_folder(folder: Path, today: dt.date) -> SkillFacts:
    """What a local skill folder shows (the code-host lines stay unseen: there is no repository here)."""
    path = folder / "SKILL.md"
    if not path.is_file() or path.stat().st_size > MAX_SKILL_MD_BYTES:
        return skill_facts_from_text(None, folder.resolve().name, today)
    return skill_facts_from_text(path.read_bytes().decode("utf-8", "replace"), folder.resolve().name, today)
