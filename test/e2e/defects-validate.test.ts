import { describe, expect, it } from "vitest";
import { perTest, runCli, STACK_LINE } from "./helpers.js";

const TRIP = "Plan a 3-day trip from Paris to Rome for 1 person";
const LONG = 120_000;

const { freshDb } = perTest();

type History = { checkpoints: { checkpointId: string; step: number; next: string[] }[] };
const historyOf = async (thread: string, db: string) =>
  JSON.parse((await runCli(["history", thread, "--json", "--db", db])).stdout) as History;

describe("resume --adjust from the CLI (issue 8 defect 6)", () => {
  // Regression: nights -5 was accepted, failed at run time and was "repaired" into a 1-night stay, exit 0.
  it(
    "refuses an adjustment the tool would refuse, with the reason, and the thread keeps waiting; a valid one runs with a matching description",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "adj", "--approval-threshold", "0.99"])).code).toBe(3);
      const bad = await runCli([
        "resume",
        "adj",
        "--db",
        db,
        "--adjust",
        '[{"taskId":"hotel","field":"params.nights","newValue":-5}]',
      ]);
      expect(bad.code, bad.stderr).toBe(3);
      expect(bad.stderr).toMatch(
        /The decision was not applied: The adjusted step hotel is not valid: search_hotels would refuse these parameters \(nights: Too small/,
      );
      expect(bad.stderr).not.toMatch(/✓ hotel/);
      const waiting = JSON.parse((await runCli(["threads", "--json", "--db", db])).stdout) as {
        threads: { threadId: string; waitingFor: { kind: string } | null }[];
      };
      expect(waiting.threads.find((t) => t.threadId === "adj")?.waitingFor?.kind).toBe("plan_approval");

      const good = await runCli([
        "resume",
        "adj",
        "--db",
        db,
        "--adjust",
        '[{"taskId":"hotel","field":"params.nights","newValue":3}]',
        "--json",
      ]);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stderr).toMatch(/✓ hotel +Find a hotel in Rome for 3 night\(s\)/);
      expect(good.stdout).not.toContain("for 2 night(s)");
    },
  );
});

describe("fork --set from the CLI (issue 8 defect 7)", () => {
  // Regression: unknown paths were accepted with no effect, and a new request after planning ran the old plan
  // while the report showed the new request.
  it(
    "refuses unknown paths and bad step params in plain words (exit 2, nothing written); a new request after planning is planned again",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "fk"])).code).toBe(0);
      const history = await historyOf("fk", db);
      const planned = history.checkpoints.find((c) => c.step === 1 && c.next.includes("execute"))!;

      for (const [set, error] of [
        ["nosuch.path=1", /--set refused, nothing was changed: nosuch: the state has no such field/],
        ["__proto__.polluted=1", /"__proto__" reaches an object's prototype, never a field/],
        [
          "plan.steps.1.params.nights=-3",
          /--set refused, nothing was changed: plan\.steps\.1 \(hotel\): search_hotels would refuse these parameters \(nights: Too small/,
        ],
      ] as const) {
        const r = await runCli(["fork", "fk", "--from", planned.checkpointId, "--set", set, "--db", db]);
        expect(r.code, `${set}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(error);
        expect(r.stderr).not.toMatch(/\[\{"|"code":/);
        expect(r.stderr).not.toMatch(STACK_LINE);
      }
      expect((await historyOf("fk", db)).checkpoints.length).toBe(history.checkpoints.length);

      const lisbon = "Plan a 3-day trip from Paris to Lisbon for 1 person";
      const fork = await runCli([
        "fork",
        "fk",
        "--from",
        planned.checkpointId,
        "--set",
        `request.userIntent=${lisbon}`,
        "--json",
        "--db",
        db,
      ]);
      expect(fork.code, fork.stderr).toBe(0);
      expect(fork.stderr).toMatch(
        /note: +the plan at checkpoint \S+ was made for the old request, so the fork starts from checkpoint \S+, before planning, and plans again for the new request/,
      );
      expect(fork.stderr).toContain(`request:   ${lisbon}`);
      const out = JSON.parse(fork.stdout) as { status: string; answer: string; report: { request: string } };
      expect(out.status).toBe("completed");
      // The plan that ran is the new request's: the answer and the report agree on Lisbon.
      expect(out.answer).toContain("Lisbon");
      expect(out.answer).not.toContain("Rome");
      expect(JSON.stringify(out.report)).not.toContain("Rome");
    },
  );
});

describe("report --json (issue 8 defects 9 and 11)", () => {
  // Regression: confidence reasons were only in run --json and the logs, although the README sent readers to
  // report --json; and with --json a usage error printed nothing on stdout.
  it(
    "carries the plan's confidence reasons, and an unknown thread is one JSON error on stdout",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const run = await runCli(["run", "10 days in Rome from Madrid", "--db", db, "--thread", "why", "--json"]);
      const planned = JSON.parse(run.stdout) as { plan: { confidenceReasons: string[] } };
      expect(planned.plan.confidenceReasons.length).toBeGreaterThan(0);
      const report = await runCli(["report", "why", "--json", "--db", db]);
      expect(report.code, report.stderr).toBe(0);
      expect(
        (JSON.parse(report.stdout) as { report: { confidenceReasons: string[] } }).report.confidenceReasons,
      ).toEqual(planned.plan.confidenceReasons);

      const unknown = await runCli(["report", "nope", "--json", "--db", db]);
      expect(unknown.code).toBe(2);
      expect(JSON.parse(unknown.stdout)).toEqual({
        error: { code: "UNKNOWN_THREAD", message: expect.stringContaining('There is no thread "nope"') },
      });
      expect(unknown.stderr).toContain('There is no thread "nope"');
    },
  );
});
