/**
 * A separate process for the effect-ledger crash test: `node --import tsx test/graph/child-effects.ts <db> <thread>`.
 * Runs the booking request to the tool approval, approves it, and prints `CALLING book_trip` when the booking
 * starts; the booking then hangs, so the parent can SIGKILL this process in the middle of the call.
 */
import { Command } from "@langchain/langgraph";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { Toolkit } from "../../src/tools/types.js";
import { openTestDatabase, threadConfig, tripInput } from "../fakes/graph-harness.js";

const [dbPath, threadId] = process.argv.slice(2);
if (!dbPath || !threadId) {
  console.error("usage: child-effects.ts <db> <thread>");
  process.exit(2);
}

const kit = travelToolkit({ latencyMs: 5 });
const hanging: Toolkit = {
  ...kit,
  tools: kit.tools.map((t) =>
    t.name === "book_trip"
      ? {
          ...t,
          run: async () => {
            console.log("CALLING book_trip");
            await new Promise((resolve) => setTimeout(resolve, 60_000));
            throw new Error("the parent should have killed this process");
          },
        }
      : t,
  ),
};
const persistence = openTestDatabase(dbPath);
const graph = compileAgent({ toolkits: [hanging], ledger: persistence.ledger }, persistence);
const config = threadConfig(threadId);
await graph.invoke(tripInput("Plan a 3-day trip from Madrid to Paris for 2 people and book it"), config);
console.log("WAITING");
await graph.invoke(new Command({ resume: { decision: "approve", by: "child" } }), config);
console.log("FINISHED");
