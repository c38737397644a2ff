import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main, posted } from "../../examples/embed/app.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { recentEpisodes } from "../../src/memory/episodes.js";

describe("examples/embed", () => {
  it("runs an app's own tools through a plan approval and a tool approval, and persists the thread and episode", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "candor-embed-test-")), "app.db");
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const status = await main(db);
    const printed = log.mock.calls.map((c) => String(c[0])).join("\n");
    log.mockRestore();
    expect(status).toBe("completed");
    expect(printed).toContain("Approval asked: Plan ");
    // The irreversible call waited inside the worker with its exact call and inputs, and ran once when approved.
    expect(printed).toContain(`Tool approval asked: post_to_team({}) on {"forecast":"Porto: sunny, 24 °C"}`);
    expect(posted).toEqual(["Porto: sunny, 24 °C"]);
    expect(printed).toContain("Porto: sunny");

    const reopened = openPersistence(db);
    try {
      const checkpoints = [];
      for await (const c of reopened.checkpointer.list({ configurable: { thread_id: "embed-1" } })) checkpoints.push(c);
      expect(checkpoints.length).toBeGreaterThan(3);
      const episodes = await recentEpisodes(reopened.store, "default");
      expect(episodes[0]?.status).toBe("completed");
    } finally {
      reopened.close();
    }
  });
});
