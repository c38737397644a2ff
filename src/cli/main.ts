import path from "node:path";
import { setMaxListeners } from "node:events";
import v8 from "node:v8";
import type { CandorEnv } from "../env.js";
import { lineReader } from "./io.js";
import { runCli } from "./program.js";

// LangGraph adds abort listeners to a run's signal for every parallel subgraph task; past ten parallel steps
// Node would warn about a leak that is not one. An app-level setting, so it lives here and not in the library.
setMaxListeners(64);

// A command is one short process that allocates in bursts (the travel toolkit parses its 12 MB gazetteer on the
// first place name it reads): V8 would grow the young generation for such a burst to tens of MB that stay
// resident, and collect no faster. Kept at its initial size, a simple offline run peaked at 166 MiB, not 196, for
// the same CPU time. Set before anything allocates much; V8 reads it whenever it resizes that space.
v8.setFlagsFromString("--semi-space-growth-factor=1");

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

// A person at a terminal (stdin to type, stderr to read the prompt) is asked inline when a run waits for a
// decision; anything else (a pipe, a script, CI) gets the exit-3 behaviour, and so does `--no-input`.
const reader =
  process.stdin.isTTY && process.stderr.isTTY ? lineReader(process.stdin, process.stderr, interrupt.signal) : null;

let env: CandorEnv | undefined;
try {
  process.exitCode = await runCli(
    process.argv.slice(2),
    {
      out: (text) => void process.stdout.write(`${text}\n`),
      outPart: (text) => void process.stdout.write(text),
      err: (text) => void process.stderr.write(`${text}\n`),
      invokedAs,
      signal: interrupt.signal,
      atExit: (fn) => {
        process.once("exit", fn);
        return () => void process.off("exit", fn);
      },
      ...(reader ? { ask: (prompt: string) => reader.ask(prompt) } : {}),
    },
    // .env (see .env.example) fills in what the shell did not set. Read only when a command runs, and imported
    // then: the environment's schema is zod, which --help does without.
    async () => {
      const { loadDotEnv, readEnv } = await import("../env.js");
      loadDotEnv();
      return (env = readEnv());
    },
  );
} finally {
  // An open reader would keep stdin, and so the process, alive after the command is done.
  reader?.close();
  // Traces of the run are posted in the background: sent before the process ends, or said to be incomplete. No
  // command ran without reading the environment, so without it there is nothing to send.
  const unsent = env === undefined ? null : await (await import("./tracing.js")).flushTraces(env);
  if (unsent) {
    // The LangSmith client keeps retrying an endpoint it cannot reach for minutes: the command is done, so exit.
    process.stderr.write(`${unsent}.\n`);
    process.exit(process.exitCode ?? 0);
  }
}
