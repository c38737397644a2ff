/**
 * A chaos worker process: works in its own sandbox and runs the scenario indices its parent sends, one at a
 * time, answering with each result (runner.ts, runChaos).
 */
import { createSandbox } from "./sandbox.js";
import { runScenario } from "./runner.js";
import type { Mode } from "./scenario.js";

const box = createSandbox();
process.chdir(box.workspace);
const send = (m: unknown) => process.send?.(m);

process.on("message", (m: { type: string; seed?: number; index?: number; mode?: Mode }) => {
  if (m.type === "stop") {
    box.cleanup();
    process.exit(0);
  }
  if (m.type !== "run" || m.seed === undefined || m.index === undefined) return;
  runScenario(m.seed, m.index, box, m.mode).then(
    (result) => send({ type: "result", result }),
    (e: unknown) => send({ type: "error", error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  );
});
// A parent that died (Ctrl-C, a crash) leaves nobody to report to.
process.on("disconnect", () => {
  box.cleanup();
  process.exit(0);
});
send({ type: "ready" });
