/**
 * The chaos suite's reusable pieces, without running Candor: the seeded PRNG, the request grammar, scenarios,
 * decisions, the invariant checks (each shown to catch what it names, and to pass a clean run) and the report.
 */
import { describe, expect, it } from "vitest";
import type { AgentStateValue } from "../../nodes/state.js";
import { malformedMove, validMove, type Waiting } from "../../bench/chaos/decisions.js";
import type { CommandRecord, RunRecord, Snapshot } from "../../bench/chaos/driver.js";
import { generateRequest } from "../../bench/chaos/grammar.js";
import {
  checkAnnouncements,
  checkCaps,
  checkCommands,
  checkKillResume,
  checkSideEffects,
  checkStatusReport,
  expectedExit,
  type Violation,
} from "../../bench/chaos/invariants.js";
import { createRng, deriveSeed, hashSeed, mulberry32 } from "../../bench/chaos/prng.js";
import { classOf, findings } from "../../bench/chaos/report.js";
import type { RunResult } from "../../bench/chaos/runner.js";
import { generateScenario, reproduction } from "../../bench/chaos/scenario.js";

describe("the seeded PRNG", () => {
  it("gives the same sequence for the same seed and a different one for another", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(first);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(first);
    for (const x of first) expect(x >= 0 && x < 1).toBe(true);
  });

  it("keeps int, pick, weighted and sample within their bounds", () => {
    const rng = createRng(7);
    for (let i = 0; i < 2000; i++) {
      const n = rng.int(-3, 3);
      expect(Number.isInteger(n) && n >= -3 && n <= 3).toBe(true);
      expect(
        rng.weighted([
          ["never", 0],
          ["always", 1],
        ] as const),
      ).toBe("always");
    }
    const seen = new Set(Array.from({ length: 500 }, () => rng.int(0, 4)));
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4]);
    const sample = rng.sample([1, 2, 3, 4, 5], 3);
    expect(new Set(sample).size).toBe(3);
    expect(() => rng.pick([])).toThrow(RangeError);
    expect(() => rng.int(2, 1)).toThrow(RangeError);
  });

  it("forks streams that do not shift when the parent draws more", () => {
    const a = createRng(1);
    const b = createRng(1);
    b.next();
    b.next();
    expect(a.fork("x").next()).toBe(b.fork("x").next());
    expect(a.fork("x").next()).not.toBe(a.fork("y").next());
  });

  it("derives a distinct seed for every run index", () => {
    const seeds = new Set(Array.from({ length: 1000 }, (_, i) => deriveSeed(5, i)));
    expect(seeds.size).toBe(1000);
    expect(hashSeed(5, "a")).toBe(hashSeed(5, "a"));
  });
});

describe("the request grammar and scenarios", () => {
  it("is reproducible from the seed", () => {
    expect(generateRequest(createRng(99))).toEqual(generateRequest(createRng(99)));
    expect(generateScenario(3, 17)).toEqual(generateScenario(3, 17));
    expect(reproduction(generateScenario(3, 17))).toBe("npm run chaos -- --seed 3 --only 17");
  });

  it("covers travel, workspace and other requests, served and unserved cities, bookings and unsupported asks", () => {
    const requests = Array.from({ length: 600 }, (_, i) => generateRequest(createRng(i)));
    expect(new Set(requests.map((r) => r.kind))).toEqual(new Set(["travel", "workspace", "other"]));
    const travel = requests.filter((r) => r.kind === "travel");
    expect(travel.some((r) => r.facts.served === false)).toBe(true);
    expect(travel.some((r) => r.books)).toBe(true);
    expect(travel.some((r) => /rent a car|insurance|Michelin/.test(r.text))).toBe(true);
    expect(travel.some((r) => /without|don't|no hotel|not in/.test(r.text))).toBe(true);
    expect(new Set(travel.map((r) => r.facts.budget)).size).toBeGreaterThan(5);
  });

  it("gives kill runs only faults that behave the same in every process", () => {
    for (let i = 0; i < 300; i++) {
      const s = generateScenario(11, i, "kill");
      expect(s.kills.length).toBeGreaterThan(0);
      for (const f of s.faults) expect(f).not.toMatch(/\*\d|=slow$/);
    }
    const modes = new Set(Array.from({ length: 200 }, (_, i) => generateScenario(11, i).mode));
    expect(modes).toEqual(new Set(["in-process", "cli", "kill"]));
  });
});

describe("random decisions", () => {
  const planApproval: Waiting = { kind: "plan_approval", decisions: ["approve", "reject", "adjust", "replan"] };
  const escalation: Waiting = {
    kind: "max_revisions",
    taskId: "hotel",
    decisions: ["skip", "retry", "replan", "abort"],
    params: { city: "Paris", nights: 2 },
  };
  const tool: Waiting = { kind: "tool_approval", taskId: "book", decisions: ["approve", "deny"] };
  const plan = {
    steps: [{ id: "hotel", tools: ["search_hotels"], params: { city: "Paris", nights: 2 }, status: "pending" }],
  };
  const flagOf = (args: string[]) =>
    args.find((a) => a.startsWith("--") && a !== "--comment" && a !== "--set")!.slice(2);

  it("answers only with decisions the thread accepts", () => {
    for (let i = 0; i < 300; i++) {
      for (const w of [planApproval, escalation, tool]) {
        const move = validMove(createRng(i), w, plan, false);
        expect(move.malformed).toBe(false);
        expect(w.decisions).toContain(flagOf(move.args));
      }
    }
  });

  it("ends the run once it is told to", () => {
    expect(validMove(createRng(1), escalation, plan, true).args[0]).toBe("--abort");
    expect(validMove(createRng(1), planApproval, plan, true).args[0]).toBe("--reject");
    expect(validMove(createRng(1), tool, plan, true).args[0]).toBe("--deny");
  });

  it("marks malformed answers, and says when the step's tool must refuse a value", () => {
    const refuses = (_tool: string, params: Record<string, unknown>) =>
      typeof params.nights !== "number" || params.nights < 1;
    let mustRefuse = 0;
    for (let i = 0; i < 300; i++) {
      const move = malformedMove(createRng(i), planApproval, plan, refuses);
      if (move.mustRefuse) mustRefuse++;
      if (!move.malformed) expect(move.label).toMatch(/the tool accepts it/);
    }
    expect(mustRefuse).toBeGreaterThan(10);
  });
});

const snap = (over: Partial<Snapshot> = {}): Snapshot => ({
  exists: true,
  checkpointId: "c1",
  finished: true,
  status: "completed",
  waitingKind: null,
  decisions: 0,
  ...over,
});

function command(over: Partial<CommandRecord> = {}): CommandRecord {
  return {
    argv: ["run", "x"],
    where: "in-process",
    code: 0,
    signal: null,
    stdout: "",
    stderr: "",
    ms: 10,
    killed: false,
    timedOut: false,
    killMissed: false,
    move: null,
    before: snap({ exists: false, checkpointId: null }),
    after: snap(),
    ...over,
  };
}

function record(
  values: Partial<AgentStateValue> | null,
  commands: CommandRecord[] = [command()],
  extra: Partial<RunRecord> = {},
): RunRecord {
  const v =
    values === null
      ? null
      : ({
          notifications: [],
          revisions: [],
          revisionCount: 0,
          feedback: [],
          settings: { maxRevisions: 3, approvalThreshold: 0.5, abortBelow: 0.3, maxStepFailures: 3 },
          plan: null,
          report: null,
          answer: "ok",
          status: "completed",
          failureReason: null,
          ...values,
        } as unknown as AgentStateValue);
  return {
    scenario: generateScenario(1, 0, "in-process"),
    threadId: "t",
    db: "/tmp/none.db",
    commands,
    final: {
      exists: v !== null,
      checkpointId: "c1",
      finished: true,
      status: v?.status ?? null,
      waitingFor: null,
      next: [],
      values: v,
    },
    ledger: [],
    unbounded: false,
    ms: 10,
    marker: "SECRET-MARKER",
    ...extra,
  };
}

const note = (kind: string, taskId: string | null, title: string) => ({
  id: title,
  at: "2025-01-01T00:00:00Z",
  severity: "INFO",
  kind,
  taskId,
  title,
  message: "",
  errorSummary: null,
  recoveryStrategy: null,
  estimatedDelay: null,
  details: null,
});
const ids = (vs: Violation[]) => vs.map((v) => v.invariant);

describe("the invariant checks", () => {
  it("maps a thread's state to the exit code docs/cli.md documents", () => {
    expect(expectedExit(snap())).toBe(0);
    expect(expectedExit(snap({ status: "partial" }))).toBe(4);
    expect(expectedExit(snap({ finished: false, waitingKind: "plan_approval" }))).toBe(3);
    expect(expectedExit(snap({ finished: false, status: "executing" }))).toBe(4);
  });

  it("catches a stack trace, an undocumented or wrong exit code, bad --json output and a leaked file", () => {
    expect(
      ids(checkCommands(record({}, [command({ stderr: "Error: x\n    at foo (file:///a/b.ts:1:2)\n" })]))),
    ).toContain("no-stack-trace");
    expect(ids(checkCommands(record({}, [command({ code: 1, stderr: "Internal error: boom" })])))).toContain(
      "no-stack-trace",
    );
    expect(ids(checkCommands(record({}, [command({ code: 4 })])))).toContain("exit-code");
    expect(
      ids(checkCommands(record({}, [command({ argv: ["run", "x", "--json"], stdout: "Answer: not json" })]))),
    ).toContain("json-output");
    expect(ids(checkCommands(record({}, [command({ stdout: "SECRET-MARKER" })])))).toContain("confinement");
    expect(checkCommands(record({}))).toEqual([]);
  });

  it("catches a refusal that changed the thread, and an accepted answer the tool must refuse", () => {
    const move = { args: ["--adjust", "[]"], label: "malformed", malformed: true };
    const refused = command({
      argv: ["resume", "t", "--adjust", "[]"],
      code: 2,
      move,
      before: snap({ checkpointId: "a", waitingKind: "plan_approval", finished: false }),
      after: snap({ checkpointId: "b" }),
    });
    expect(ids(checkCommands(record({}, [command(), refused])))).toContain("refusal-changes-nothing");
    const accepted = command({
      argv: ["resume", "t", "--adjust", "x"],
      code: 0,
      move: { ...move, mustRefuse: "search_hotels refuses nights=-5" },
      before: snap({ waitingKind: "plan_approval", finished: false, decisions: 0 }),
      after: snap({ decisions: 1 }),
    });
    expect(ids(checkCommands(record({}, [command(), accepted])))).toContain("decision-validated");
  });

  it("catches a recovery with no failure announced before it, and passes one that was", () => {
    const silent = record({ notifications: [note("strategy", "hotel", "Recovery for hotel: SKIP")] as never });
    expect(ids(checkAnnouncements(silent))).toContain("failure-announced");
    const said = record({
      notifications: [
        note("step_failed", "hotel", "hotel failed"),
        note("strategy", "hotel", "Recovery for hotel: SKIP"),
      ] as never,
    });
    expect(checkAnnouncements(said)).toEqual([]);
  });

  it("catches revisions beyond the cap or out of step with the list", () => {
    const revision = { strategy: "SKIP" };
    expect(
      ids(checkCaps(record({ revisionCount: 4, revisions: [revision, revision, revision, revision] as never }))),
    ).toContain("caps");
    expect(ids(checkCaps(record({ revisionCount: 2, revisions: [revision] as never })))).toContain("caps");
    expect(checkCaps(record({ revisionCount: 1, revisions: [revision] as never }))).toEqual([]);
  });

  it("catches a completed run whose report says something is missing", () => {
    const report = { summary: { status: "completed", failureReason: null }, missing: ["hotel: failed"] };
    expect(ids(checkStatusReport(record({ report: report as never })))).toContain("status-report");
    expect(
      checkStatusReport(record({ report: { ...report, missing: [] } as never, plan: { steps: [] } as never })),
    ).toEqual([]);
  });

  it("catches an irreversible call made twice", () => {
    const row = { stepId: "book", dispatch: 1, attempt: 1, tool: "book_trip", status: "done" };
    const irreversible = (t: string) => t === "book_trip";
    expect(ids(checkSideEffects([row, { ...row, dispatch: 2 }], irreversible))).toContain("side-effect-once");
    expect(checkSideEffects([row, { ...row, attempt: 2, status: "failed" }], irreversible)).toEqual([]);
  });

  it("compares a killed run with the uninterrupted one", () => {
    const killed = record({ status: "partial", answer: "a" }, [command({ killed: true }), command()]);
    expect(ids(checkKillResume(killed, { status: "completed", answer: "a", exists: true }))).toEqual(["kill-resume"]);
    expect(checkKillResume(killed, { status: "partial", answer: "a", exists: true })).toEqual([]);
    expect(checkKillResume(record({ status: "partial" }), { status: "completed", answer: "a", exists: true })).toEqual(
      [],
    );
  });
});

describe("the report", () => {
  it("puts violations that differ only in values in one class, with a reproduction", () => {
    const a: Violation = {
      invariant: "exit-code",
      message: '`candor resume chaos-3 --adjust "[1]" --json` exited 4 but the thread is waiting: expected 3',
    };
    const b: Violation = {
      invariant: "exit-code",
      message: '`candor resume chaos-9 --adjust "[2]"` exited 4 but the thread is waiting: expected 3',
    };
    expect(classOf(a)).toBe(classOf(b));
    const result = (index: number, violations: Violation[]): RunResult => ({
      seed: 1,
      index,
      runSeed: 0,
      mode: "in-process",
      request: "r",
      faults: [],
      flags: [],
      status: "completed",
      environment: false,
      kills: 0,
      trace: [],
      ms: 1,
      violations,
      reproduce: `npm run chaos -- --seed 1 --only ${index}`,
    });
    const [f] = findings([result(3, [a]), result(9, [b])]);
    expect(f).toMatchObject({ invariant: "exit-code", count: 2, runs: [3, 9] });
    expect(f!.example.result.reproduce).toBe("npm run chaos -- --seed 1 --only 3");
  });
});
