// The editor side of the ACP tests: the official ACP SDK's client() app (the successor of
// ClientSideConnection in @agentclientprotocol/sdk 2.x) spawns the command of the plan
// (`toolhost acp -- <agent>`), and writes one JSON line per event to stdout:
//   {"event": "initialize", "result"}   {"event": "session", "result"}
//   {"event": "permission", "params", "answer"}   answered from plan.permissions in order
//   {"event": "update", "params"}        every session/update
//   {"event": "request", "method", "params"}   any other request from the agent side
//   {"event": "prompt", "result"} | {"event": "prompt", "error"}
//   {"event": "done"}
// The plan (a JSON file, argv[2]): {command: [...], cwd, clientCapabilities?, mcpServers?,
// permissions?: ["allow_once" | "deny" | "cancel" | <optionId>], agentPermission?, prompts: [...]}
// `permissions` answer toolhost's own requests (toolCallId "toolhost-..."), in order (then
// "deny"); an agent's own permission requests are answered with `agentPermission`
// (default "allow_once").
// With `buffers: {path: text}` (and clientCapabilities.fs declared) the editor serves
// fs/read_text_file from those unsaved buffers, else from the disk, and fs/write_text_file
// into the buffer of an open file (else the disk); each is logged as {"event": "fs", ...}.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { RequestError, client, ndJsonStream } from "@agentclientprotocol/sdk";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const answers = [...(plan.permissions ?? [])];
const buffers = new Map(Object.entries(plan.buffers ?? {}));

const child = spawn(plan.command[0], plan.command.slice(1), {
  cwd: plan.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
child.on("exit", (code, signal) => emit({ event: "proxy-exit", code, signal }));

function failure(error) {
  return { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null };
}

const app = client({ name: "sdk-test-editor" })
  .onRequest("session/request_permission", ({ params }) => {
    const fromToolhost = String(params.toolCall?.toolCallId ?? "").startsWith("toolhost-");
    const wanted = fromToolhost
      ? answers.length
        ? answers.shift()
        : "deny"
      : (plan.agentPermission ?? "allow_once");
    let answer;
    if (wanted === "cancel") {
      answer = { outcome: { outcome: "cancelled" } };
    } else {
      const kinds = { allow_once: "allow_once", deny: "reject_once", allow_always: "allow_always" };
      const option =
        params.options.find((o) => o.optionId === wanted) ??
        params.options.find((o) => o.kind === kinds[wanted]);
      answer = { outcome: { outcome: "selected", optionId: option.optionId } };
    }
    emit({ event: "permission", params, answer, fromToolhost });
    return answer;
  })
  .onNotification("session/update", ({ params }) => emit({ event: "update", params }))
  .onRequest("fs/read_text_file", ({ params }) => {
    const open = buffers.has(params.path);
    emit({ event: "fs", method: "fs/read_text_file", path: params.path, buffer: open });
    if (open) return { content: buffers.get(params.path) };
    try {
      return { content: readFileSync(params.path, "utf8") };
    } catch {
      throw RequestError.resourceNotFound(params.path);
    }
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    const open = buffers.has(params.path);
    emit({ event: "fs", method: "fs/write_text_file", path: params.path, buffer: open, content: params.content });
    if (open) buffers.set(params.path, params.content);
    else writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("*", ({ method, params }) => {
    emit({ event: "request", method, params });
    throw RequestError.methodNotFound(method);
  });

const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: plan.clientCapabilities ?? {},
      clientInfo: { name: "sdk-test-editor", version: "1.0.0" },
    });
    emit({ event: "initialize", result: init });
    const session = await ctx.request("session/new", { cwd: plan.cwd, mcpServers: plan.mcpServers ?? [] });
    emit({ event: "session", result: session });
    for (const text of plan.prompts ?? []) {
      try {
        const result = await ctx.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text }],
        });
        emit({ event: "prompt", result });
      } catch (error) {
        emit({ event: "prompt", error: failure(error) });
      }
    }
  });
} catch (error) {
  emit({ event: "fatal", error: failure(error) });
}
emit({ event: "done" });
child.stdin.end();
await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", resolve)));
