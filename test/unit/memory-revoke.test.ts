import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { readEnv } from "../../src/env.js";
import { runCli } from "../../src/cli/program.js";
import { loadLearnedConfig, saveLearnedConfig } from "../../src/memory/learning.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { mergeAdjustments } from "../../src/reflection/learn.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { revokeAdjustment } from "../../src/reflection/memory-view.js";
import { CandorError } from "../../src/errors.js";
import type { UserConfig } from "../../src/domain/reflection.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();

/** A config with one proposed adjustment, as a reflection would leave it. */
function oneAdjustment(text: string): UserConfig {
  return mergeAdjustments({ adjustments: [] }, [text], {
    reflectionId: "refl-1",
    patterns: [],
    knobs: knobsOf(registry),
    registry,
    at: new Date().toISOString(),
    simulated: false,
  }).config;
}

describe("memory revoke finds an adjustment by its id alone (issue 26 item 5)", () => {
  it("without a user, the adjustment's owner is found and only theirs is revoked", async () => {
    // Regression: revoke searched only --user's adjustments (default "default"), so an id alone was "not found".
    const store = new InMemoryStore();
    await saveLearnedConfig(store, "ana", oneAdjustment("Add constraint: search_flights.nonstop = true"));
    await saveLearnedConfig(store, "bo", oneAdjustment("Add constraint: search_hotels.minRating >= 8"));
    const bosId = (await loadLearnedConfig(store, "bo")).adjustments[0]!.id;

    const out = await revokeAdjustment(store, undefined, bosId);

    expect(out.userId).toBe("bo");
    expect(out.adjustment).toMatchObject({ id: bosId, status: "revoked" });
    expect((await loadLearnedConfig(store, "bo")).adjustments[0]!.status).toBe("revoked");
    expect((await loadLearnedConfig(store, "ana")).adjustments[0]!.status).toBe("proposed");
  });

  it("an id no user has is named as unknown, with how many users were searched", async () => {
    const store = new InMemoryStore();
    await saveLearnedConfig(store, "ana", oneAdjustment("Add constraint: search_flights.nonstop = true"));
    const err = await revokeAdjustment(store, undefined, "adj-00000000").catch((e: unknown) => e);
    expect(CandorError.hasCode(err, "INVALID_REQUEST")).toBe(true);
    expect(String((err as Error).message)).toMatch(
      /^There is no adjustment "adj-00000000" in this database \(searched the learned settings of 1 user\)/,
    );
    const empty = await revokeAdjustment(new InMemoryStore(), undefined, "adj-1").catch((e: unknown) => e);
    expect(String((empty as Error).message)).toMatch(/no user has learned settings yet/);
  });

  it("with --user, another user's id is not revoked and the message says how to find it", async () => {
    const store = new InMemoryStore();
    await saveLearnedConfig(store, "ana", oneAdjustment("Add constraint: search_flights.nonstop = true"));
    await saveLearnedConfig(store, "bo", oneAdjustment("Add constraint: search_hotels.minRating >= 8"));
    const anasId = (await loadLearnedConfig(store, "ana")).adjustments[0]!.id;
    const err = await revokeAdjustment(store, "bo", anasId).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/^User bo has no adjustment .*leave out --user to find the id/);
    expect((await loadLearnedConfig(store, "ana")).adjustments[0]!.status).toBe("proposed");
  });
});

describe("candor memory revoke <id> on a database", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), "candor-revoke-"));
  const db = path.join(scratch, "candor.db");
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io = { out: (t: string) => stdout.push(t), err: (t: string) => stderr.push(t), invokedAs: "candor" };
    const code = await runCli(args, io, () => readEnv({ CANDOR_DB: db }));
    return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
  }

  it("revokes and confirms without --user and says whose it was; an unknown id exits 2 saying so", async () => {
    const p = openPersistence(db);
    await saveLearnedConfig(p.store, "ana", oneAdjustment("Add constraint: search_flights.nonstop = true"));
    const id = (await loadLearnedConfig(p.store, "ana")).adjustments[0]!.id;
    p.close();

    const ok = await cli(["memory", "revoke", id]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^Revoked ${id}: later runs of user ana no longer apply it`));

    const p2 = openPersistence(db);
    await saveLearnedConfig(p2.store, "bo", oneAdjustment("Add constraint: search_hotels.minRating >= 8"));
    const bosId = (await loadLearnedConfig(p2.store, "bo")).adjustments[0]!.id;
    p2.close();
    const confirmed = await cli(["memory", "confirm", bosId]);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toMatch(
      new RegExp(`^Confirmed ${bosId}: later runs of user bo apply it \\(search_hotels minRating >= 8\\)`),
    );
    const twice = await cli(["memory", "confirm", bosId]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/is active, not proposed/);

    const unknown = await cli(["memory", "revoke", "adj-deadbeef"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/There is no adjustment "adj-deadbeef" in this database/);
  });
});
