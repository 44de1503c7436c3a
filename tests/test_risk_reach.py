"""What any words-only rule can reach (devtools/risk_reach.py): the folds never split a publisher, the curve
counts what calling each set of tools read-only counts, a fold's honest threshold is chosen without it, and
the whole measure runs on a slice of the real corpus."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sparse

from sevenmaps_pipeline.devtools import risk_reach as R
from sevenmaps_pipeline.devtools.tool_corpus import CorpusServer, load_servers


def _row(publisher: str, changing: bool, level: str | None, rules: str, words: tuple[str, ...] = ()) -> R.Scored:
    return R.Scored(publisher=publisher, side="development", changing=changing, level=level, rules_level=rules,
                    words=frozenset(words))


def test_words_of_marks_where_each_word_stands() -> None:
    words = R.words_of("getUserBy-ID", "Reads a user. Never deletes it.")
    assert {"n:get", "n:user", "n:by", "n:id", "nf:get", "nl:id", "nb:get_user", "nb:by_id"} <= words
    assert {"df:reads", "d:reads", "d:deletes", "s:reads", "s:a", "s:user", "sb:reads_a"} <= words
    assert "s:deletes" not in words  # the second sentence is not the first
    assert "nodesc" in R.words_of("x", "   ") and R.name_tokens("list_HTTPServers") == ["list", "http", "servers"]


def test_every_field_adds_the_arguments_and_the_servers_other_tools() -> None:
    tool = {"name": "delete_file", "inputSchema": {"type": "object", "required": ["filePath", "ghost"], "properties": {
        "filePath": {"type": "string"}, "mode": {"type": "string", "enum": ["soft", "hard"], "default": "soft"},
        "force": {"type": ["boolean", "null"]}, "odd": 7}}}
    features = R.argument_features(tool)
    assert features == {"a:file_path", "at:file", "at:path", "ar:file_path", "arty:string", "aty:string", "a:mode",
                        "at:mode", "a:force", "at:force", "a:odd", "at:odd", "a:has_enum", "a:has_default", "a:count4",
                        "a:required1"}  # "ghost" is required but no argument
    assert R.argument_features({"name": "x"}) == R.argument_features({"inputSchema": {"properties": []}}) == {"a:none"}
    described = {"inputSchema": {"properties": {"q": {"description": "Words to find"}}}}
    assert {"ad:words", "ad:to", "ad:find", "a:q"} <= R.argument_features(described)
    assert R.field_features({**tool, "title": "Delete a File", "outputSchema": {"type": "object"},
                             "annotations": {"readOnlyHint": False, "title": "Gone"}}) == features | {
        "ti:delete", "ti:a", "ti:file", "os:True"}  # never the annotations: they are the answer
    assert "os:False" in R.field_features({"name": "x", "outputSchema": "not a schema"})
    assert R.server_features([{"name": "getUser"}, {"name": "get_team"}, {"name": "DeleteUser"}, {"name": ""}]) == {
        "sv:tools0", "sv:first:get", "sv:first:delete"}
    server = CorpusServer(id="s", publisher="p", name="s", description="", source="test", tools=(
        {"name": "x", "annotations": {"readOnlyHint": False}}, {"name": "y", "annotations": {"destructiveHint": True}},
        {"name": "z", "annotations": {"readOnlyHint": False}}, {"name": "w"},
        "not a tool"))  # type: ignore[arg-type]  # a corpus file is JSON: a list may hold anything
    rows = R.corpus_rows([server], every_field=True)
    assert R.says_every_tool_changes(server) and len(rows) == 3
    assert all({"sv:tools1", "sv:first:x", "a:none", "n:x"} & row.words for row in rows)
    assert not any(word.startswith(("a:", "sv:")) for row in R.corpus_rows([server]) for word in row.words)
    two = CorpusServer(id="t", publisher="p", name="t", description="", source="test", tools=server.tools[:2])
    told = CorpusServer(id="u", publisher="p", name="u", description="", source="test", tools=(
        *server.tools, {"name": "v", "annotations": {"readOnlyHint": True}}))
    assert not R.says_every_tool_changes(two) and not R.says_every_tool_changes(told)


def test_folds_keep_each_publisher_whole_and_are_even() -> None:
    publishers = [f"p{i % 37}" for i in range(1000)] + ["big"] * 120
    fold = R.grouped_folds(publishers, folds=5, seed=1)
    by_publisher: dict[str, set[int]] = {}
    for name, k in zip(publishers, fold, strict=True):
        by_publisher.setdefault(name, set()).add(int(k))
    assert all(len(ks) == 1 for ks in by_publisher.values())
    sizes = np.bincount(fold, minlength=5)
    assert sizes.max() - sizes.min() <= 28 and sizes.sum() == 1120  # at most one publisher's tools apart
    assert (R.grouped_folds(publishers, folds=5, seed=1) == fold).all()


def test_the_curve_counts_what_each_threshold_calls_read_only() -> None:
    rows = [_row("a", False, "green", "green"), _row("a", True, "yellow", "green"), _row("b", True, "red", "red"),
            _row("b", False, None, "yellow"), _row("c", True, None, "green"), _row("c", False, "green", "yellow")]
    answers = R._Answers.of(rows)
    p = np.array([0.1, 0.4, 0.9, 0.2, 0.4, 0.05])
    everyone = np.ones(len(rows), dtype=bool)
    points = R.curve(answers, p, everyone)
    assert [q.threshold for q in points] == [float("-inf"), 0.05, 0.1, 0.2, 0.4, 0.9]
    for q in points:  # the cumulative counts are what calling exactly those tools green counts
        assert q == R.point_of(answers, everyone & (p <= q.threshold), q.threshold)
    at = {q.threshold: q for q in points}
    # Green at p <= 0.2: rows 0, 3, 5 (all read-only), so all six agree but none of the changing is called green.
    assert (at[0.2].binary_agree, at[0.2].changing_called_read_only, at[0.2].changing_total) == (6, 0, 3)
    # Levels (rows with one: 0, 1, 2, 5): 0 green=green, 1 yellow (the rules' green made yellow)=yellow, 2 red=red,
    # 5 green=green.
    assert (at[0.2].level_agree, at[0.2].level_total) == (4, 4)
    assert (at[0.4].changing_called_read_only, at[0.4].binary_agree, at[0.4].level_agree) == (2, 4, 3)
    assert R.best_within(points, 0.0) == at[0.2] and R.least_unsafe_at(points, 0.99) == at[0.2]
    assert R.least_unsafe_at(points, 1.01) is None
    rules_green = np.array([r.rules_level == "green" for r in rows])
    vetoed = R.curve(answers, p, rules_green)
    assert vetoed[-1] == R.point_of(answers, rules_green, 0.4)  # vetoing nothing is the rules themselves
    assert all(q.changing_called_read_only <= vetoed[-1].changing_called_read_only for q in vetoed)


def test_a_folds_threshold_is_chosen_on_the_other_folds_alone() -> None:
    # Fold 0's own scores would call nothing green (its changing tool scores lowest); fold 1's choose 0.5.
    rows = ([_row("x", False, "green", "green"), _row("x", True, "yellow", "green")]
            + [_row("y", False, "green", "green"), _row("y", True, "yellow", "yellow")])
    answers, p = R._Answers.of(rows), np.array([0.3, 0.2, 0.5, 0.8])
    fold = np.array([0, 0, 1, 1])
    green, thresholds = R.honest_within(answers, p, np.ones(4, dtype=bool), fold, cap=0.0)
    assert thresholds == [0.5, float("-inf")]
    assert green.tolist() == [True, True, False, False]  # fold 0 at 0.5 calls its changing tool green


def test_a_word_counts_by_the_training_publishers_alone() -> None:
    # "w" is used by one training publisher (a) and one scored publisher (c): counted over every row it would have
    # two publishers and a weight, and c's tool with it would score apart from c's tool without it.
    rows = [_row("a", True, None, "yellow", ("w", "x")), _row("a", False, None, "green", ("x",)),
            _row("b", True, None, "yellow", ("x", "y")), _row("b", False, None, "green", ("y",)),
            _row("c", False, None, "green", ("w",)), _row("c", False, None, "green", ())]
    fold = np.array([0, 0, 0, 0, 1, 1])
    assert "w" not in R._vocabulary(rows, np.flatnonzero(fold == 0)) and "x" in R._vocabulary(rows, np.arange(4))
    p = R.out_of_fold(rows, fold)
    assert p[4] == p[5]
    assert "w" in R._vocabulary(rows, np.arange(6))  # the leak the test guards against would give it a column


def test_the_fit_orders_tools_by_their_words() -> None:
    x = sparse.csr_matrix(np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1]], dtype=float))
    theta = R.fit(x, np.array([1.0, 1.0, 0.0, 0.0, 1.0]), l2=1e-3)
    assert theta[1] > 0 > theta[2]
    assert (R.fit(x, np.array([1.0, 1.0, 0.0, 0.0, 1.0]), l2=1e-3) == theta).all()


@pytest.fixture(scope="module")
def small_measure() -> dict:
    servers = sorted(load_servers(), key=lambda s: s.id)[:120]
    return R.measure(servers, folds=3)


def test_the_measure_scores_every_tool_once_on_real_servers(small_measure: dict) -> None:
    corpus, rules = small_measure["corpus"], small_measure["rules"]
    assert corpus["tools"] == rules["binary_total"] > 500 and corpus["folds"] == 3
    assert 0.5 < small_measure["auc"] <= 1.0
    for calls in ("model", "rules_then_model"):
        within = small_measure[calls]["within_1pct"]
        assert within["changing_as_read_only_share"] <= 0.01 and within["binary_total"] == corpus["tools"]
        assert len(small_measure[calls]["honest_within_1pct"]["thresholds"]) == 3
    # The veto only ever calls the rules' green tools yellow: never more changing tools read-only than the rules.
    assert small_measure["rules_then_model"]["best"]["changing_called_read_only"] <= rules["changing_called_read_only"]
    against = small_measure["model"]["against_the_rules"]["all"]
    assert against["at_rules_share"]["changing_called_read_only"] <= rules["changing_called_read_only"]
    assert against["at_rules_agreement"]["binary_agree"] >= rules["binary_agree"]
    assert small_measure["corpus"]["holdout_tools"] == 0  # a slice of the three gatherings: no holdout in it
    every_field, told_apart = small_measure["variants"]["every_field"], small_measure["variants"]["told_apart"]
    assert every_field["corpus"] == corpus and every_field["rules"] == rules  # the same tools, more features
    assert every_field["model"]["within_1pct"]["changing_as_read_only_share"] <= 0.01
    left_out = told_apart["servers_left_out"]
    assert left_out == sum(R.says_every_tool_changes(s) for s in sorted(load_servers(), key=lambda s: s.id)[:120])
    assert told_apart["corpus"]["tools"] < corpus["tools"] if left_out else told_apart["corpus"] == corpus
    report = R.report(small_measure)
    assert "what any words-only rule can reach" in report and f"leaving out the {left_out} servers" in report
