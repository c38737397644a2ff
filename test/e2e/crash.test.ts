/**
 * Issue 4 item 4: the CLI is killed with SIGKILL at several points — while parallel workers run, after some
 * have finished, at the approval wait, while the approved booking runs and just after it — and the thread is
 * resumed in another process. The final output must equal an uninterrupted run's, and book_trip (the one tool
 * with a side effect) must have run once, or, when the kill left its outcome unknown, never again.
 *
 * Each kill point is exact, not timed: crash-helpers.ts freezes the child at a chosen SQLite write before the
 * SIGKILL. The primary flight search always times out (2 × 1.2 s, then the backup provider takes over), so the
 * flight worker is the last of the three parallel searches to finish and every run carries one revision.
 * Only the processes that are stopped are children; the other commands run through the CLI's program here.
 *
 * The last two cases pin a bug this test found in run-step.ts: a side-effecting call stopped before it answered
 * (Ctrl-C, or its time limit) was recorded as failed, so a resume or the step's own retry booked again.
 */
import { describe, it, type ExpectStatic, type OnTestFinishedHandler } from "vitest";
import {
  cli,
  CliChild,
  decisions,
  installFreeze,
  MARKED,
  marked,
  normalise,
  prepareDb,
  removeFreeze,
  reportJson,
  stepResults,
  threadFacts,
  writeValue,
  type CliResult,
  type ThreadFacts,
  type WriteMatch,
} from "./crash-helpers.js";
import { tempDir } from "./helpers.js";

const REQUEST = "Plan and book a 2-day trip from Paris to Rome for 1 person";
const FAULTS = ["--fault", "search_flights=timeout"];
const THREAD = "crash";
const LONG = 120_000;

interface Finished {
  /** `resume --json` of the command that finished the thread, normalised. */
  resume: unknown;
  /** `report --json`, normalised. */
  report: unknown;
  /** The booking's ledger row; its result holds the booking reference. */
  booking: ThreadFacts["effects"][number];
}

let referenceRun: Promise<Finished> | null = null;

/**
 * The uninterrupted run every case is compared with: run to the booking's approval, approve, read the report.
 * Memoised: a case starts it with `void reference()` so it overlaps the case's own run, and awaits it later; a
 * failure surfaces there (or as an unhandled rejection, which fails the run), never silently.
 */
function reference(): Promise<Finished> {
  referenceRun ??= (async () => {
    const t = tempDir("candor-crash-ref-");
    try {
      const waiting = await cli(["run", REQUEST, ...FAULTS, "--thread", "ref", "--db", t.db]);
      if (waiting.code !== 3)
        throw new Error(`the reference run should wait for the booking's approval:\n${waiting.output}`);
      const approved = await cli(["resume", "ref", "--approve", "--json", "--db", t.db]);
      if (approved.code !== 0) throw new Error(`the reference run did not complete:\n${approved.output}`);
      const [booking, ...more] = threadFacts(t.db, "ref").effects;
      if (!booking || more.length > 0)
        throw new Error(`the reference run should book once, not ${more.length + (booking ? 1 : 0)} time(s)`);
      return { resume: normalise(approved.json), report: normalise(await reportJson("ref", t.db)), booking };
    } finally {
      t.cleanup();
    }
  })();
  return referenceRun;
}

/** A fresh database with the CLI's tables (so a freeze can be installed before the first command). */
async function freshDb(
  onFinished: (fn: OnTestFinishedHandler) => void,
): Promise<{ db: string; spawn: (args: string[]) => CliChild }> {
  const t = tempDir("candor-crash-");
  await prepareDb(t.db);
  const children: CliChild[] = [];
  onFinished(() => {
    for (const c of children) c.stop();
    t.cleanup();
  });
  const spawn = (args: string[]) => {
    const c = new CliChild([...args, "--db", t.db]);
    children.push(c);
    return c;
  };
  return { db: t.db, spawn };
}

/** SIGKILLs the child once the freeze's mark is committed, then lifts the freeze for the next process. */
async function killAtMark(
  child: CliChild,
  db: string,
  what: string,
  andThen: () => boolean = () => true,
): Promise<void> {
  await child.waitUntil(what, () => marked(db) && andThen());
  await child.kill();
  removeFreeze(db);
}

/**
 * A worker's result: a step task's saved return inside execute (a step that needs no approval), or the feedback
 * written inside a worker subgraph (after the gate); `stepId` narrows it to one step.
 */
function workerResult(stepId?: string): WriteMatch {
  const task = `NEW.channel = '__return__' AND ${writeValue("$.ran")} = 1${stepId ? ` AND ${writeValue("$.feedback.taskId")} = '${stepId}'` : ""}`;
  const subgraph = `NEW.checkpoint_ns LIKE 'worker:%' AND NEW.channel = 'feedback'${stepId ? ` AND ${writeValue("$[0].taskId")} = '${stepId}'` : ""}`;
  return { table: "writes", event: "INSERT", when: `(${task}) OR (${subgraph})` };
}

/** The decision log says these steps were dispatched to their workers in this thread. */
function dispatched(db: string, stepIds: readonly string[]): boolean {
  const sent = new Set(
    decisions(db)
      .filter((l) => l.operation === "dispatch" && l.threadId === THREAD && l.decision !== "skip")
      .map((l) => l.taskId),
  );
  return stepIds.every((id) => sent.has(id));
}

/** The thread asks for the booking's approval: a run or a bare resume that finds it waiting exits 3 and says so. */
function asksForApproval(r: CliResult): boolean {
  const waitingFor = r.json?.waitingFor as { kind?: string } | null | undefined;
  return r.code === 3 && waitingFor?.kind === "tool_approval";
}

/** The thread waits for a person to check whether book_trip took effect (its outcome is unknown). */
function asksToCheckBooking(expect: ExpectStatic, r: CliResult): void {
  expect(r.code, r.output).toBe(3);
  expect(r.json?.waitingFor).toMatchObject({
    kind: "unknown_outcome",
    taskId: "booking",
    decisions: ["retry", "skip", "abort"],
  });
  expect(String((r.json?.waitingFor as { reason?: string }).reason)).toMatch(
    /^book_trip for booking may already have taken effect/,
  );
}

/** `resume`, then `resume --approve` whenever the thread asks for the booking's approval, until it stops asking. */
async function resumeToEnd(db: string): Promise<{ commands: string[]; last: CliResult }> {
  const commands: string[] = [];
  let last = await cli(["resume", THREAD, "--json", "--db", db]);
  commands.push(`resume → ${last.code}`);
  while (asksForApproval(last) && commands.length < 4) {
    last = await cli(["resume", THREAD, "--approve", "--json", "--db", db]);
    commands.push(`resume --approve → ${last.code}`);
  }
  return { commands, last };
}

/** What the decision log says each process did with the booking step: a real call, the ledger's record, or a failure. */
function bookingCalls(db: string): string[] {
  return stepResults(db, THREAD, "booking").map((r) =>
    /^finished in \d+ ms/.test(r.reasoning)
      ? "called"
      : /^book_trip was not called again/.test(r.reasoning)
        ? "reused"
        : `${r.decision}: ${r.reasoning}`,
  );
}

/** Finished, equal to the reference in everything but clocks and ids, booked once, and the lease given back. */
async function expectSameAsReference(expect: ExpectStatic, db: string, last: CliResult): Promise<void> {
  const ref = await reference();
  expect(last.code, last.output).toBe(0);
  expect(normalise(last.json)).toEqual(ref.resume);
  expect(normalise(await reportJson(THREAD, db))).toEqual(ref.report);
  const facts = threadFacts(db, THREAD);
  expect(facts.effects).toEqual([{ ...ref.booking, at: expect.any(String) }]);
  expect(facts.leasePid, "the last command gave the lease back").toBeNull();
}

describe.concurrent(
  "SIGKILL at any point, then resume: the same result, and no side effect twice (issue 4 item 4)",
  () => {
    it(
      "killed while the three searches run in parallel, none finished: resume runs them and ends like an uninterrupted run",
      { timeout: LONG },
      async ({ expect, onTestFinished }) => {
        void reference();
        const { db, spawn } = await freshDb(onTestFinished);
        // No worker result may commit (the first one freezes the child); the mark is the plan reaching execute,
        // and the kill waits for the three searches' dispatches in the decision log.
        installFreeze(db, {
          hold: [workerResult()],
          mark: { table: "writes", event: "INSERT", when: `NEW.channel = 'branch:to:execute'` },
        });
        const run = spawn(["run", REQUEST, ...FAULTS, "--thread", THREAD]);
        await killAtMark(run, db, "the three searches to start", () =>
          dispatched(db, ["flight", "hotel", "activities"]),
        );
        expect(threadFacts(db, THREAD)).toEqual({ workersStarted: 3, results: {}, effects: [], leasePid: run.pid });

        const { commands, last } = await resumeToEnd(db);
        expect(commands).toEqual(["resume → 3", "resume --approve → 0"]);
        await expectSameAsReference(expect, db, last);
        expect(bookingCalls(db)).toEqual(["called"]);
      },
    );

    it(
      "killed after hotel and activities finished, the flight search still failing: resume runs only the flight and ends like an uninterrupted run",
      { timeout: LONG },
      async ({ expect, onTestFinished }) => {
        void reference();
        const { db, spawn } = await freshDb(onTestFinished);
        // The flight's result may not commit; the mark is the second of hotel and activities saved by its task.
        const committed = `(SELECT count(DISTINCT ${writeValue("$.feedback.taskId", "w")}) FROM writes w WHERE w.thread_id = NEW.thread_id AND w.channel = '__return__' AND ${writeValue("$.feedback.taskId", "w")} IN ('hotel', 'activities'))`;
        installFreeze(db, {
          hold: [workerResult("flight")],
          mark: {
            table: "writes",
            event: "INSERT",
            when: `NEW.channel = '__return__' AND ${committed} = 2`,
          },
        });
        const run = spawn(["run", REQUEST, ...FAULTS, "--thread", THREAD]);
        await killAtMark(run, db, "hotel and activities to finish");
        expect(threadFacts(db, THREAD)).toEqual({
          workersStarted: 3,
          results: { hotel: "SUCCESS", activities: "SUCCESS" },
          effects: [],
          leasePid: run.pid,
        });

        const resumed = await cli(["resume", THREAD, "--json", "--db", db]);
        expect(resumed.code, resumed.output).toBe(3);
        expect(resumed.stderr).toContain("where the run stopped part-way");
        expect(resumed.stderr).not.toMatch(/✓ (hotel|activities) /);
        expect(resumed.stderr).toMatch(/✗ flight .* failed: search_flights timed out/);
        expect(resumed.stderr).toMatch(/✓ flight_retry /);

        const approved = await cli(["resume", THREAD, "--approve", "--json", "--db", db]);
        await expectSameAsReference(expect, db, approved);
        expect(bookingCalls(db)).toEqual(["called"]);
      },
    );

    it(
      "killed at the approval wait with its lease held, then right after book_trip's result was recorded: resume reuses the recorded booking",
      { timeout: LONG },
      async ({ expect, onTestFinished }) => {
        void reference();
        const { db, spawn } = await freshDb(onTestFinished);
        // Giving the lease back is the run's last write: it has printed what it waits for, and never releases.
        installFreeze(db, { hold: [{ table: "candor_leases", event: "DELETE", when: "1" }] });
        const run = spawn(["run", REQUEST, ...FAULTS, "--thread", THREAD]);
        await run.waitUntil("the approval wait", () => run.stdout.includes("Waiting for a human: approve a tool call"));
        await run.kill();
        removeFreeze(db);
        expect(threadFacts(db, THREAD)).toMatchObject({ effects: [], leasePid: run.pid });
        expect((await cli(["report", THREAD, "--json", "--db", db])).json).toMatchObject({
          finished: false,
          waitingFor: { kind: "tool_approval", tool: "book_trip" },
        });

        // The dead holder's lease does not stop the approval. The booking's result is recorded; nothing after it is.
        installFreeze(db, {
          mark: { table: "candor_effects", event: "UPDATE", when: "NEW.tool = 'book_trip' AND NEW.status = 'done'" },
          hold: [
            { table: "writes", event: "INSERT", when: MARKED },
            { table: "checkpoints", event: "INSERT", when: MARKED },
          ],
        });
        const approve = spawn(["resume", THREAD, "--approve"]);
        // The call's log line follows the ledger's commit (both synchronous, before the held checkpoint write): wait
        // for both, or a loaded machine can kill the process between them.
        await killAtMark(approve, db, "book_trip's result to be recorded", () => bookingCalls(db).includes("called"));
        const killed = threadFacts(db, THREAD);
        expect(killed.effects).toMatchObject([{ stepId: "booking", tool: "book_trip", status: "done" }]);
        expect(killed.leasePid).toBe(approve.pid);
        expect(bookingCalls(db)).toEqual(["called"]);

        const { last } = await resumeToEnd(db);
        await expectSameAsReference(expect, db, last);
        // The ledger row was not touched again (a call rewrites it before calling), and the log says why.
        expect(threadFacts(db, THREAD).effects).toEqual(killed.effects);
        expect(bookingCalls(db)).toEqual(["called", "reused"]);
      },
    );

    it(
      "killed while the approved book_trip runs: its outcome is unknown, so resume never calls it again and asks a person, who skips it",
      { timeout: LONG },
      async ({ expect, onTestFinished }) => {
        const ref = reference();
        const { db, spawn } = await freshDb(onTestFinished);
        expect((await cli(["run", REQUEST, ...FAULTS, "--thread", THREAD, "--db", db])).code).toBe(3);
        // The call is recorded as started; recording its outcome never commits.
        installFreeze(db, {
          mark: { table: "candor_effects", event: "INSERT", when: "NEW.tool = 'book_trip' AND NEW.status = 'started'" },
          hold: [{ table: "candor_effects", event: "UPDATE", when: MARKED }],
        });
        const approve = spawn(["resume", THREAD, "--approve"]);
        await killAtMark(approve, db, "book_trip to start");
        const killed = threadFacts(db, THREAD);
        expect(killed.effects).toMatchObject([
          { stepId: "booking", tool: "book_trip", status: "started", result: null },
        ]);
        expect(killed.leasePid).toBe(approve.pid);

        const { last: asked } = await resumeToEnd(db);
        asksToCheckBooking(expect, asked);
        const last = await cli(["resume", THREAD, "--skip", "--json", "--db", db]);
        expect(last.code, last.output).toBe(4);
        expect(threadFacts(db, THREAD).effects, "book_trip was not called again").toEqual(killed.effects);
        expect(bookingCalls(db)).toEqual([
          expect.stringMatching(/^FAILURE: policy_blocked: book_trip may already have run.*a human must check/),
        ]);

        // Everything but the booking is as in the uninterrupted run, the flight's recovery included.
        type Out = {
          status: string;
          plan: { steps: { id: string; status: string }[] };
          revisions: { strategy: string; failedTaskId: string }[];
        };
        const out = last.json as Out;
        const expected = (await ref).resume as Out;
        expect(out.status).toBe("partial");
        const others = (o: Out) => normalise(o.plan.steps.filter((s) => s.id !== "booking"));
        expect(others(out)).toEqual(others(expected));
        expect(out.plan.steps.find((s) => s.id === "booking")?.status).toBe("skipped");
        expect(out.revisions.map((r) => [r.strategy, r.failedTaskId])).toEqual([
          ...expected.revisions.map((r) => [r.strategy, r.failedTaskId]),
          ["SKIP", "booking"],
        ]);
      },
    );
  },
);

/** What the thread ended as, with the booking step's errors. */
async function outcome(db: string): Promise<{ status: unknown; booking: unknown }> {
  const report = (await reportJson(THREAD, db)) as {
    status: string;
    report: { tasks: { id: string; status: string; errors: string[] }[] };
  };
  const booking = report.report.tasks.find((t) => t.id === "booking");
  return { status: report.status, booking: booking && { status: booking.status, errors: booking.errors } };
}

describe.concurrent("a side-effecting call stopped before it answered is an unknown outcome too", () => {
  it(
    "Ctrl-C while book_trip runs: the aborted call is not repeated by resume (it used to be recorded as failed, and booked again); a person's retry books once",
    { timeout: LONG },
    async ({ expect, onTestFinished }) => {
      const { db, spawn } = await freshDb(onTestFinished);
      // book_trip's first call in each process waits 1.5 s before booking: Ctrl-C lands inside that call.
      expect((await cli(["run", REQUEST, "--fault", "book_trip=slow*1", "--thread", THREAD, "--db", db])).code).toBe(3);
      installFreeze(db, {
        mark: { table: "candor_effects", event: "INSERT", when: "NEW.tool = 'book_trip' AND NEW.status = 'started'" },
        // Were the call to finish before Ctrl-C is handled, this case would hang here rather than pass.
        hold: [{ table: "candor_effects", event: "UPDATE", when: `${MARKED} AND NEW.status = 'done'` }],
      });
      const approve = spawn(["resume", THREAD, "--approve"]);
      await approve.waitUntil("book_trip to start", () => marked(db));
      approve.child.kill("SIGINT");
      expect((await approve.exited).code, approve.output()).toBe(130);
      removeFreeze(db);
      const stopped = threadFacts(db, THREAD);
      expect(stopped.effects).toMatchObject([
        { stepId: "booking", tool: "book_trip", status: "started", result: null },
      ]);
      expect(stopped.leasePid).toBeNull();

      const { last: asked } = await resumeToEnd(db);
      asksToCheckBooking(expect, asked);
      expect(threadFacts(db, THREAD).effects, "book_trip was not called again").toEqual(stopped.effects);
      expect(bookingCalls(db).filter((c) => c === "called")).toEqual([]);

      // The person checked: it did not happen. The step runs again on a new dispatch, asking its approval again.
      const retried = await cli(["resume", THREAD, "--retry", "--json", "--db", db]);
      expect(retried.code, retried.output).toBe(3);
      expect(retried.json?.waitingFor).toMatchObject({ kind: "tool_approval", tool: "book_trip" });
      const done = await cli(["resume", THREAD, "--approve", "--json", "--db", db]);
      expect(done.code, done.output).toBe(0);
      expect(bookingCalls(db).filter((c) => c === "called")).toEqual(["called"]);
      expect(threadFacts(db, THREAD).effects.map((e) => [e.dispatch, e.status])).toEqual([
        [1, "started"],
        [2, "done"],
      ]);
    },
  );

  it(
    "book_trip cut off by its time limit is not retried: it may have booked, so a person is asked, who skips it",
    { timeout: LONG },
    async ({ expect, onTestFinished }) => {
      const { db } = await freshDb(onTestFinished);
      expect((await cli(["run", REQUEST, "--fault", "book_trip=timeout*1", "--thread", THREAD, "--db", db])).code).toBe(
        3,
      );
      asksToCheckBooking(expect, await cli(["resume", THREAD, "--approve", "--json", "--db", db]));
      const approved = await cli(["resume", THREAD, "--skip", "--db", db]);
      expect(approved.code, approved.output).toBe(4);
      expect(threadFacts(db, THREAD).effects).toMatchObject([
        { stepId: "booking", dispatch: 1, attempt: 1, tool: "book_trip", status: "started", result: null },
      ]);
      expect(bookingCalls(db)).toEqual([
        expect.stringMatching(
          /^FAILURE: policy_blocked: book_trip timed out after \d+ ms: book_trip may already have run.*a human must check/,
        ),
      ]);
      expect(await outcome(db)).toEqual({
        status: "partial",
        booking: {
          status: "skipped",
          errors: [expect.stringMatching(/^book_trip timed out after \d+ ms: book_trip may already have run/)],
        },
      });
    },
  );
});
