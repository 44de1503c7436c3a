// An MCP server built on the official TypeScript SDK's own server classes, for the prober to check over real
// TLS on 127.0.0.1 (tests/test_prober_ts_sdk_server.py): what a real Node deployment answers, not our fleet's
// Python SDK. Run as
//
//   node tests/ts_client/ts_server.mjs CERT_PEM KEY_PEM
//
// and it prints one JSON line {"port": N} once it listens. Every request is served on that port whatever its
// Host; the path picks the deployment:
//
//   /mcp            stateful (a session id from the SDK, answers as SSE streams: the SDK's defaults), with the
//                   in-memory event store the SDK's own stateful example deploys (examples/server/
//                   simpleStreamableHttp.js), so every SSE event carries an `id:` line as a resumable server sends
//   /stateless/mcp  stateless (no session), answers as JSON (enableJsonResponse)
//   /zod/mcp        stateless, answers as SSE, its tools made the way most Node servers make them: the SDK's
//                   high-level McpServer.registerTool with zod schemas, turned into JSON Schema by the SDK
//   /__seen         what the server was sent so far, as JSON: each MCP request's HTTP method, JSON-RPC
//                   method, User-Agent, Authorization and Mcp-Session-Id, and the sessions the SDK closed
//
// Anything else is a 404 (so /robots.txt allows every agent). tools/list answers three pages of tools through
// the SDK's low-level Server (nextCursor), with annotations and an outputSchema on some.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const [certFile, keyFile] = process.argv.slice(2);
if (!certFile || !keyFile) {
  console.error("usage: node ts_server.mjs CERT_PEM KEY_PEM");
  process.exit(2);
}

const TOOLS = [
  { name: "search_flights", description: "Search flights between two airports on a date.",
    inputSchema: { type: "object", properties: { from: { type: "string" }, to: { type: "string" },
                                                   date: { type: "string", format: "date" } },
                   required: ["from", "to", "date"] },
    annotations: { readOnlyHint: true, openWorldHint: true } },
  { name: "get_booking", description: "Get a booking by its reference.",
    inputSchema: { type: "object", properties: { reference: { type: "string" } }, required: ["reference"] },
    outputSchema: { type: "object", properties: { reference: { type: "string" }, status: { type: "string" } } },
    annotations: { readOnlyHint: true } },
  { name: "book_flight", description: "Book a flight and charge the saved card.",
    inputSchema: { type: "object", properties: { flight: { type: "string" } }, required: ["flight"] },
    annotations: { readOnlyHint: false, destructiveHint: false } },
  { name: "cancel_booking", description: "Cancel a booking; the fare may not be refunded.",
    inputSchema: { type: "object", properties: { reference: { type: "string" } }, required: ["reference"] },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true } },
  { name: "list_airports", description: "List the airports of a country.",
    inputSchema: { type: "object", properties: { country: { type: "string" } } } },
];
const PAGE_SIZE = 2;

function newServer() {
  const server = new Server({ name: "ts-sdk-travel", version: "3.1.4" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const start = request.params?.cursor ? Number.parseInt(request.params.cursor, 10) : 0;
    const page = TOOLS.slice(start, start + PAGE_SIZE);
    const next = start + PAGE_SIZE < TOOLS.length ? String(start + PAGE_SIZE) : undefined;
    return next ? { tools: page, nextCursor: next } : { tools: page };
  });
  return server;
}

function newZodServer() {
  const server = new McpServer({ name: "ts-sdk-notes", version: "0.9.0" });
  const noop = async () => ({ content: [{ type: "text", text: "not called by the prober" }] });
  server.registerTool("notes_search", {
    title: "Search notes",
    description: "Search the user's notes by words and an optional tag.",
    inputSchema: { query: z.string().min(1).describe("words to look for"), tag: z.string().optional(),
                   limit: z.number().int().max(50).default(10) },
    outputSchema: { ids: z.array(z.string()) },
    annotations: { readOnlyHint: true },
  }, noop);
  server.registerTool("notes_delete", {
    description: "Delete a note for good.",
    inputSchema: { id: z.string().uuid() },
    annotations: { destructiveHint: true, readOnlyHint: false },
  }, noop);
  return server;
}

const seen = { requests: [], closed: [] };
const sessions = new Map(); // session id -> its transport

function readJson(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try { resolve(text ? JSON.parse(text) : undefined); } catch { resolve(undefined); }
    });
  });
}

function record(req, body) {
  const messages = Array.isArray(body) ? body : body ? [body] : [null];
  for (const message of messages) {
    seen.requests.push({ path: req.url, http: req.method, rpc: message?.method ?? null,
                         user_agent: req.headers["user-agent"] ?? null,
                         authorization: req.headers.authorization ?? null,
                         session: req.headers["mcp-session-id"] ?? null });
  }
}

async function stateful(req, res, body) {
  const id = req.headers["mcp-session-id"];
  let transport = id ? sessions.get(id) : undefined;
  if (!transport && !id && body?.method === "initialize") {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
      onsessionclosed: (sid) => { sessions.delete(sid); seen.closed.push(sid); },
    });
    await newServer().connect(transport);
  }
  if (!transport) {
    // The SDK example's answers: an unknown session is 404 -32001, no session on anything but initialize 400.
    const error = id ? { code: -32001, message: "Session not found" }
                     : { code: -32000, message: "Bad Request: No valid session ID provided" };
    res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", error, id: null }));
    return;
  }
  await transport.handleRequest(req, res, body);
}

async function stateless(req, res, body, zod) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !zod });
  const server = zod ? newZodServer() : newServer();
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const https = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, async (req, res) => {
  try {
    const path = req.url.split("?")[0];
    if (path === "/__seen") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(seen));
      return;
    }
    if (path !== "/mcp" && path !== "/stateless/mcp" && path !== "/zod/mcp") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    const body = req.method === "POST" ? await readJson(req) : undefined;
    record(req, body);
    await (path === "/mcp" ? stateful(req, res, body) : stateless(req, res, body, path === "/zod/mcp"));
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
https.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: https.address().port })));
