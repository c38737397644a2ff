/**
 * A `candor` command in a process of its own that starts on a signal (test/pg/race.test.ts):
 * `node --import tsx test/pg/child-cli.ts <args…>` loads the CLI, prints READY, waits for a line on stdin (the
 * parent sends it to every child at once), runs the command in-process and prints one JSON line
 * `{pid, code, stdout, stderr}`.
 */
import { createInterface } from "node:readline";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";

const args = process.argv.slice(2);
const lines = createInterface({ input: process.stdin });
console.log("READY");
await new Promise<void>((resolve) => lines.once("line", () => resolve()));
lines.close();
const out: string[] = [];
const err: string[] = [];
const code = await runCli(
  args,
  { out: (t) => void out.push(t), err: (t) => void err.push(t), invokedAs: "candor" },
  () => readEnv(),
);
console.log(JSON.stringify({ pid: process.pid, code, stdout: out.join("\n"), stderr: err.join("\n") }));
