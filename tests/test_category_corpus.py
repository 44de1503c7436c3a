"""The category rule on the real tool corpus (issue 37 point 4; devtools/category_corpus.py): the map's own rule
(curated/categories.place, the SQL behind `server_categories`) on every corpus server with a tool list. No
category label exists for these servers, so this holds the rule's properties, not its counts."""

from __future__ import annotations

from sevenmaps_pipeline.cli import main as cli_main
from sevenmaps_pipeline.devtools.category_corpus import counts, measure, report
from sevenmaps_pipeline.devtools.tool_corpus import DEVELOPMENT, EVALUATION, load_servers
from sevenmaps_pipeline.rules.methods import CATEGORY_PARAMS

PLACED = {"agree", "registry_only", "tools_only", "tools_win", "registry_two_words", "none"}


def test_every_server_with_tools_is_placed_once_with_both_verdicts_and_their_words():
    servers = [s for s in load_servers() if s.tools]
    placements = measure(servers)
    assert len(servers) >= 100 and len(placements) == len(servers)
    for p in placements:
        r = p.row
        assert r["decision"] in PLACED and r["method_version"] == "categories-1.7"
        # a verdict always comes with its words, and no words without a verdict
        assert (r["registry_category"] is None) == (not r["registry_evidence"])
        assert (r["tools_category"] is None) == (not r["tools_evidence"]) == (r["tools_rule"] is None)
        assert r["tool_count"] == len(p.server.tools)
    assert {p.side for p in placements} == {DEVELOPMENT, EVALUATION}


def test_the_tools_verdict_wins_a_disagreement_unless_the_registry_text_has_two_words_of_its_topic():
    placements = measure()
    disagree = [p for p in placements if p.row["registry_category"] and p.row["tools_category"]
                and p.row["registry_category"] != p.row["tools_category"]]
    assert disagree  # the corpus can tell: some servers' text and tools disagree
    for p in disagree:
        r = p.row
        if r["registry_entries"] >= CATEGORY_PARAMS["registry_keeps_min_entries"]:
            assert (r["category"], r["placed_by"], r["decision"]) == (
                r["registry_category"], "name_and_summary", "registry_two_words")
            assert len(r["registry_evidence"]) >= 2
        else:
            assert (r["category"], r["placed_by"], r["decision"]) == (r["tools_category"], r["tools_rule"],
                                                                      "tools_win")
            assert r["evidence"] == r["tools_evidence"]
    for p in placements:  # without a disagreement nothing changes from the registry-first order
        if p.row["decision"] not in ("tools_win",):
            assert p.before[0] == p.after[0]
    c = counts(placements)
    assert c["changed"] == c["decision"].get("tools_win", 0)


def test_the_bench_part_prints_the_figures_of_each_side(capsys):
    assert cli_main(["bench", "--only", "categories"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == report(measure()).strip()
    for label in ("all", DEVELOPMENT, EVALUATION):
        assert f"categories on real tool lists, {label}:" in out
    assert "changed category" in out and "registry kept with two words" in out
