import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { compileAgent, forkFrom, listCheckpoints, openPersistence, replayFrom } from "../../src/index.js";
import { travelToolkit } from "../../examples/travel/index.js";

it("replays and forks a finished run", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-"));
  const persistence = openPersistence(path.join(dir, "candor.db"));
  try {
    const app = compileAgent({ toolkits: [travelToolkit()] }, persistence);
    const request = {
      userIntent: "Plan a 3-day trip from Madrid to Paris for 2 people",
      userContext: { userId: "test" },
    };
    await app.invoke({ request }, { configurable: { thread_id: "t1" } });

    const checkpoints = await listCheckpoints(app, "t1"); // newest first
    expect(checkpoints[0]).toMatchObject({ status: "completed", next: [] });
    const planned = checkpoints.find((c) => c.step === 1 && c.next.includes("execute"))!; // right after planning

    const replayed = await replayFrom(app, "t1", planned.id); // the steps really run again
    expect(replayed.status).toBe("completed");

    // A what-if on the request forks from before planning, so the plan is made again for it.
    const start = checkpoints.find((c) => c.next.includes("understand"))!;
    const toRome = { ...request, userIntent: "Plan a 3-day trip from Madrid to Rome for 2 people" };
    const { values, checkpointId } = await forkFrom(app, "t1", start.id, { request: toRome });
    expect(values.answer).toContain("Rome");
    expect((await listCheckpoints(app, "t1")).find((c) => c.id === checkpointId)?.parent).toBe(start.id);
  } finally {
    persistence.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
