/**
 * A separate process for the restart test: `node --import tsx test/graph/child-resume.ts <db> <thread> [start|resume]`.
 * `start` runs the travel agent on the SQLite file until it waits for plan approval; `resume` (the default) opens
 * the same file in a fresh process, approves, and runs to the end. Each prints one JSON line and exits.
 */
import { Command, isInterrupted } from "@langchain/langgraph";
import { EASY_TRIP, RESTART_USER, startAgent, threadConfig, tripInput } from "../fakes/graph-harness.js";

const [dbPath, threadId, mode = "resume"] = process.argv.slice(2);
if (!dbPath || !threadId || (mode !== "start" && mode !== "resume")) {
  console.error("usage: child-resume.ts <db> <thread> [start|resume]");
  process.exit(2);
}

const agent = startAgent({ dbPath });
try {
  const config = threadConfig(threadId);
  if (mode === "start") {
    const out = await agent.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.99 }, RESTART_USER), config);
    const kind = isInterrupted<{ kind: string }>(out) ? (out.__interrupt__[0]?.value?.kind ?? null) : null;
    console.log(JSON.stringify({ pid: process.pid, interrupted: kind, toolCalls: agent.calls.total() }));
  } else {
    const before = await agent.graph.getState(config);
    const waitingFor = before.tasks.flatMap((t) => t.interrupts.map((i) => (i.value as { kind: string }).kind));
    const out = await agent.graph.invoke(new Command({ resume: { decision: "approve", by: "child" } }), config);
    console.log(JSON.stringify({ pid: process.pid, waitingFor, status: out.status, toolCalls: agent.calls.all() }));
  }
} finally {
  agent.close();
}
