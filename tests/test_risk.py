"""Risk levels on realistic tools: annotations first, then name and description (method 1.2)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from sevenmaps_pipeline.rules.risk import VOCABULARY, Vocabulary, classify, name_words

RO = {"readOnlyHint": True}
WRITE = {"readOnlyHint": False, "destructiveHint": False}
DESTROY = {"readOnlyHint": False, "destructiveHint": True}


def tool(name, description="", annotations=None):
    t = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations is not None:
        t["annotations"] = annotations
    return t


@pytest.mark.parametrize(("t", "risk"), [
    # reads
    (tool("get_weather", "Get the current weather for a city."), "green"),
    (tool("list_issues", "List open issues in a repository."), "green"),
    (tool("searchDocs", "Search the documentation."), "green"),
    (tool("verify_signature", "Verify a webhook signature."), "green"),            # method 1.2
    (tool("extract_tables", "Extract tables from a PDF."), "green"),                # method 1.2
    (tool("convert_currency", "Convert an amount between currencies."), "green"),   # method 1.2
    # writes
    (tool("create_issue", "Create an issue in a repository."), "yellow"),
    (tool("update_record", "Update fields of a CRM record."), "yellow"),
    (tool("send_message", "Send a Slack message to a channel."), "yellow"),
    (tool("book_table", "Reserve a table at a restaurant."), "yellow"),
    # deletes, payments, grants, deploys, code execution
    (tool("delete_file", "Delete a file."), "red"),
    (tool("drop_table", "Drop a database table."), "red"),
    (tool("pay_invoice", "Pay an invoice with the stored card."), "red"),
    (tool("transfer", "Move money between accounts."), "red"),
    (tool("grant_role", "Give a user a role in the organisation."), "red"),
    (tool("deploy_service", "Deploy the service to an environment."), "red"),
    (tool("run_python", "Run a Python snippet in a sandbox."), "red"),
    (tool("execute_sql", "Execute a SQL statement."), "red"),
    # mild names that do risky things
    (tool("sync_folder", "Mirror a folder; deletes remote files missing locally."), "red"),
    (tool("cleanup", "Permanently removes backups older than 30 days."), "red"),
    (tool("get_user", "Get a user and update their last-seen time."), "yellow"),
    (tool("helper", "Executes the given shell command on the host."), "red"),
    # alarming names that only read
    (tool("get_deleted_messages", "List messages that were deleted in the last 30 days."), "green"),
    (tool("list_payments", "List payments received this month, free of charge."), "green"),
    (tool("search_exploits", "Search a database of known exploits."), "green"),
    (tool("payment_status", "Shows the status of a payment."), "green"),
    # nothing to go on: caution
    (tool("frobnicate", ""), "yellow"),
    # real names (method 1.3): the verb wherever it stands, in any case style
    (tool("items_list", "Items in the store."), "green"),
    (tool("API-get-user", "Notion | Retrieve a user"), "green"),
    (tool("listOpenIssues", "Open issues of a repository."), "green"),
    (tool("firecrawl_research_search_papers", "Semantic search over arXiv abstracts."), "green"),
    (tool("message_list", "Messages of a channel."), "green"),
    (tool("tag_write", "Perform write operations on tags."), "yellow"),
    (tool("widgets_create_or_update", "Create or update a widget."), "yellow"),
    (tool("widgets_get_or_delete", "Get or delete a widget."), "red"),
    (tool("pages-update", "Update a page."), "yellow"),
    (tool("actions_run_trigger", "Trigger workflow runs."), "red"),
    (tool("scale_deployment", "Set the replica count."), "red"),
    (tool("format_text", "Format a paragraph as Markdown."), "green"),
    (tool("format_disk", "Format a volume."), "red"),
    (tool("generate_key", "A new API key for the account."), "yellow"),
    (tool("db-stats", "Returns statistics of a database"), "green"),
    (tool("console_messages", "Returns all console messages"), "green"),
    (tool("lighthouse_audit", "Get scores. Full reports are saved to disk."), "yellow"),
    (tool("search_feedback", "Send feedback on a previous search result."), "yellow"),
    (tool("list_notifications", "Lists notifications, including mentions, assignments and updates."), "green"),
    (tool("find_duplicate", "Find duplicates. This is read-only and does not modify anything."), "green"),
])
def test_words_decide_without_annotations(t, risk):
    result = classify(t)
    assert result.risk == risk, (t["name"], result.rule, result.evidence)
    assert result.rule.startswith("words: ")
    assert result.method == "risk-1.7"


def test_annotations_count_first_and_unset_is_not_false():
    assert classify(tool("delete_cache", "Delete the cache.", DESTROY)).rule == \
        "annotations: readOnlyHint=false, destructiveHint=true"
    assert classify(tool("create_note", "Create a note.", WRITE)).risk == "yellow"
    assert classify(tool("get_x", "Get x.", RO)).risk == "green"
    # readOnlyHint=false with destructiveHint unset: changes data, the words say how much
    assert classify(tool("purge_queue", "Purge a queue.", {"readOnlyHint": False})).risk == "red"
    assert classify(tool("tag_item", "Tag an item.", {"readOnlyHint": False})).risk == "yellow"
    assert classify(tool("get_x", "Get x.", {"readOnlyHint": False})).risk == "yellow"
    # destructiveHint alone still counts; an empty annotations object decides nothing
    assert classify(tool("tidy", "Tidy up.", {"destructiveHint": True})).risk == "red"
    assert classify(tool("get_x", "Get x.", {})).rule.startswith("words: ")


def test_contradicting_annotations_are_reported_not_silently_overridden():
    result = classify(tool("delete_user", "Delete a user account.", RO))
    assert result.risk == "green" and result.rule == "annotations: readOnlyHint=true"
    assert result.contradiction == "readOnlyHint=true, but the words say red (name:delete)"
    mild = classify(tool("wipe_disk", "Wipe a disk.", WRITE))
    assert mild.risk == "yellow" and "destructiveHint=false, but the words say red" in mild.contradiction
    assert classify(tool("get_x", "Get x.", RO)).contradiction is None


def test_ignore_annotations_decides_from_words_alone():
    t = tool("delete_user", "Delete a user account.", RO)
    assert classify(t, ignore_annotations=True).risk == "red"


def test_a_vocabulary_change_is_a_method_change():
    doc = json.loads(VOCABULARY.read_text())
    doc["read_verbs"] = [v for v in doc["read_verbs"] if v != "verify"]
    doc["method"] = "risk-1.1"
    older = Vocabulary.from_dict(doc)
    t = tool("verify_signature", "Verify a webhook signature.")
    assert (classify(t, older).risk, classify(t, older).method) == ("yellow", "risk-1.1")
    assert (classify(t).risk, classify(t).method) == ("green", "risk-1.7")


def test_vocabularies_hash_by_their_words_so_cached_rules_never_mix_two():
    """The cached rules (name_verb and others) are keyed by the vocabulary, whose hash is computed once: two
    vocabularies of the same words are one key, and one that differs by a word is another, with its own verdict."""
    doc = json.loads(VOCABULARY.read_text())
    same, again = Vocabulary.from_dict(doc), Vocabulary.from_dict(json.loads(VOCABULARY.read_text()))
    assert same is not again and same == again and hash(same) == hash(again)
    doc["red_phrases"] = [*doc["red_phrases"], "tidies up"]
    other = Vocabulary.from_dict(doc)
    assert other != same and hash(other) != hash(same)
    t = tool("get_notes", "Returns notes and tidies up old ones.")
    assert (classify(t, same).risk, classify(t, other).risk, classify(t, same).risk) == ("green", "red", "green")


def test_a_vocabulary_sent_to_another_process_hashes_there_as_one_built_there():
    """The hash is computed once per process (string hashes differ between processes), never carried along."""
    vocab = Vocabulary.from_dict(json.loads(VOCABULARY.read_text()))
    hash(vocab)
    assert "_hash" in vocab.__dict__ and "_hash" not in pickle.loads(pickle.dumps(vocab)).__dict__
    again = pickle.loads(pickle.dumps(vocab))
    assert again == vocab and hash(again) == hash(vocab)


def test_the_rules_read_only_the_four_fields_a_tool_facts_row_keeps():
    """A rules change reads carried rows' levels again from name, description, inputSchema and annotations
    (curated/carried_facts.py): over the corpus, a tool's other fields never change its verdict."""
    corpus = json.loads((Path(__file__).parent / "data" / "risk_corpus.json").read_text())
    tools = corpus["tools"]
    assert len(tools) > 300
    for n, t in enumerate(tools):
        kept = {k: t[k] for k in ("name", "description", "annotations") if k in t}
        kept["inputSchema"] = {"type": "object", "properties": {"output_path" if n % 3 == 0 else "query": {}}}
        t = {**kept, "server": t["server"]}
        extra = {**kept, "title": "Delete everything", "outputSchema": {"properties": {"output_path": {}}},
                 "_meta": {"destructive": True}}
        assert classify(extra) == classify(kept) == classify(t), t.get("name")


def test_a_reading_tool_told_where_to_write_its_output_is_yellow():
    """Method 1.5: an argument that names where the output goes (`output_path`, `saveDir`) writes a file."""
    def with_arguments(name, description, *arguments):
        return {**tool(name, description), "inputSchema": {"type": "object",
                                                           "properties": {a: {"type": "string"} for a in arguments}}}

    writes = classify(with_arguments("convert_to_pdf", "Convert a Word document.", "filename", "output_filename"))
    assert (writes.risk, writes.evidence) == ("yellow", ["name:convert", "argument:output_filename"])
    assert classify(with_arguments("export_graph", "Export the graph.", "outputPath")).risk == "yellow"
    assert classify(with_arguments("x", "Returns the page as text.", "saveDir")).evidence == \
        ["description:returns", "argument:saveDir"]
    # A trip's destination, an output format or a path to read are not places to write.
    for arguments in (("destination",), ("output_format",), ("path", "file_path"), ("target",)):
        assert classify(with_arguments("get_directions", "Get directions.", *arguments)).risk == "green", arguments
    # A schema of another shape names no arguments, and never fails the check.
    for schema in ({"properties": ["output_path"]}, "output_path", None, {"properties": {7: {}}}):
        assert classify({**tool("get_x", "Get x."), "inputSchema": schema}).risk == "green"


def test_git_fetch_and_pull_change_the_repository():
    assert classify(tool("git_fetch", "Fetch updates from a remote repository.")).evidence == ["name:git_fetch"]
    assert classify(tool("git_pull", "Pull from the remote.")).risk == "yellow"
    assert classify(tool("fetch_page", "Fetch a web page.")).risk == "green"


def test_name_words_split_snake_kebab_and_camel_case():
    assert name_words("getUserProfile") == ["get", "user", "profile"]
    assert name_words("delete-file_v2") == ["delete", "file", "v2"]


def test_classify_tools_cli_prints_one_json_line_per_tool(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [tool("get_x", "Get x."), tool("delete_user", "Delete a user.", RO), 7]}))
    out = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "classify-tools", str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    rows = [json.loads(line) for line in out]
    assert [(r["name"], r["risk"]) for r in rows] == [("get_x", "green"), ("delete_user", "green"), (None, None)]
    assert rows[1]["contradiction"] and rows[1]["evidence"] == ["readOnlyHint=true"]
    out = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "classify-tools", str(path),
                          "--ignore-annotations"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert json.loads(out[1])["risk"] == "red"


def test_a_description_that_says_it_writes_or_bills_names_a_change():
    """Method 1.6: a reading name is yellow when its description says outright that it writes or that its calls are
    billed; the evidence names the words."""
    export = classify(tool("export_report", "Export the monthly report as CSV.\n\nMutating operation: writes a file "
                                            "in the exports folder."))
    assert (export.risk, export.evidence) == ("yellow", ["name:export", "description:mutating operation"])
    assert classify(tool("db_query", "Runs a SQL statement with write capability.")).risk == "yellow"
    assert classify(tool("plugin_status_refresh", "刷新插件状态（写操作，需确认）。")).evidence == \
        ["name:status", "description:写操作"]
    billed = classify(tool("summarize_contract", "Summarize a contract. Billed per page as Contract Summary."))
    assert (billed.risk, billed.evidence) == ("yellow", ["name:summarize", "description:billed per"])
    assert classify(tool("summarize_contract", "Summarize a contract in five bullet points.")).risk == "green"


def test_revert_undo_replace_and_clear_are_high_risk():
    """Method 1.6: they take back or overwrite what was there."""
    for name, description in (("revert_migration", "Revert the last applied migration."),
                              ("undo_last_edit", "Undo the last edit in the open document."),
                              ("replace_cell_range", "Replace the values in a range of cells."),
                              ("clear_cache", "Clear the response cache.")):
        assert classify(tool(name, description)).risk == "red", name
    assert classify(tool("get_undo_history", "Get the undo stack of a document.")).risk == "green"


def test_a_description_starting_to_read_that_joins_a_high_risk_verb_is_red():
    """Method 1.6: a name without a verb, a description that starts reading and joins a high-risk action; before,
    only joined changing verbs were read there, so `clear` (changing until 1.6) would have left such a tool
    green."""
    result = classify(tool("console", "Read the console's messages, then clear the console."))
    assert (result.risk, result.evidence) == ("red", ["description:read", "description:clear"])
    assert classify(tool("console", "Read the console's messages, then update the filter.")).risk == "yellow"


@pytest.mark.parametrize("description, risk, evidence", [
    ("Compute PageRank for all nodes. Stores 'pageranks' on nodes.", "yellow", "description:stores"),
    ("Export the report as PDF.\n\nCreates a file in the workspace and returns its link.", "yellow",
     "description:creates"),
    ("Find the largest component. It also removes every smaller one.", "red", "description:removes"),
    ("Search saved searches. Triggers a refresh of the cache.", "red", "description:triggers"),
])
def test_a_later_sentence_that_starts_with_an_effect_names_a_change(description, risk, evidence):
    """Method 1.7: a sentence after the first that begins with what the tool does to stored things."""
    result = classify(tool("compute_rank", description))
    assert (result.risk, result.evidence[-1]) == (risk, evidence), result


@pytest.mark.parametrize("description", [
    "List all App Configuration stores in a subscription. This command displays the\nstores available.",
    "Get the changelog. Updates are listed newest first.",  # a noun at the sentence's start
    "Get a query plan. Executes nothing; the plan is read from the cache.",  # not an effect on stored things
    "Get the quota; stores, saves and writes are counted separately.",  # lower case: not a sentence's verb
])
def test_words_that_are_not_a_later_sentence_s_effect_leave_a_reading_tool_green(description):
    assert classify(tool("get_plan", description)).risk == "green", classify(tool("get_plan", description))


@pytest.mark.parametrize("description", [
    "Keep only the largest component; remove the rest. Destructive; auto-snapshots first.",
    "Reorder slides. WARNING: This is a destructive operation.",
    "\U0001f5d1\ufe0f DESTRUCTIVE: drops a table and its rows.",
    "Close a bug report. [destructive]",
    "**Destructive**: writes to the target branch.",
    "List local models. THIS IS DESTRUCTIVE AND HAS NO UNDO.",
])
def test_a_description_that_calls_its_tool_destructive_is_red(description):
    result = classify(tool("extract_component", description))
    assert (result.risk, result.evidence) == ("red", ["description:destructive"]), result


@pytest.mark.parametrize("description", [
    "Preview a filter. Non-destructive: nothing is removed.",
    "Show the plan. This is not destructive.",
    "List the tools. Destructive tools (delete_*, restore_*) need approval.",
    "Get the graph. Run the destructive step on a copy.",
])
def test_a_description_that_only_mentions_destruction_does_not_call_its_tool_destructive(description):
    assert classify(tool("get_graph", description)).risk == "green", classify(tool("get_graph", description))


_LONG_DESCRIPTIONS = """
from sevenmaps_pipeline.rules.risk import classify
units = ["\\n", "\\n ", "\\t\\n", "\\n- ", ". ", "destructive\\n", "destructive ", "It also ", "Stores ", "and ", ", "]
for unit in units:
    description = "Get the item" + unit * (100_000 // len(unit)) + "."
    for name in ("get_item", "item"):
        classify({"name": name, "description": description})
print("read")
"""


def test_descriptions_of_100_000_characters_built_to_make_a_pattern_search_again_are_read_in_one_pass():
    """A server's description is theirs to fill: runs of line breaks and spaces cost one pass of each pattern, not
    a search from each character of the run (before, 2,000 line breaks took 40 s and 20,000 did not end). In a
    process of its own with a generous budget: a linear read of the 22 takes well under a second, a quadratic one
    hours, so a regression fails here rather than hanging the suite."""
    done = subprocess.run([sys.executable, "-c", _LONG_DESCRIPTIONS], capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.strip() == "read"
