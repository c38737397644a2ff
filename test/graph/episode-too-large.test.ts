import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { EASY_TRIP, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("an episode the store refuses for its size", () => {
  it("leaves the run as it ended and says that nothing of it was kept for next time", async () => {
    const persistence = openPersistence(path.join(tmp.dir, "small-values.db"), {
      bounds: { maxStoredValueBytes: 1024 },
    });
    const graph = compileAgent({ toolkits: [travelToolkit()], reasoner: new RulesReasoner() }, persistence);
    try {
      const done = (await graph.invoke(
        tripInput(EASY_TRIP, {}, "ana"),
        threadConfig("big-episode"),
      )) as AgentStateValue;
      expect(done.status).toBe("completed");
      expect(done.reflection?.lessons.at(-1)).toMatch(
        /^This run was not remembered for next time: The value for .* is [\d,]+ bytes, over the 1,024 bytes a stored value may have \(maxStoredValueBytes/,
      );
      expect(await persistence.store.search(["ana", "episodes"])).toEqual([]);
    } finally {
      persistence.close();
    }
  });
});
