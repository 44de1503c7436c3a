// The map's MCP server as the official TypeScript SDK client sees it (issue 36: "try it through both official
// SDK clients"). Run by tests/test_ts_sdk_client.py:
//
//   node tests/ts_client/check_server.mjs http://127.0.0.1:PORT/mcp [task ...]
//
// It connects with the SDK's own Client over StreamableHTTPClientTransport, lists the tools, calls every tool
// as docs/agents.md documents it (servers, hashes and days taken from earlier answers, never guessed), calls
// one with a bad argument, and prints one JSON summary on stdout. Every check that fails is a line of
// `problems`; the exit code is 1 when there is any.
//
// The answers' shapes are checked by the SDK itself, not here: Client.listTools() compiles a validator for
// every tool's outputSchema (cacheToolMetadata, with Ajv), and Client.callTool() then throws when an answer
// has no structuredContent or does not fit it (dist/esm/client/index.js callTool). A call that returns is
// therefore one the SDK accepted; a call that throws is recorded with the SDK's words.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = ["route", "server_status", "verify_lock", "changes_since", "watch", "report_road"];
// Tasks the demo fleet has tools for (sevenmaps demo); the first that route answers with a tool is used.
const DEFAULT_TASKS = ["weather forecast for a city", "search the docs", "search products in the catalog",
                       "list my notes", "list calendar events"];
const sdkVersion = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json",
                                                   import.meta.url), "utf8")).version;

const [url, ...givenTasks] = process.argv.slice(2);
if (!url) {
  console.error("usage: node check_server.mjs http://127.0.0.1:PORT/mcp [task ...]");
  process.exit(2);
}
const tasks = givenTasks.length ? givenTasks : DEFAULT_TASKS;
const problems = [];
const transportErrors = [];
const calls = [];

// Every HTTP exchange the SDK's transport makes, as "METHOD status content-type" (the fetch is Node's own,
// only watched): the GET stream it asks for after the handshake, the 202s of notifications, the answers.
const http = {};
async function watchedFetch(input, init) {
  const response = await fetch(input, init);
  const kind = (response.headers.get("content-type") ?? "none").split(";")[0];
  const key = `${init?.method ?? "GET"} ${response.status} ${kind}`;
  http[key] = (http[key] ?? 0) + 1;
  return response;
}

const client = new Client({ name: "sevenmaps-ts-sdk-check", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: watchedFetch });
// Whatever the transport meets outside a request's own answer (the GET stream it opens after the handshake,
// a reply it cannot read) reaches only these handlers: every one is a disagreement.
transport.onerror = (error) => transportErrors.push(`transport: ${error.message}`);
client.onerror = (error) => transportErrors.push(`client: ${error.message}`);

async function call(name, args) {
  const row = { tool: name, arguments: Object.keys(args) };
  try {
    const result = await client.callTool({ name, arguments: args });
    row.is_error = result.isError === true;
    row.structured = result.structuredContent !== undefined && result.structuredContent !== null;
    // Returned at all, with a validator cached for the tool: the SDK found the answer fits its schema.
    row.sdk_validated = row.structured && client.getToolOutputValidator(name) !== undefined;
    row.open_day = result.structuredContent?.open_day?.day ?? null;  // the provisional build it also read
    row.text = result.content?.[0]?.type === "text" ? result.content[0].text : null;
    row.text_is_the_answer = row.structured && row.text !== null && sameJson(row.text, result.structuredContent);
    if (row.is_error) problems.push(`${name} answered a tool error: ${row.text}`);
    else if (!row.sdk_validated) problems.push(`${name} answered without structured content the SDK checked`);
    else if (!row.text_is_the_answer) problems.push(`${name}'s text content is not its structured content as JSON`);
    if (row.sdk_validated) refusesWrongAnswers(name, result.structuredContent, row);
    if (row.text !== null && row.text.length > 200) row.text = `${row.text.slice(0, 200)}...`;
    calls.push(row);
    return result.structuredContent;
  } catch (error) {
    row.sdk_error = error.message;
    calls.push(row);
    problems.push(`${name}: the SDK refused the answer: ${error.message}`);
    return null;
  }
}

// The text block is the same answer as JSON (the spec's SHOULD for clients without structured content); the
// server writes it in the function's key order and the structured answer in the schema's, so keys are sorted.
function sameJson(text, value) {
  const sorted = (v) => (Array.isArray(v) ? v.map(sorted) : v && typeof v === "object"
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);
  try {
    return JSON.stringify(sorted(JSON.parse(text))) === JSON.stringify(sorted(value));
  } catch {
    return false;
  }
}

// The SDK's validator for a tool, given this very answer spoilt, must refuse it, or "the SDK accepted it" would
// say nothing: a key the schema does not name (every answer is closed), and the open_day it carries replaced
// by an empty object (a reference into the schema's $defs, so the SDK resolves them).
function refusesWrongAnswers(name, answer, row) {
  const validator = client.getToolOutputValidator(name);
  row.refuses_an_added_key = validator({ ...answer, ranked_by_payment: true }).valid === false;
  row.refuses_a_wrong_open_day = validator({ ...answer, open_day: {} }).valid === false;
  if (!row.refuses_an_added_key) problems.push(`the SDK's validator for ${name} accepts a key its schema does not name`);
  if (!row.refuses_a_wrong_open_day) problems.push(`the SDK's validator for ${name} accepts an empty open_day`);
}

// One sentence: one line, no sentence ending inside it, none of the SDK's or pydantic's wrapping, and it
// names the argument first (docs/agents.md: "a tool error with one sentence saying what is wrong").
function oneSentence(text, argument) {
  return typeof text === "string" && text.length > 0 && text.length <= 300 && !/[\r\n]/.test(text)
    && !/[.!?]\s+\S/.test(text) && !/validation error|Error executing tool|Traceback/i.test(text)
    && text.startsWith(`${argument} `);
}

async function listed() {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of TOOLS) if (!names.includes(name)) problems.push(`tool ${name} is not listed`);
  const schemas = {};
  for (const t of tools) {
    const properties = Object.keys(t.outputSchema?.properties ?? {});
    const validator = client.getToolOutputValidator(t.name);
    // The validator the SDK compiled must refuse an answer that is plainly not this tool's (an empty object),
    // or "accepted by the SDK" would say nothing.
    const refusesEmpty = validator !== undefined && validator({}).valid === false;
    schemas[t.name] = { properties: properties.length, validator_cached: validator !== undefined,
                        refuses_an_empty_answer: refusesEmpty, read_only: t.annotations?.readOnlyHint ?? null };
    if (!properties.length) problems.push(`${t.name} lists no outputSchema properties`);
    if (!refusesEmpty) problems.push(`the SDK's validator for ${t.name} accepts an empty answer`);
  }
  return { names, schemas };
}

// Every server an answer names, by server_id, to ask server_status about each.
function serversIn(answer, into) {
  for (const row of [...(answer?.tools ?? []), ...(answer?.set_aside ?? []), ...(answer?.changes ?? []),
                     ...(answer?.entries ?? [])]) {
    if (row.server_id) into.add(row.server_id);
  }
}

function daysBefore(day, n) {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - n);
  return d.toISOString().slice(0, 10);
}

async function callEveryTool() {
  const seen = new Set();
  let routed = null;
  let mapDay = null;
  for (const task of tasks) {
    const answer = await call("route", { task });
    serversIn(answer, seen);
    mapDay = mapDay ?? answer?.map_day ?? null;
    if (!routed && answer?.tools?.length) routed = answer.tools[0];
  }
  if (!routed) {
    problems.push(`route answered no tool for any of ${tasks.length} tasks`);
    return { routed: null, servers_asked: 0 };
  }
  await call("route", { task: tasks[0], risk: "green", limit: 3 });
  // Every form of the server a route answer names, as every tool that takes a server accepts it.
  for (const form of ["url", "server_key", "server_id", "server_name"]) {
    const answer = await call("server_status", { server: routed[form] });
    if (answer && answer.server_id !== routed.server_id) {
      problems.push(`server_status by ${form} answered for ${answer.server_id}, not ${routed.server_id}`);
    }
  }
  const lock = await call("verify_lock", { server: routed.url, tools_hash: routed.tools_hash });
  if (lock && lock.unchanged !== true) problems.push("verify_lock of the routed list is not unchanged");
  const changed = await call("verify_lock", { server: routed.server_id, tools_hash: "0".repeat(64) });
  if (changed && changed.unchanged !== false) problems.push("verify_lock of a list never served is unchanged");
  const since = daysBefore(mapDay, 7);
  serversIn(await call("changes_since", { since }), seen);
  await call("changes_since", { since, server: routed.server_key });
  serversIn(await call("watch", { days: 30 }), seen);
  await call("watch", { days: 7, server: routed.server_id });
  await call("report_road", { server: routed.server_id, tool: routed.tool, ok: true, ms: 120 });
  await call("report_road", { server: routed.url, tool: routed.tool, ok: false, fail: "timeout",
                              tools_hash: routed.tools_hash });
  // server_status of every server the answers named: down ones, set-aside ones, changed ones.
  seen.delete(routed.server_id);
  for (const id of seen) await call("server_status", { server: id });
  return { routed: { server_id: routed.server_id, tool: routed.tool, map_day: mapDay }, servers_asked: seen.size + 1 };
}

async function badArgument() {
  const args = { task: "weather forecast for a city", limit: 50 };
  const result = await client.callTool({ name: "route", arguments: args });
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : null;
  const row = { tool: "route", arguments: args, is_error: result.isError === true,
                structured: result.structuredContent !== undefined, text,
                one_sentence: oneSentence(text, "limit") };
  if (!row.is_error) problems.push("route with limit 50 was not a tool error");
  if (!row.one_sentence) problems.push(`route with limit 50 is not one sentence naming limit: ${JSON.stringify(text)}`);
  return row;
}

// A client that kept a session id from an earlier connection resumes without a handshake (the SDK skips
// initialize when given one) and ends it with DELETE: a stateless server answers it all the same, and its 405 to
// the DELETE is what the SDK takes as "no session to end".
async function resumed() {
  const again = new Client({ name: "sevenmaps-ts-sdk-check", version: "1.0.0" });
  const kept = new StreamableHTTPClientTransport(new URL(url), { fetch: watchedFetch,
                                                                  sessionId: "kept-from-an-earlier-connection" });
  kept.onerror = (error) => transportErrors.push(`resumed transport: ${error.message}`);
  try {
    await again.connect(kept);
    await again.listTools();
    const result = await again.callTool({ name: "watch", arguments: { days: 7 } });
    const answered = result.isError !== true && Boolean(result.structuredContent?.map_day);
    if (!answered) problems.push(`a resumed client's call was not answered: ${result.content?.[0]?.text}`);
    await kept.terminateSession();
    return { answered, ended: kept.sessionId === undefined };
  } catch (error) {
    problems.push(`a resumed client failed: ${error.message}`);
    return { answered: false, ended: false };
  } finally {
    await again.close().catch(() => {});
  }
}

const summary = { sdk: { package: "@modelcontextprotocol/sdk", version: sdkVersion } };
try {
  await client.connect(transport);
  summary.server = { info: client.getServerVersion(), offered_protocol_version: LATEST_PROTOCOL_VERSION,
                     protocol_version: transport.protocolVersion ?? null,
                     session_id: transport.sessionId ?? null, capabilities: client.getServerCapabilities(),
                     has_instructions: Boolean(client.getInstructions()) };
  await client.ping();
  const tools = await listed();
  summary.tools_listed = tools.names;
  summary.output_schemas = tools.schemas;
  summary.used = await callEveryTool();
  summary.bad_argument = await badArgument();
  // The other lists the server's capabilities announce, asked for as a client that reads them asks (the map
  // has none to offer, so each announced list must answer, empty).
  const announced = client.getServerCapabilities() ?? {};
  summary.prompts = announced.prompts ? (await client.listPrompts()).prompts.length : null;
  summary.resources = announced.resources ? (await client.listResources()).resources.length : null;
  // How a client ends its session; stateless, there is none (no Mcp-Session-Id), and nothing is sent.
  await transport.terminateSession();
  summary.resumed = await resumed();
} catch (error) {
  problems.push(`the session failed: ${error.message}`);
} finally {
  await client.close().catch((error) => problems.push(`close: ${error.message}`));
}
summary.http = http;
summary.calls = calls;
summary.transport_errors = transportErrors;
summary.problems = [...problems, ...transportErrors];
process.stdout.write(`${JSON.stringify(summary, null, 1)}\n`);
process.exit(summary.problems.length ? 1 : 0);
