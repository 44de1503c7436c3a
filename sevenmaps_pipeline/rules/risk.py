"""Tool risk: green (read-only), yellow (changes data), red (deletes, pays, grants, deploys or runs code).

The methodology's `tool_risk` (docs/methodology.md, "Tool risk"): a server's annotations count first (an
unset hint is not false); without a decisive annotation the tool's name and description decide, from the vocabulary in
`assets/risk_vocabulary.json`. Method 1.2: a tool whose name's verb reads is green when nothing in its
description suggests a change. Method 1.3 reads real tool names: the verb wherever it stands (snake,
kebab, dotted or camel case; resource first as in `items_list`; an API prefix as in `API-get-user`),
the riskier side of an `x_or_y` compound, two-word entries, and a description's leading verb when the
name has none; measured on real servers' tool lists against their own annotations (README, "Tool risk").
Method 1.5 also reads the names of a tool's arguments: a reading tool told where to write its output
(`output_path`, `saveDir`) writes a file.
Method 1.6, tuned on the corpus's development side only, moves tools only toward caution: a description
that says it writes ("mutating operation", "write capability", "写操作") or that its calls are billed
names a change, and `revert`, `undo`, `replace` and `clear` are high-risk.
Method 1.7, also only toward caution: a later sentence of a reading tool's description that starts with what
the tool does to stored things ("Stores 'pageranks' on nodes.") names a change (a high-risk one for
"Removes", "Deletes", ...), and a description that calls its own tool destructive makes it high-risk.
Annotations that contradict the words are reported as a contradiction (a finding), never silently
overridden either way.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..packaged import shipped

VOCABULARY = shipped("assets", "risk_vocabulary.json")
LEVELS = ("green", "yellow", "red")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Vocabulary:
    method: str
    red: frozenset[str]
    yellow: frozenset[str]
    read: frozenset[str]
    red_phrases: tuple[str, ...]
    description_red: frozenset[str]
    description_change: frozenset[str]
    read_nouns: frozenset[str] = frozenset()
    description_read_leads: frozenset[str] = frozenset()
    noun_like: frozenset[str] = frozenset()
    change_phrases: tuple[str, ...] = ()
    output_argument_leads: frozenset[str] = frozenset()
    output_argument_objects: frozenset[str] = frozenset()
    sentence_effect_verbs: frozenset[str] = frozenset()

    def __hash__(self) -> int:
        # Every cached rule is keyed by the vocabulary, several times a tool; its fields never change, so its
        # hash is computed once (the generated one hashed the phrase tuples anew each time: docs/scaling.md).
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        return hash(tuple(getattr(self, f.name) for f in fields(self)))

    def __getstate__(self) -> dict[str, Any]:
        # A string's hash differs from process to process: a vocabulary sent to another computes its own.
        return {key: value for key, value in self.__dict__.items() if key != "_hash"}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Vocabulary:
        return cls(doc["method"], frozenset(doc["red_verbs"]), frozenset(doc["yellow_verbs"]),
                   frozenset(doc["read_verbs"]), tuple(p.lower() for p in doc["red_phrases"]),
                   frozenset(doc["description_red_verbs"]), frozenset(doc["description_change_verbs"]),
                   frozenset(doc.get("read_nouns", ())), frozenset(doc.get("description_read_leads", ())),
                   frozenset(doc.get("noun_like_verbs", ())), tuple(doc.get("change_phrases", ())),
                   frozenset(doc.get("output_argument_leads", ())), frozenset(doc.get("output_argument_objects", ())),
                   frozenset(doc.get("sentence_effect_verbs", ())))


@functools.cache
def default_vocabulary() -> Vocabulary:
    return Vocabulary.from_dict(json.loads(VOCABULARY.read_text()))


@dataclass
class RiskResult:
    name: str
    risk: str
    rule: str
    evidence: list[str] = field(default_factory=list)
    contradiction: str | None = None
    method: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def name_words(name: str) -> list[str]:
    """A tool name's words, lower case: snake_case, kebab-case, dotted, camelCase and PascalCase alike."""
    return [w.lower() for part in _SPLIT.split(name or "") for w in _CAMEL.split(part) if w]


def _present_forms(word: str) -> set[str]:
    """A verb as an instruction or in the present tense ("list", "lists", "queries", "searches")."""
    forms = {word, word + "s", word + "es"}
    if word.endswith("y"):
        forms.add(word[:-1] + "ies")
    return forms


def _levels(vocab: Vocabulary) -> tuple[tuple[str, frozenset[str]], ...]:
    return (("red", vocab.red), ("yellow", vocab.yellow), ("green", vocab.read))


def _verb_at(tokens: list[str], i: int, vocab: Vocabulary) -> tuple[str, str, int] | None:
    """(level, verb, words it spans) of the vocabulary entry starting at token i: two-word entries
    (`format_text`, `generate_key`) before one-word ones, so `format_text` reads and `format` alone does not."""
    for span in (2, 1):
        if i + span > len(tokens):
            continue
        word = "_".join(tokens[i:i + span])
        for level, verbs in _levels(vocab):
            if word in verbs or (span == 1 and level == "green" and word in vocab.read_nouns):
                return level, word, span
    return None


_RANK = {"green": 0, "yellow": 1, "red": 2}


@functools.lru_cache(maxsize=1 << 16)  # tool names repeat across lists far more than descriptions do
def name_verb(name: str, vocab: Vocabulary) -> tuple[str, str] | None:
    """(level, verb) the name says, wherever its verb stands: the first verb (`get_update_status` reads,
    `items_list`, `API-get-user`, `firecrawl_research_search_papers`), passing over words that are nouns as
    often as verbs when a later verb follows (`message_list`); in an `x_or_y` / `x_and_y` compound the
    riskier of the two (`widgets_create_or_update`, `get_or_delete`)."""
    tokens = name_words(name)
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        hit = _verb_at(tokens, i, vocab)
        if hit is None:
            i += 1
            continue
        found.append(hit[:2])
        i += hit[2]
    if not found:
        return None
    if any(t in ("or", "and") for t in tokens):
        return max(found, key=lambda f: _RANK[f[0]])
    # Words that are verbs and nouns alike (`message_list`, `label_write`) give way to a later verb.
    for level, word in found:
        if word not in vocab.noun_like:
            return level, word
    return found[0]


_WORD = re.compile(r"[a-z]+")


def _description_words(desc: str) -> set[str]:
    """The words of a lower-case description, read once for both of its verb lists."""
    return set(_WORD.findall(desc))


def _description_verbs(words: set[str], verbs: frozenset[str]) -> list[str]:
    """Unambiguous verb forms the description uses ("deletes"; never "deleted", an adjective in "lists
    deleted files")."""
    return sorted(words & verbs)


_LEAD_PREFIX = re.compile(r"^\W*(?:[\w .-]{1,40}\s\|\s*)?")  # "Notion | Retrieve a page" -> "retrieve a page"
_LEAD_WORD = re.compile(r"([a-z]+)")
_FIRST_SENTENCE = re.compile(r"^[^.\n]*")
_JOINED_WORD = re.compile(r"(?:,|\b(?:and|then|also|or))\s+(?:also\s+|then\s+)?([a-z]+)")


def _without_lead_prefix(desc: str) -> str:
    # _LEAD_PREFIX is anchored: its one match is at the start (what re.sub would remove), and always found.
    prefix = _LEAD_PREFIX.match(desc)
    return desc[prefix.end():] if prefix else desc


def _description_lead(desc: str) -> str:
    match = _LEAD_WORD.match(_without_lead_prefix(desc))
    return match.group(1) if match else ""


@functools.lru_cache(maxsize=8)
def _lead_forms(vocab: Vocabulary) -> dict[str, tuple[str, str]]:
    """Every present form of every one-word verb -> (level, the verb), riskier levels first on a clash."""
    forms: dict[str, tuple[str, str]] = {}
    for level, verbs in _levels(vocab):
        for verb in sorted(verbs):
            if "_" not in verb:
                for form in _present_forms(verb):
                    forms.setdefault(form, (level, verb))
    return forms


def _lead_level(lead: str, vocab: Vocabulary) -> tuple[str, str] | None:
    """(level, the verb in its base form) of a description's first word."""
    found = _lead_forms(vocab).get(lead)
    if found is not None:
        return found
    if lead in vocab.description_read_leads:
        return "green", lead
    return None


def _joined_words(desc: str) -> list[str]:
    """Words the first sentence joins to its own ("Get a user and update their last-seen time"):
    after and/then/also/or, never after a negation ("does not modify")."""
    first = _FIRST_SENTENCE.match(_without_lead_prefix(desc))
    return _JOINED_WORD.findall(first.group(0) if first else "")


def _joined_verbs(joined: list[str], verbs: frozenset[str]) -> list[str]:
    """The verbs among the first sentence's joined words (_joined_words)."""
    # The base form only: "and updates" is as often a noun.
    return sorted({w for w in joined if w in verbs and not (w.endswith("s") and w[:-1] in verbs)})


@functools.lru_cache(maxsize=8)
def _joined_vocabularies(vocab: Vocabulary) -> tuple[frozenset[str], frozenset[str]]:
    """The verbs a first sentence may join, high-risk and changing: built once per vocabulary."""
    return vocab.red | vocab.description_red, vocab.yellow | vocab.description_change


def output_arguments(arguments: Sequence[str], vocab: Vocabulary) -> list[str]:
    """Arguments that say where the tool writes its output: an output word followed by a place word
    (`output_filename`, `outputPath`, `save_dir`, `destination_file`); a bare `destination` is as often a
    trip's end."""
    return sorted(argument for argument in arguments if _is_output_argument(argument, vocab))


@functools.lru_cache(maxsize=1 << 16)  # argument names repeat across tools far more than descriptions do
def _is_output_argument(argument: str, vocab: Vocabulary) -> bool:
    words = name_words(argument)
    return len(words) >= 2 and words[0] in vocab.output_argument_leads and words[-1] in vocab.output_argument_objects



# The description calls its own tool destructive: "This is a destructive operation", "Destructive; auto-snapshots
# first", "[destructive]", "DESTRUCTIVE:"; never "non-destructive", "is not destructive" or "Destructive tools
# (delete_*)".
# Every run of white space is taken whole (possessive: `*+`, `++`) from its first character on, so a description
# of 100,000 line breaks costs one pass, not a search from each of them (a server's description is theirs to
# fill); what matches is what matched before: white space holding a line break, then the word.
_SELF_DESTRUCTIVE = re.compile(
    r"\bthis (?:tool |operation |action |call |command )?is (?:an? )?(?:irreversible,? |permanently |potentially )?"
    r"destructive\b"
    r"|(?:^|(?<!\s)[^\S\n]*\n\s*+|[^\w\s-]\s*+)destructive"
    r"(?=\s*+(?:[.;:!\u2014\u2013\]*()]|-\s|operation\b|action\b|$))",
    re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def _later_sentence_effect(vocab: Vocabulary) -> re.Pattern[str]:
    """A sentence after the first begun by one of the vocabulary's `sentence_effect_verbs`, capitalised, or
    after "It", "Also" or "This tool": wrapped lines and list items that continue a sentence start in lower
    case, so they do not count."""
    verbs = "|".join(sorted(vocab.sentence_effect_verbs))
    capitalised = "|".join(v.capitalize() for v in sorted(vocab.sentence_effect_verbs))
    # White space taken whole, as in _SELF_DESTRUCTIVE: a blank line or a list item after text, or a sentence's end.
    return re.compile(rf"(?:[.!?;]\s++|(?<!\s)[^\S\n]*\n[^\S\n]*\n\s*+|(?<!\s)[^\S\n]*\n\s*+[-*\u2022]\s++)"
                      rf"(?:(?:It|Also|This tool)\s++(?:also\s++)?({verbs})|({capitalised}))\b")


def sentence_effects(description: str, vocab: Vocabulary) -> tuple[list[str], list[str]]:
    """(high-risk, changing) verbs that begin a later sentence of the description, as what the tool does to stored
    things ("Compute PageRank for all nodes. Stores 'pageranks' on nodes."): only the vocabulary's
    `sentence_effect_verbs`, third-person forms that are not nouns at a sentence's start ("Updates", "Posts" and
    "Tags" are)."""
    if not vocab.sentence_effect_verbs:
        return [], []
    found = {(m.group(1) or m.group(2)).lower() for m in _later_sentence_effect(vocab).finditer(description)}
    forms = _lead_forms(vocab)  # every present form of every verb, with its level
    red = sorted(v for v in found if v in vocab.description_red or forms.get(v, ("",))[0] == "red")
    return red, sorted(found - set(red))


def calls_itself_destructive(description: str) -> bool:
    return _SELF_DESTRUCTIVE.search(description) is not None


_NAME_RULES = ("reading name, but the description joins a high-risk action",
               "reading name, but the description names a change",
               "reading name, but an argument says where it writes its output")
_LEAD_RULES = ("description starts reading, but joins a high-risk action",
               "description starts reading, but names a change",
               "description starts reading, but an argument says where it writes its output")


def _reading_unless(opening: list[str], change_opening: list[str], rules: tuple[str, str, str], desc: str,
                    changes: list[str], writes_to: list[str], description: str,
                    vocab: Vocabulary) -> tuple[str, str, list[str]] | None:
    """What a reading opening (the name's verb, or the description's leading verb: its evidence `opening`)
    becomes when its first sentence joins a high-risk verb (red) or a changing one, its description names a
    change, or an argument says where it writes its output (yellow); None when nothing does. Since method 1.6
    both openings read joined high-risk verbs (before, a description's leading verb read only the changing
    ones, so a verb moved from changing to high-risk would have left its tool green); since 1.7 a later
    sentence's effect (`sentence_effects`, of the description as written: `desc` is in lower case) counts as a
    joined verb."""
    # The sentences are read only where an effect verb occurs at all: a plain substring search is the cheaper test.
    has_effect_verb = any(verb in desc for verb in vocab.sentence_effect_verbs)
    effects = sentence_effects(description, vocab) if has_effect_verb else ([], [])
    joined_words = _joined_words(desc)
    red_verbs, change_verbs = _joined_vocabularies(vocab)
    joined_red = sorted(set(_joined_verbs(joined_words, red_verbs)) | set(effects[0]))
    if joined_red:
        return "red", rules[0], opening + [f"description:{v}" for v in joined_red]
    joined = sorted(set(_joined_verbs(joined_words, change_verbs)) | set(effects[1]))
    if joined or changes:
        return "yellow", rules[1], change_opening + [f"description:{v}" for v in joined + changes]
    if writes_to:
        return "yellow", rules[2], opening + [f"argument:{a}" for a in writes_to]
    return None


def _reading_name_level(verb: tuple[str, str], desc: str, lead: tuple[str, str] | None, changes: list[str],
                        writes_to: list[str], description: str, vocab: Vocabulary) -> tuple[str, str, list[str]]:
    """A reading name is read as such unless its description starts with a verb that changes things, says it
    saves or starts something, or its first sentence joins another verb to it (long descriptions name
    "updates", "changes" and "commits" as things, not as what the tool does), or an argument says where it
    writes its output."""
    if lead and lead[0] != "green" and lead[1] not in vocab.noun_like and lead[1] not in verb[1].split("_"):
        return lead[0], "reading name, but the description starts with another verb", \
            [f"name:{verb[1]}", f"description:{lead[1]}"]
    opening = [f"name:{verb[1]}"]
    return _reading_unless(opening, opening, _NAME_RULES, desc, changes, writes_to, description, vocab) or \
        ("green", "reading verb and nothing suggests a change (method 1.2)", opening)


def _reading_lead_level(lead: tuple[str, str], desc: str, changes: list[str], writes_to: list[str],
                        description: str, vocab: Vocabulary) -> tuple[str, str, list[str]]:
    """A description that starts with a reading verb, for a name without a verb."""
    opening = [f"description:{lead[1]}"]
    return _reading_unless(opening, [], _LEAD_RULES, desc, changes, writes_to, description, vocab) or \
        ("green", "description starts with a reading verb and nothing suggests a change (method 1.2)", opening)


def words_level(name: str, description: str, vocab: Vocabulary,
                arguments: Sequence[str] = ()) -> tuple[str, str, list[str]]:
    """(level, rule, evidence) from the name's verb (wherever it stands), the description and the names of
    the tool's arguments. Each clue is read when the ones before it have not decided: the description's
    words are not read for a name whose verb decides alone."""
    desc = (description or "").lower()
    verb = name_verb(name, vocab)
    if verb and verb[0] == "red":
        return "red", "the name's verb is high-risk", [f"name:{verb[1]}"]
    phrases = [p for p in vocab.red_phrases if p in desc]
    if phrases:
        return "red", "description says it does something high-risk", [f"description:{p}" for p in phrases]
    if "destructive" in desc and calls_itself_destructive(desc):
        return "red", "description calls the tool destructive (method 1.7)", ["description:destructive"]
    if verb and verb[0] == "yellow":
        red_in_desc = _description_verbs(_description_words(desc), vocab.description_red)
        if red_in_desc:
            return "red", "description names a high-risk action", [f"name:{verb[1]}"] + [f"description:{v}" for v in
                                                                                         red_in_desc]
        return "yellow", "the name's verb changes data", [f"name:{verb[1]}"]
    lead = _lead_level(_description_lead(desc), vocab)
    changes = [p for p in vocab.change_phrases if p in desc]
    writes_to = output_arguments(arguments, vocab)
    if verb and verb[0] == "green":
        return _reading_name_level(verb, desc, lead, changes, writes_to, description or "", vocab)
    return _description_level(desc, lead, changes, writes_to, description or "", vocab)


def _description_level(desc: str, lead: tuple[str, str] | None, changes: list[str], writes_to: list[str],
                       description: str, vocab: Vocabulary) -> tuple[str, str, list[str]]:
    """A name without a verb: the description's leading verb, then the verbs it uses anywhere."""
    if lead and lead[0] == "red":
        return "red", "description starts with a high-risk verb", [f"description:{lead[1]}"]
    words = _description_words(desc)
    red_in_desc = _description_verbs(words, vocab.description_red)
    if red_in_desc:
        return "red", "description names a high-risk action", [f"description:{v}" for v in red_in_desc]
    if lead and lead[0] == "yellow":
        return "yellow", "description starts with a verb that changes data", [f"description:{lead[1]}"]
    if lead and lead[0] == "green":
        return _reading_lead_level(lead, desc, changes, writes_to, description, vocab)
    change_in_desc = _description_verbs(words, vocab.description_change)
    if change_in_desc:
        return "yellow", "description names a change", [f"description:{v}" for v in change_in_desc]
    return "yellow", "no reading verb found: assumed to change data", []


def argument_names(tool: dict[str, Any]) -> list[str]:
    """The names of a tool's arguments (its inputSchema's properties); none from a schema of another shape."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return [str(k) for k in properties] if isinstance(properties, dict) else []


def classify(tool: dict[str, Any], vocab: Vocabulary | None = None, ignore_annotations: bool = False) -> RiskResult:
    # Reads a tool's name, description, inputSchema and annotations only: the fields its fingerprint holds, which
    # a tool_facts row keeps, so a rules change reads the levels of carried rows again from them
    # (curated/carried_facts.py). A rule that read another field would have to parse every list again.
    vocab = vocab or default_vocabulary()
    name = str(tool.get("name") or "")
    description = str(tool.get("description") or "")
    words, words_rule, words_evidence = words_level(name, description, vocab, argument_names(tool))
    raw = tool.get("annotations")
    annotations: dict[str, Any] = raw if isinstance(raw, dict) else {}
    read_only = annotations.get("readOnlyHint") if not ignore_annotations else None
    destructive = annotations.get("destructiveHint") if not ignore_annotations else None
    result = RiskResult(name=name, risk=words, rule=f"words: {words_rule}", evidence=words_evidence,
                        method=vocab.method)
    if read_only is True:
        result.risk, result.rule, result.evidence = "green", "annotations: readOnlyHint=true", ["readOnlyHint=true"]
        if words != "green" and words_evidence:
            result.contradiction = (f"readOnlyHint=true, but the words say {words} "
                                    f"({', '.join(words_evidence)})")
    elif read_only is False and destructive is True:
        result.risk, result.rule = "red", "annotations: readOnlyHint=false, destructiveHint=true"
        result.evidence = ["readOnlyHint=false", "destructiveHint=true"]
    elif read_only is False and destructive is False:
        result.risk, result.rule = "yellow", "annotations: readOnlyHint=false, destructiveHint=false"
        result.evidence = ["readOnlyHint=false", "destructiveHint=false"]
        if words == "red":
            result.contradiction = f"destructiveHint=false, but the words say red ({', '.join(words_evidence)})"
    elif read_only is False:  # changes data; the words say how much (never below yellow)
        result.risk = "red" if words == "red" else "yellow"
        result.rule = f"annotations: readOnlyHint=false; words: {words_rule}"
        result.evidence = ["readOnlyHint=false"] + words_evidence
    elif destructive is True:  # readOnlyHint unset: a destructive hint still counts
        result.risk, result.rule, result.evidence = "red", "annotations: destructiveHint=true", ["destructiveHint=true"]
    return result
