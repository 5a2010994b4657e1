// echo-node: a bingo test plugin in Node.js (>= 18, standard library only), proving the wire
// is language-neutral. One of each kind but providers and compactors:
//   tool `echo`          answers input.text, after a tool/progress line; with input.wait,
//                        holds the answer until tool/cancel, then answers isError "cancelled"
//   command `shout`      upper-cases its args; completes from a fixed word list
//   contributor `clock`  one piece naming the turn, the prompt and the budget it was told;
//                        for a prompt starting "flood", five times its budget in characters
//   hook `guard`         on tool.before: denies any call whose input contains "forbidden"
//   service `echo.svc`   `reverse {text}` -> {text: reversed}; `env` -> what it was started with
"use strict";
const readline = require("readline");

const WORDS = ["hello", "help", "world"];
const waiting = new Map(); // callId -> request id of a tool/call held until tool/cancel

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}
const answer = (id, result) => send({ id, result });
const fail = (id, code, message) => send({ id, error: { code, message } });
const text = (t, isError) => ({
  output: { parts: [{ type: "text", text: t }], ...(isError ? { isError } : {}) },
});

const handshake = () => ({
  protocol: 5,
  name: "echo-node",
  version: "0.1.0",
  tools: [{
    name: "echo",
    description: "Answers the text it is given.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" }, wait: { type: "boolean" } },
      required: ["text"],
    },
    traits: { trusted: true, readOnly: true }, // claimed, and never believed by the host
  }],
  commands: [{
    name: "shout", hint: "say it louder", args: { kind: "free", hint: "<words>" }, instant: true, family: "plugin",
  }],
  contributors: [{ name: "clock", description: "says which turn it is" }],
  hooks: [{ name: "guard", site: "tool", points: ["before"] }],
  services: [{ key: "echo.svc", methods: ["reverse", "env"], description: "string tricks" }],
});

function toolCall(id, params) {
  if (params.name !== "echo") return fail(id, -32602, "no tool named " + params.name);
  send({ method: "tool/progress", params: { callId: params.callId, tail: "echoing" } });
  if (params.input.wait) return waiting.set(params.callId, id);
  answer(id, text(String(params.input.text)));
}

function serviceCall(id, params) {
  if (params.key !== "echo.svc") return fail(id, -32601, "no service " + params.key);
  if (params.method === "reverse") {
    return answer(id, { result: { text: [...String(params.params.text)].reverse().join("") } });
  }
  if (params.method === "env") {
    const env = { root: process.env.ECHO_NODE_ROOT, hasPath: Boolean(process.env.PATH) };
    return answer(id, { result: env });
  }
  fail(id, -32601, "echo.svc has no method " + params.method);
}

function request(id, method, params) {
  switch (method) {
    case "initialize":
      return answer(id, handshake());
    case "tool/call":
      return toolCall(id, params);
    case "command/run":
      return answer(id, { outcome: { kind: "text", text: params.args.toUpperCase() } });
    case "command/complete":
      return answer(id, {
        completions: WORDS.filter((w) => w.startsWith(params.partial)).map((value) => ({ value })),
      });
    case "context/contribute":
    {
      const { turn, prompt, budget } = params.query;
      const said = `clock: turn ${turn}, prompt ${JSON.stringify(prompt)}` + (budget === undefined ? "" : `, budget ${budget}`);
      const flood = prompt.startsWith("flood") ? " " + "x".repeat(budget * 5) : "";
      return answer(id, { pieces: [{ title: "clock", text: said + flood }] });
    }
    case "hook/decide":
      if (JSON.stringify(params.payload.input || null).includes("forbidden")) {
        return answer(id, { outcome: "deny", value: "echo-node's guard refuses anything forbidden" });
      }
      return answer(id, { outcome: "continue" });
    case "service/call":
      return serviceCall(id, params);
    default:
      return fail(id, -32601, "no method " + method);
  }
}

function notification(method, params) {
  if (method === "tool/cancel" && waiting.has(params.callId)) {
    const id = waiting.get(params.callId);
    waiting.delete(params.callId);
    answer(id, text("cancelled", true));
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return fail(null, -32700, "not JSON");
  }
  if (message.method === undefined) return; // a response: this plugin asks nothing
  if (message.id === undefined) return notification(message.method, message.params || {});
  try {
    request(message.id, message.method, message.params || {});
  } catch (err) {
    console.error("echo-node: " + (err && err.stack));
    fail(message.id, -32603, String(err));
  }
});
lines.on("close", () => process.exit(0));
