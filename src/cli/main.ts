import path from "node:path";
import { setMaxListeners } from "node:events";
import { loadDotEnv, readEnv } from "../env.js";
import { runCli } from "./program.js";

// LangGraph adds abort listeners to a run's signal for every parallel subgraph task; past ten parallel steps
// Node would warn about a leak that is not one. An app-level setting, so it lives here and not in the library.
setMaxListeners(64);

// The first Ctrl-C stops the run at the next step boundary (its checkpoints stay); a second one exits at once.
const interrupt = new AbortController();
process.once("SIGINT", () => {
  interrupt.abort();
  process.once("SIGINT", () => process.exit(130));
});

// `candor logs | head` closes the pipe early: that is the reader being done, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const invokedAs = path.basename(process.argv[1] ?? "").startsWith("candor") ? "candor" : "npm start --";

process.exitCode = await runCli(
  process.argv.slice(2),
  {
    out: (text) => void process.stdout.write(`${text}\n`),
    err: (text) => void process.stderr.write(`${text}\n`),
    invokedAs,
    signal: interrupt.signal,
    atExit: (fn) => {
      process.once("exit", fn);
      return () => void process.off("exit", fn);
    },
  },
  // .env (see .env.example) fills in what the shell did not set.
  () => {
    loadDotEnv();
    return readEnv();
  },
);
