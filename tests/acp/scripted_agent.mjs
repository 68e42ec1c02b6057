// A SCRIPTED TEST AGENT (not a real agent): written with the official ACP SDK's agent()
// app (AgentSideConnection's successor in @agentclientprotocol/sdk 2.x). Each prompt's text
// is a JSON array of operations it performs against its client (`toolhost acp`), in order:
//   {"op": "read", "path", "line"?, "limit"?}      fs/read_text_file
//   {"op": "write", "path", "content"}             fs/write_text_file
//   {"op": "write_big", "path", "bytes"}           fs/write_text_file with `bytes` x "a"
//   {"op": "terminal", "command", "args"?, "cwd"?, "env"?, "outputByteLimit"?, "kill"?}
//        terminal/create, then wait_for_exit (or kill), output, release
//   {"op": "request", "method", "params"}          any client request (sessionId added)
//   {"op": "raw", "line"}                          a raw line on stdout (malformed input)
//   {"op": "exit", "code"}                         die at once, mid-prompt
//   {"op": "time_reads", "path", "count"}          that many reads, each timed (bench/)
//   {"op": "mcp", "calls": [{"tool", "arguments"}]} start the MCP server named "toolhost" of
//        session/new's mcpServers (as an agent would) and call these tools over MCP stdio
// The results go back as one agent_message_chunk whose text is JSON:
//   {"results": [{"ok": <result>} | {"error": {code, message, data}}], "clientCapabilities",
//    "mcpServers"}
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { agent, ndJsonStream } from "@agentclientprotocol/sdk";

let clientCapabilities = null;
const sessions = new Map();
let counter = 0;

function failure(error) {
  return { error: { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null } };
}

async function perform(client, sessionId, op) {
  const base = { sessionId };
  switch (op.op) {
    case "read": {
      const params = { ...base, path: op.path };
      if (op.line !== undefined) params.line = op.line;
      if (op.limit !== undefined) params.limit = op.limit;
      return await client.request("fs/read_text_file", params);
    }
    case "write":
      return (await client.request("fs/write_text_file", { ...base, path: op.path, content: op.content })) ?? {};
    case "write_big":
      return (await client.request("fs/write_text_file", { ...base, path: op.path, content: "a".repeat(op.bytes) })) ?? {};
    case "terminal": {
      const create = { ...base, command: op.command };
      for (const key of ["args", "cwd", "env", "outputByteLimit"]) if (op[key] !== undefined) create[key] = op[key];
      const { terminalId } = await client.request("terminal/create", create);
      const ids = { ...base, terminalId };
      let exit = null;
      if (op.kill) {
        await client.request("terminal/kill", ids);
      }
      exit = await client.request("terminal/wait_for_exit", ids);
      const output = await client.request("terminal/output", ids);
      await client.request("terminal/release", ids);
      return { terminalId, exit, output };
    }
    case "request":
      return (await client.request(op.method, { ...base, ...(op.params ?? {}) })) ?? {};
    case "raw":
      process.stdout.write(op.line + "\n");
      return {};
    case "mcp":
      return await mcpCalls(sessions.get(sessionId).mcpServers, op.calls);
    case "time_reads": {
      const times = [];
      for (let i = 0; i < op.count; i++) {
        const started = performance.now();
        await client.request("fs/read_text_file", { ...base, path: op.path });
        times.push(performance.now() - started);
      }
      return { times };
    }
    case "exit":
      process.exit(op.code ?? 3);
    default:
      throw new Error(`unknown op ${op.op}`);
  }
}

async function mcpCalls(servers, calls) {
  const server = servers.find((s) => s.name === "toolhost");
  if (!server) throw new Error("no toolhost MCP server in session/new");
  const env = { ...process.env };
  for (const { name, value } of server.env ?? []) env[name] = value;
  const child = spawn(server.command, server.args, { env, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const pending = new Map();
  lines.on("line", (line) => {
    const message = JSON.parse(line);
    if (message.id !== undefined && pending.has(message.id)) pending.get(message.id)(message);
  });
  let id = 0;
  const ask = (method, params) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  await ask("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "scripted-test-agent", version: "1.0.0" },
  });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const answers = [];
  for (const call of calls) {
    const answer = await ask("tools/call", { name: call.tool, arguments: call.arguments });
    answers.push(answer.result ?? { error: answer.error });
  }
  child.stdin.end();
  await new Promise((resolve) => child.on("exit", resolve));
  return answers;
}

const app = agent({ name: "scripted-test-agent" })
  .onRequest("initialize", ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? null;
    return {
      protocolVersion: 1,
      agentCapabilities: { loadSession: false },
      authMethods: [],
      _meta: { pid: process.pid },
    };
  })
  .onRequest("session/new", ({ params }) => {
    const sessionId = `scripted-${++counter}`;
    sessions.set(sessionId, params);
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
    const results = [];
    for (const op of JSON.parse(text)) {
      try {
        results.push({ ok: await perform(client, params.sessionId, op) });
      } catch (error) {
        results.push(failure(error));
      }
    }
    const report = { results, clientCapabilities, mcpServers: sessions.get(params.sessionId)?.mcpServers ?? null };
    await client.notify("session/update", {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: JSON.stringify(report) } },
    });
    return { stopReason: "end_turn" };
  })
  .onNotification("session/cancel", () => {});

app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
