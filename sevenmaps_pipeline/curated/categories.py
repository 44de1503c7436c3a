"""The category rule (sql/category_winners.sql, sql/list_categories.sql, sql/server_categories.sql) and its
verdicts per tool list, kept per method.

`place` runs the rule over tables already in a DuckDB session: the map's day build (curated/tool_tables.py) and
the corpus measurement (devtools/category_corpus.py) call the same function, so what is measured is what the map
publishes.

A list's tool_names and words winners depend on its tools and the category method alone (assets/
categories.json and CATEGORY_PARAMS), so a list is scored the first day it is seen and every later day
reads its row: `cache/list_categories-<method digest>.parquet`, one row per list ever scored under that
method. A changed method is another digest, hence another file, and every list is scored again. Like the
other caches it lies outside every day partition: never signed, exported or published, safe to delete (the
next build scores every list of its day again), and the same rows either way (docs/scaling.md).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.paths import LakePaths
from ..rules.methods import CATEGORY_PARAMS
from .cache_files import store

CACHE_FORMAT = "list-categories-1"

LIST_CATEGORIES_SCHEMA = pa.schema([
    pa.field("tools_hash", pa.string()),
    pa.field("tool_count", pa.int32()),
    pa.field("names_topic", pa.string()),
    pa.field("names_score", pa.int32()),
    pa.field("names_words", pa.list_(pa.string())),
    pa.field("words_topic", pa.string()),
    pa.field("words_score", pa.int32()),
    pa.field("words_words", pa.list_(pa.string())),
    pa.field("scored_day", pa.date32()),
])


def method_digest(document: bytes, params: dict) -> str:
    """What the rows depend on besides the list: the categories document as shipped and the parameters."""
    blob = CACHE_FORMAT.encode() + b"\n" + document + b"\n" + json.dumps(params, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cache_file(lake: LakePaths, digest: str) -> Path:
    return lake.root / "cache" / f"list_categories-{digest}.parquet"


def known_lists(lake: LakePaths, digest: str) -> pa.Table:
    """Every list's row scored under the method so far (none when the file is missing or unreadable)."""
    path = cache_file(lake, digest)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return LIST_CATEGORIES_SCHEMA.empty_table()
    if not table.schema.remove_metadata().equals(LIST_CATEGORIES_SCHEMA):
        return LIST_CATEGORIES_SCHEMA.empty_table()
    return table.replace_schema_metadata(None)


def keep(lake: LakePaths, digest: str, known: pa.Table, scored: pa.Table) -> None:
    """Add the lists scored now to the method's file (rewritten whole, as every file in the lake)."""
    if not scored.num_rows:
        return
    fresh = pc.invert(pc.is_in(scored.column("tools_hash"), value_set=known.column("tools_hash")))
    rows = pa.concat_tables([known, scored.cast(LIST_CATEGORIES_SCHEMA).filter(fresh)])
    store(lake, cache_file(lake, digest), rows.sort_by("tools_hash"), {}, "list_categories")


# The registry text of a listing, as a DuckDB expression over its name, title and description columns: the name
# after its namespace (`io.github.acme/flight-search` -> `flight-search`; a package scope `@acme/` is one too),
# then the title and the description. The map (curated/tool_tables.py) and the corpus measure read it alike.
LISTING_TEXT_SQL = "concat_ws(' ', regexp_replace({name}, '^.*/', ''), {title}, {description})"


def entry(word: str) -> str:
    """A topic word as an entry: lower case, a two-word entry's space as '_'."""
    return word.lower().strip().replace(" ", "_")


def word_forms(word: str) -> set[str]:
    """Every form of a topic word that matches as written: the word and its plural, with spaces in
    two-word entries as '_' (words are matched raw: no trailing 's' is ever stripped, so "news" and
    "teams" stay themselves and never become "new" or "team")."""
    w = entry(word)
    forms = {w}
    if w.endswith(("s", "x", "z", "ch", "sh")):
        forms.add(w + "es")
    elif w.endswith("y") and w[-2:-1] not in ("a", "e", "i", "o", "u"):
        forms.add(w[:-1] + "ies")
    else:
        forms.add(w + "s")
    return forms


def topic_words(doc: dict[str, Any]) -> pa.Table:
    """(topic, word, tool_name_topic, entry): every form that matches, and the entry it is a form of (the
    registry text keeps its verdict by distinct entries, not by forms or repeats: sql/server_categories.sql)."""
    name_topics = set(doc["tool_name_topics"])
    rows = sorted({(topic, form, topic in name_topics, entry(w))
                   for topic, ws in doc["topics"].items() for w in ws for form in word_forms(w)})
    return pa.table({"topic": [r[0] for r in rows], "word": [r[1] for r in rows],
                     "tool_name_topic": [r[2] for r in rows], "entry": [r[3] for r in rows]})


def other_senses_pattern(doc: dict[str, Any]) -> str:
    """An RE2 pattern over the lower-case, camelCase-split text matching every phrase in which a topic word
    means something else ("rich menu", "context menus", "email-delivery"), with the separators around it as
    groups 1 and 3 (sql/category_winners.sql blanks the phrase and keeps them). With no phrases, a pattern
    that matches nothing."""
    alternatives = []
    for phrase in doc.get("other_senses", []):
        words = entry(phrase).split("_")
        if not all(w.isascii() and w.isalnum() for w in words):
            raise ValueError(f"assets/categories.json other_senses: {phrase!r} is not plain words")
        last = "|".join(sorted(word_forms(words[-1])))
        alternatives.append("[^a-z0-9]+".join([*words[:-1], f"(?:{last})"]))
    if not alternatives:
        return "(^)(a^)($)"
    return "(^|[^a-z0-9])(" + "|".join(alternatives) + ")([^a-z0-9]|$)"


def whole_words_pattern(doc: dict[str, Any]) -> str:
    """An RE2 pattern matching, as a whole, every one-word form of a topic word ("gitlab", "youtubes"): a camelCase
    word that matches it is counted as itself, not as its parts (sql/category_winners.sql, categories-1.5)."""
    forms = sorted(f for ws in doc["topics"].values() for w in ws for f in word_forms(w) if f.isascii() and f.isalnum())
    return "|".join(forms) if forms else "a^"


def rule_params(doc: dict[str, Any], day: dt.date) -> dict[str, Any]:
    p = CATEGORY_PARAMS
    return {"day": day, "method_version": doc["method"], "shared_min": p["shared_toolset_min_endpoints"],
            "min_names": p["tool_name_min_names"], "dominance": p["tool_name_dominance"],
            "min_share": p["tool_name_min_share"], "words_min": p["words_min_score"],
            "registry_min_entries": p["registry_keeps_min_entries"], "other_senses": other_senses_pattern(doc),
            "whole_words": whole_words_pattern(doc)}


@dataclass(frozen=True)
class Placed:
    rows: pa.Table  # sql/server_categories.sql's rows
    scored: pa.Table  # the lists scored now (LIST_CATEGORIES_SCHEMA), for `keep`
    day_lists: int  # lists the day's rows read, scored now or known


def place(con: duckdb.DuckDBPyConnection, day: dt.date, doc: dict[str, Any], known: pa.Table,
          day_hashes: pa.Array, listing_text: pa.Table) -> Placed:
    """The day's categories, in a session that already holds `daily_status` and `list_texts` (tools_hash, name,
    description of the tools of the lists not in `known`: a table, or a view the map's build reads as it
    goes, curated/tool_tables.py); day_hashes (every list of the day with tools), listing_text (server_key,
    text: the registry text of each endpoint). Every endpoint with a tool list has a row, an empty list's too
    (its registry verdict alone: sql/server_categories.sql)."""
    params = rule_params(doc, day)
    con.register("listing_text", listing_text)
    con.register("topic_words", topic_words(doc))
    # Generic words as listed (their plurals are listed where they are generic: "new" is, "news" is not).
    con.register("generic_words", pa.table({"word": sorted(doc["generic_words"])}))
    winners = duck.run_sql(con, "category_winners", params)
    con.register("category_winners", winners)
    scored = duck.run_sql(con, "list_categories", params).cast(LIST_CATEGORIES_SCHEMA)
    day_rows = pa.concat_tables([known.filter(pc.is_in(known.column("tools_hash"), value_set=day_hashes)),
                                 scored])
    con.register("list_categories", day_rows)
    return Placed(duck.run_sql(con, "server_categories", params), scored, day_rows.num_rows)
