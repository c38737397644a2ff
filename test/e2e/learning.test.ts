import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { giveFeedback } from "../../src/reflection/feedback.js";
import { startAgent, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";
import { runCli, perTest, STACK_LINE } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const LONG = 120_000;
const { freshDb } = perTest();

describe("candor feedback (issue 12 item 1)", () => {
  it(
    "rejects a finished run with a reason, says it reflects at once, and refuses an unknown thread",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "t1", "--user", "ana"])).code).toBe(0);
      const rejected = await runCli(["feedback", "t1", "--reject", "the hotel was shabby", "--db", db]);
      expect(rejected.code).toBe(0);
      expect(rejected.stdout).toContain("Recorded: you rejected run t1. Reflecting on it now…");
      expect(rejected.stdout).toMatch(/Reflection refl-\w+ \(rules, quality [\d.]+/);
      expect(rejected.stdout).toMatch(
        /Adjustment adj-\w+ is proposed: search_hotels priority 'recommended' → 'quality'/,
      );
      const unknown = await runCli(["feedback", "nope", "--accept", "--db", db]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/There is no thread "nope"/);
      expect(unknown.stderr).not.toMatch(STACK_LINE);
      const both = await runCli(["feedback", "t1", "--db", db]);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/exactly one of --accept or --reject/);
    },
  );
});

describe("candor memory and metrics (issue 12 items 5, 10)", () => {
  it(
    "lists what was learned with ids and sources; a run announces what it applies; revoke withdraws it",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      // Three rejections for the same reason, given through the library on the same database.
      const a = startAgent({ dbPath: db });
      const deps = { store: a.persistence.store, registry: travelRegistry() };
      for (const [i, to] of ["Paris", "Rome", "London"].entries()) {
        await a.graph.invoke(
          tripInput(`Plan a 3-day trip from Madrid to ${to} for 2 people`, {}, "ana"),
          threadConfig(`s${i}`),
        );
        await giveFeedback(
          a.graph,
          `s${i}`,
          { verdict: "rejected", reason: "a really shabby hotel", comment: null },
          deps,
        );
      }
      a.close();
      const listed = await runCli(["memory", "--user", "ana", "--json", "--db", db]);
      expect(listed.code).toBe(0);
      const view = JSON.parse(listed.stdout) as {
        adjustments: { id: string; status: string; reflectionId: string }[];
        patterns: { key: string; occurrences: number; validity: number; valid: boolean }[];
        reflections: { id: string; scores: { quality: number } }[];
        episodes: unknown[];
      };
      expect(view.episodes).toHaveLength(3);
      expect(view.reflections).toHaveLength(3);
      const active = view.adjustments.filter((x) => x.status === "active");
      expect(active).toHaveLength(2);
      expect(view.reflections.map((r) => r.id)).toContain(active[0]!.reflectionId);
      expect(view.patterns).toContainEqual(
        expect.objectContaining({
          key: "rejected:search_hotels.priority=quality",
          occurrences: 3,
          validity: 1,
          valid: true,
        }),
      );

      const fourth = await runCli([
        "run",
        "Plan a 3-day trip from Madrid to Lisbon for 2 people",
        "--user",
        "ana",
        "--db",
        db,
      ]);
      expect(fourth.code).toBe(0);
      expect(fourth.stderr).toContain(`Applied from reflection ${active[0]!.reflectionId}`);

      const figures = await runCli(["metrics", "--user", "ana", "--json", "--db", db]);
      expect(figures.code).toBe(0);
      expect(JSON.parse(figures.stdout)).toMatchObject({
        scope: { users: ["ana"] },
        reflection: { reflections: 3, rejected: 0 },
        adjustments: { applied: 2 },
        planning: { plansCreated: 4 },
      });

      const revoked = await runCli(["memory", "revoke", active[0]!.id, "--user", "ana", "--db", db]);
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toMatch(
        new RegExp(`^Revoked ${active[0]!.id}: later runs of user ana no longer apply it`),
      );
      const text = await runCli(["memory", "--user", "ana", "--db", db]);
      expect(text.stdout).toMatch(new RegExp(`${active[0]!.id}\\s+revoked`));
      const again = await runCli(["memory", "revoke", active[0]!.id, "--user", "ana", "--db", db]);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/already revoked/);
    },
  );
});

describe("the docs toolkit from the command line (issue 12 item 9)", () => {
  it(
    "CANDOR_DOCS makes search_docs a researcher's step; the answer cites the files it used",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const docs = path.join(path.dirname(db), "docs");
      mkdirSync(docs);
      writeFileSync(path.join(docs, "beginners.md"), "# Ski resorts for beginners\n\nGentle slopes and ski lessons.\n");
      writeFileSync(path.join(docs, "experts.md"), "# Advanced\n\nOff-piste for experts.\n");
      const r = await runCli(["run", "search the docs for ski resorts for beginners", "--db", db], {
        CANDOR_DOCS: docs,
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/relevant passage\(s\) for "ski resorts for beginners".*Sources: beginners\.md\./);
      expect(r.stderr).toContain("[researcher]");
    },
  );

  it(
    "--docs <dir> does what CANDOR_DOCS does; a folder that is not there is refused before anything runs",
    { timeout: LONG },
    async () => {
      // Regression: the docs tool's own error told users to "Set --docs", a flag that did not exist.
      const db = freshDb();
      const docs = path.join(path.dirname(db), "manuals");
      mkdirSync(docs);
      writeFileSync(path.join(docs, "beginners.md"), "# Ski resorts for beginners\n\nGentle slopes and ski lessons.\n");
      const r = await runCli(["run", "search the docs for ski resorts for beginners", "--db", db, "--docs", docs]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Sources: beginners\.md\./);
      const missing = await runCli(["run", "search the docs for ski", "--db", freshDb(), "--docs", `${docs}-nope`]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--docs .*is not a folder/);
      expect(missing.stderr).not.toMatch(/\n\s+at /);
    },
  );
});
