/**
 * A separate process for the model-driven crash test: `node --import tsx test/graph/child-agent-effects.ts <db>
 * <thread>`. A writer's model asks to publish a note; the child approves the call and prints `CALLING
 * publish_note` when the call starts; the call then hangs, so the parent can SIGKILL this process mid-call.
 */
import { Command } from "@langchain/langgraph";
import { compileAgent } from "../../graphs/agent.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import type { Toolkit } from "../../src/tools/types.js";
import { threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner, PUBLISH_STEP } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

const [dbPath, threadId] = process.argv.slice(2);
if (!dbPath || !threadId) {
  console.error("usage: child-agent-effects.ts <db> <thread>");
  process.exit(2);
}

const kit = notesToolkit();
const hanging: Toolkit = {
  ...kit,
  tools: kit.tools.map((t) =>
    t.name === "publish_note"
      ? {
          ...t,
          run: async () => {
            console.log("CALLING publish_note");
            await new Promise((resolve) => setTimeout(resolve, 60_000));
            throw new Error("the parent should have killed this process");
          },
        }
      : t,
  ),
};
const model = new ScriptedChatModel([{ calls: [["publish_note", { title: "Readme" }]] }]);
const persistence = openPersistence(dbPath);
const graph = compileAgent(
  {
    toolkits: [hanging],
    reasoner: new PlannedReasoner([PUBLISH_STEP], model),
    ledger: openEffectLedger(persistence.store.db),
  },
  persistence,
);
const config = threadConfig(threadId);
await graph.invoke(tripInput("publish the readme note"), config);
console.log("WAITING");
await graph.invoke(new Command({ resume: { decision: "approve", by: "child" } }), config);
console.log("FINISHED");
