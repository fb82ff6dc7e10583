// An agent's session with `git apex mcp`, through the official MCP
// TypeScript SDK; mcptools' TestTypeScriptClient runs it. It offers the
// repository as a root (the server starts outside it), checks the tools'
// schemas and annotations, then for each mode in APEX_MODES starts an
// environment, edits a tracked file and commits through exec, reads the
// changes, and finishes. It prints one JSON line per environment for the
// test to check against the repository; any failure exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";

const { APEX_BIN, APEX_REPO, APEX_MODES, APEX_CWD } = process.env;

function check(ok, what) {
  if (!ok) {
    throw new Error(what);
  }
}

const client = new Client({ name: "ts-agent", version: "1" }, { capabilities: { roots: { listChanged: false } } });
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: pathToFileURL(APEX_REPO).href, name: "the repository" }],
}));
const transport = new StdioClientTransport({ command: APEX_BIN, args: ["mcp"], cwd: APEX_CWD, env: process.env, stderr: "inherit" });
await client.connect(transport);

// The schemas an MCP Inspector builds its forms from.
const { tools } = await client.listTools(undefined, { timeout: 600_000 });
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
const command = byName.exec.inputSchema.properties.command;
check(command.type === "array" && command.items.type === "string", `exec.command: ${JSON.stringify(command)}`);
check(JSON.stringify(byName.start.inputSchema.properties.isolation.enum) === '["full","worktree","shared"]', "start.isolation has no enum");
check(byName.list.inputSchema.properties.status.enum.includes("live"), "list.status has no enum");
check(byName.list.annotations?.readOnlyHint === true, "list is not read-only");
check(byName.remove.annotations?.destructiveHint === true, "remove is not destructive");
check(byName.start.annotations?.destructiveHint === false, "start is destructive");

async function call(name, args) {
  // A full start or exec on a busy machine can take longer than the SDK's
  // default of 60 s a request.
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  check(!res.isError, `${name} ${JSON.stringify(args)}: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

for (const mode of APEX_MODES.split(",")) {
  const identity = `feature-ts-${mode}`;
  const env = await call("start", { identity, isolation: mode, story: "an agent on the TypeScript SDK" });
  check(env.mode === mode, `start in ${mode}: got ${env.mode}`);
  const run = await call("exec", {
    identity,
    command: ["sh", "-c", "echo 'edited by the agent' >> README.md && git commit -qam 'edit README through mcp' && git log -1 --format=%s"],
  });
  check(run.exit_code === 0, `exec in ${mode}: ${JSON.stringify(run)}`);
  const linked = await call("link", { alias: `issue-ts-${mode}`, identity });
  check(linked.identity === identity, `link in ${mode}: ${JSON.stringify(linked)}`);
  const listed = await call("list", { status: "live" });
  check(listed.envs.some((e) => e.identity === identity), `list in ${mode}: ${JSON.stringify(listed)}`);
  const changes = await call("changes", { identity });
  check(changes.diffstat.includes("README.md"), `changes in ${mode}: ${JSON.stringify(changes)}`);
  const end = await call("finish", { identity });
  console.log(JSON.stringify({ mode, branch: env.branch, exec: run, changes, outcome: end.outcome }));
}
// Every answer so far was checked against its tool's output schema by the
// SDK; the log's too.
const { events } = await call("log", {});
check(events.length > 0, "an empty log");
await client.close();
