import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { runCli, spawnCli, STACK_LINE, perTest } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const LONG = 120_000;

const { freshDb } = perTest();

describe("candor run", () => {
  it(
    "plans and runs a fault-free trip: readable lines on stderr, answer and report on stdout, exit 0",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const r = await runCli(["run", TRIP, "--db", db, "--thread", "plain"]);
      expect(r.code, r.stderr).toBe(0);
      const [first = ""] = r.stderr.split("\n");
      expect(first).toContain("reasoner: rules");
      expect(first).toContain("thread plain");
      expect(r.stderr).toMatch(/^\d\d:\d\d:\d\d · +Plan plan-\w+: 5 step\(s\)/m);
      expect(r.stderr).toMatch(/^\d\d:\d\d:\d\d ✓ flight +Find flights Paris → Rome for 1 done in \d+ ms$/m);
      expect(r.stderr).toContain("Run completed");
      expect(r.stdout).toContain("Answer:");
      expect(r.stdout).toContain("Report for plan");
      expect(r.stdout).toContain("Status: completed");
    },
  );

  it("--json prints one JSON object with the run's facts", { timeout: LONG }, async () => {
    const db = freshDb();
    const r = await runCli(["run", TRIP, "--db", db, "--json", "--fault", "search_hotels=unavailable*1"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    for (const key of [
      "threadId",
      "status",
      "answer",
      "plan",
      "revisions",
      "confidence",
      "report",
      "waitingFor",
      "resumeCommands",
    ]) {
      expect(out, key).toHaveProperty(key);
    }
    expect(out.threadId).toMatch(/^run-[0-9a-f]{8}$/);
    expect(out.status).toBe("completed");
    expect(out.confidence).toBe(out.plan.confidence);
    expect(out.revisions.map((rev: { strategy: string }) => rev.strategy)).toEqual(["FIND_WORKAROUND"]);
    expect(out.waitingFor).toBeNull();
    expect(out.resumeCommands).toEqual([]);
    expect(out.report.summary.status).toBe("completed");
  });
});

describe("the demo (no arguments)", () => {
  it("announces the timeout and the three recoveries, then suggests what to try next", { timeout: LONG }, async () => {
    const db = freshDb();
    const r = await runCli([], { CANDOR_DB: db });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(db)).toBe(true);
    expect(r.stderr.split("\n")[0]).toContain("reasoner: rules");
    expect(r.stderr).toContain("search_flights timed out");
    for (const strategy of ["RETRY_DIFFERENT_AGENT", "FIND_WORKAROUND", "ADJUST_PARAMETERS"]) {
      expect(r.stderr).toMatch(new RegExp(`Recovery for \\w+: .*\\(${strategy}\\)`));
    }
    expect(r.stderr).toContain("Try next:");
    expect(r.stderr).toMatch(/history run-[0-9a-f]{8} --db /);
    expect(r.stdout).toContain("Status: completed");
  });
});

describe("human interrupts across processes", () => {
  it(
    "stops for plan approval (exit 3), refuses a decision that does not fit (exit 2), then resumes with --approve (exit 0)",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const waiting = await runCli(["run", TRIP, "--db", db, "--thread", "appr", "--approval-threshold", "0.99"]);
      expect(waiting.code, waiting.stderr).toBe(3);
      expect(waiting.stdout).toContain("Waiting for a human: approve the plan");
      expect(waiting.stdout).toMatch(/ 1\. flight +Find flights Paris → Rome for 1 \[flight_agent\]/);
      expect(waiting.stdout).toContain(`npm start -- resume appr --approve --db ${db}`);
      expect(waiting.stdout).toContain(`npm start -- resume appr --reject --db ${db}`);

      const wrong = await runCli(["resume", "appr", "--skip", "--db", db]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("--approve, --reject");
      expect(wrong.stderr).not.toMatch(STACK_LINE);

      const report = await runCli(["report", "appr", "--db", db]);
      expect(report.code).toBe(3);
      expect(report.stdout).toContain("has not finished (status awaiting_approval)");

      const approved = await runCli(["resume", "appr", "--approve", "--comment", "fine by me", "--db", db]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stderr).toContain("approved by a human");
      expect(approved.stdout).toContain("Status: completed");

      const again = await runCli(["resume", "appr", "--db", db]);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain("already finished with status completed");
      const late = await runCli(["resume", "appr", "--approve", "--db", db]);
      expect(late.code).toBe(2);
      expect(late.stderr).toContain("not waiting for a decision");
    },
  );

  it("--reject ends the run as rejected (exit 4) and the report says so", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await runCli(["run", TRIP, "--db", db, "--thread", "rej", "--approval-threshold", "0.99"])).code).toBe(3);
    const rejected = await runCli(["resume", "rej", "--reject", "--comment", "too pricey", "--db", db]);
    expect(rejected.code, rejected.stderr).toBe(4);
    expect(rejected.stdout).toContain("Status: rejected");
    const report = await runCli(["report", "rej", "--json", "--db", db]);
    expect(report.code).toBe(0);
    const json = JSON.parse(report.stdout);
    expect(json.status).toBe("rejected");
    expect(json.report.summary.status).toBe("rejected");
    expect(json.report.summary.failureReason).toContain("too pricey");
  });

  it(
    "escalates when the revision cap is hit (exit 3), and --abort ends it (exit 4) with the reason in the report",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const faults = [
        "--fault",
        "search_flights=timeout",
        "--fault",
        "search_flights_backup=timeout",
        "--max-revisions",
        "1",
      ];
      const esc = await runCli([
        "run",
        "Plan a 3-day trip from Madrid to Paris for 2 people",
        "--db",
        db,
        "--thread",
        "esc",
        ...faults,
      ]);
      expect(esc.code, esc.stderr).toBe(3);
      expect(esc.stdout).toContain("Waiting for a human: the run used all its revisions");
      expect(esc.stdout).toContain("search_flights_backup timed out");
      for (const d of ["--skip", "--retry", "--abort"])
        expect(esc.stdout).toContain(`npm start -- resume esc ${d} --db ${db}`);

      const wrong = await runCli(["resume", "esc", "--approve", "--db", db]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(`--skip, --retry, --replan "<guidance>", --abort`);

      const aborted = await runCli(["resume", "esc", "--abort", "--db", db]);
      expect(aborted.code, aborted.stderr).toBe(4);
      expect(aborted.stdout).toMatch(/exceeded 1 revisions/);
      expect(aborted.stdout).toContain("A human chose to abort");
    },
  );

  it("continues a run killed mid-flight from its last checkpoint in a new process", { timeout: LONG }, async () => {
    const db = freshDb();
    const child = spawnCli([
      "run",
      "Plan a 3-day trip from Madrid to Paris for 2 people",
      "--db",
      db,
      "--thread",
      "crash",
      "--fault",
      "search_flights=timeout",
    ]);
    await new Promise<void>((resolve, reject) => {
      let seen = "";
      child.stderr?.on("data", (d: Buffer) => {
        seen += d.toString();
        // The hotel and activities finished while the primary flight search hangs: kill before the run ends.
        if (/✓ hotel/.test(seen) && /✓ activities/.test(seen)) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("close", () => reject(new Error(`the run ended before it could be killed:\n${seen}`)));
    });
    await new Promise((resolve) => child.on("close", resolve));

    const resumed = await runCli(["resume", "crash", "--db", db]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("where the run stopped part-way");
    expect(resumed.stderr).toContain("RETRY_DIFFERENT_AGENT");
    expect(resumed.stdout).toContain("Status: completed");
  });
});

describe("inspecting a thread", () => {
  it(
    "history lists checkpoints newest first, report --json parses, logs --step shows the step's decisions",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "insp"])).code).toBe(0);

      const history = await runCli(["history", "insp", "--db", db]);
      expect(history.code, history.stderr).toBe(0);
      const rows = history.stdout.split("\n").filter((l) => /^\s+\d\d:\d\d:\d\d\s+-?\d+\s/.test(l));
      expect(rows.length).toBeGreaterThan(5);
      expect(rows[0]).toMatch(/completed\s+\(end\)/);
      const steps = rows.map((l) => Number(/^\s+\S+\s+(-?\d+)/.exec(l)?.[1]));
      expect(steps).toEqual([...steps].sort((a, b) => b - a));

      const report = await runCli(["report", "insp", "--json", "--db", db]);
      expect(report.code).toBe(0);
      expect(JSON.parse(report.stdout).report.summary.stepsSucceeded).toBe(5);

      const logs = await runCli(["logs", "--step", "flight", "--db", db]);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toMatch(/dispatch\s+plan-\w+ \/ flight/);
      expect(logs.stdout).toMatch(/step_result\s+plan-\w+ \/ flight/);
      expect(logs.stdout).not.toMatch(/\/ hotel/);

      const raw = await runCli(["logs", "--thread", "insp", "--operation", "plan", "--json", "--db", db]);
      const lines = raw.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ operation: "plan", threadId: "insp" });
    },
  );
});

describe("the llm reasoner", () => {
  it(
    "is chosen by --model and falls back to rules, saying so, when the model server fails",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      // ChatOpenAI retries once: two failed calls for the plan, two for the review of the answer (issue 9), two for
      // the answer.
      const fake = new FakeOpenAIServer(Array.from({ length: 6 }, () => ({ status: 500, error: "model server down" })));
      const server = await fake.start();
      try {
        const r = await runCli(["run", TRIP, "--db", db, "--model", "fake-model"], {
          OPENAI_API_KEY: "test-key",
          OPENAI_BASE_URL: server.baseUrl,
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr.split("\n")[0]).toContain("reasoner: llm (model fake-model)");
        expect(r.stderr).toContain("Used the rules planner instead");
        expect(r.stderr).toContain("used the rules template instead");
        expect(r.stderr).toContain("could not review the answer");
        fake.assertConsumed();
      } finally {
        await server.close();
      }
    },
  );
});

describe("bad input: one paragraph on stderr, no stack trace, exit 2", () => {
  const db = () => freshDb();
  const cases: [string, () => string[], RegExp][] = [
    ["an empty request", () => ["run", "  ", "--db", db()], /request is empty/],
    [
      "a request longer than a request may be",
      () => ["run", `Summarize this: ${"lorem ipsum ".repeat(2000)}`, "--db", db()],
      /^The request is 24,015 characters long, over the 20,000 a request may have: put the long text in a file and name the file in the request/,
    ],
    ["an unknown flag", () => ["run", TRIP, "--frobnicate"], /Unknown option '--frobnicate'.*--help/],
    ["an unknown command", () => ["fly", "me", "to", "Rome"], /Unknown command "fly".*run "fly me to Rome"/],
    ["an unknown thread", () => ["history", "nope", "--db", db()], /no Candor database exists|no thread "nope"/],
    [
      "a malformed --fault",
      () => ["run", TRIP, "--fault", "search_flights", "--db", db()],
      /--fault "search_flights" is malformed: "search_flights" is not of the form tool=kind\[\*N\]/,
    ],
    [
      "an unknown tool in --fault",
      () => ["run", TRIP, "--fault", "teleport=timeout", "--db", db()],
      /unknown tool "teleport".*Known tools/,
    ],
    ["an unwritable db", () => ["run", TRIP, "--db", "/etc/passwd/x.db"], /Cannot use "\/etc\/passwd\/x\.db".*--db/],
    [
      "a threshold out of range",
      () => ["run", TRIP, "--approval-threshold", "1.5", "--db", db()],
      /--approval-threshold must be a number between 0 and 1/,
    ],
    [
      "--model without OPENAI_API_KEY",
      () => ["run", TRIP, "--model", "gpt-4o-mini", "--db", db()],
      /OPENAI_API_KEY is not set/,
    ],
    ["two decisions at once", () => ["resume", "x", "--approve", "--reject", "--db", db()], /one decision/],
  ];
  for (const [name, args, message] of cases) {
    it(name, { timeout: LONG }, async () => {
      const r = await runCli(args());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(STACK_LINE);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
    });
  }

  it("an unknown thread in an existing database names the threads it has", { timeout: LONG }, async () => {
    const file = freshDb();
    expect((await runCli(["run", TRIP, "--db", file, "--thread", "known"])).code).toBe(0);
    const r = await runCli(["resume", "nope", "--db", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `There is no thread "nope" in ${path.resolve(file)}. Recent threads in this database: known.`,
    );
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});
