// An ACP client nobody here wrote: the TypeScript @agentclientprotocol/sdk's client side,
// driving the real `bingo --acp` through a scenario and printing what it saw as one JSON
// document. Run by tests/e2e/test_acp_typescript_client.py:
//
//   node acp_client.mjs <sdk entry file> <scenario.json>
//
// The scenario: {bingo, cwd, fs: {path: text} | null, answers: [option kind | "cancelled"],
// steps: [{do: "new", mcpServers?} | {do: "load", session} | {do: "prompt", text}
//         | {do: "cancel_after_progress", text}]}. Sessions are numbered in the order made.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkEntry, scenarioFile] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkEntry).href);
const scenario = JSON.parse(readFileSync(scenarioFile, "utf8"));

const seen = { init: null, sessions: [], stops: [], errors: [], updates: [], asked: [], files: scenario.fs };
let progressed = null;

const child = spawn(scenario.bingo, ["--acp"], { cwd: scenario.cwd, env: process.env, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const app = acp
  .client({ name: "bingo-tests" })
  .onRequest("session/request_permission", async ({ params }) => {
    seen.asked.push(params);
    const kind = scenario.answers.shift() ?? "cancelled";
    const option = params.options.find((o) => o.kind === kind);
    return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => {
    if (!(params.path in seen.files)) throw new acp.RequestError(-32002, `no such file ${params.path}`);
    return { content: seen.files[params.path] };
  })
  .onRequest("fs/write_text_file", async ({ params }) => {
    seen.files[params.path] = params.content;
    return {};
  })
  .onNotification("session/update", async ({ params }) => {
    seen.updates.push(params);
    const update = params.update;
    if (update.sessionUpdate === "tool_call_update" && update.content && !update.status && progressed) progressed();
  });

const fs = scenario.fs ? { readTextFile: true, writeTextFile: true } : {};
await app.connectWith(stream, async (ctx) => {
  seen.init = await ctx.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs } });
  for (const step of scenario.steps) {
    const session = seen.sessions[seen.sessions.length - 1];
    try {
      if (step.do === "new") {
        seen.sessions.push((await ctx.request("session/new", { cwd: scenario.cwd, mcpServers: step.mcpServers ?? [] })).sessionId);
      } else if (step.do === "load") {
        await ctx.request("session/load", { sessionId: step.session, cwd: scenario.cwd, mcpServers: [] });
        seen.sessions.push(step.session);
        seen.updates.push({ loaded: step.session });
      } else if (step.do === "prompt") {
        seen.stops.push((await ctx.request("session/prompt", { sessionId: session, prompt: [{ type: "text", text: step.text }] })).stopReason);
      } else if (step.do === "cancel_after_progress") {
        const live = new Promise((resolve) => { progressed = resolve; });
        const answer = ctx.request("session/prompt", { sessionId: session, prompt: [{ type: "text", text: step.text }] });
        await live;
        await ctx.notify("session/cancel", { sessionId: session });
        seen.stops.push((await answer).stopReason);
      }
    } catch (error) {
      seen.errors.push(String(error?.message ?? error));
    }
  }
});
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
process.stdout.write(JSON.stringify(seen) + "\n");
