import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { decisionLogPath } from "../../src/memory/persistence.js";
import { childEnv, ROOT, perTest } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const BOOK = "Plan and book a 2-day trip from Paris to Rome for 1 person";
const LONG = 60_000;

const { freshDb } = perTest("candor-ask-");

/** The human decisions the graph applied to a thread, from the decision log beside the database. */
function decisionsApplied(db: string, threadId: string): string[] {
  return readFileSync(decisionLogPath(db), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { operation: string; threadId?: string; decision?: string })
    .filter((l) => l.operation === "human_decision" && l.threadId === threadId)
    .map((l) => l.decision ?? "?");
}

/**
 * A person at a terminal, scripted: each prompt must match the next expected pattern and gets its answer (null is
 * Ctrl-D). A prompt the script did not expect throws, and `done` says whether every answer was used.
 */
function scriptedPerson(script: [RegExp, string | null][]) {
  const prompts: string[] = [];
  let next = 0;
  return {
    prompts,
    done: () => next === script.length,
    ask: async (prompt: string): Promise<string | null> => {
      prompts.push(prompt);
      const step = script[next++];
      if (!step) throw new Error(`unexpected prompt after the script ended: ${prompt}`);
      const [expected, answer] = step;
      if (!expected.test(prompt)) throw new Error(`prompt ${JSON.stringify(prompt)} does not match ${expected}`);
      return answer;
    },
  };
}

/** Runs the CLI in this process, as main.ts does at a terminal, with `ask` answering from the script. */
async function runAsked(args: string[], person: ReturnType<typeof scriptedPerson>) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    args,
    {
      out: (t) => void (stdout += `${t}\n`),
      err: (t) => void (stderr += `${t}\n`),
      invokedAs: "candor",
      ask: person.ask,
    },
    () => ({}),
  );
  return { code, stdout, stderr };
}

describe("candor run asks at a terminal", () => {
  it(
    "shows the plan for approval with each step's worker, tools and parameters, and runs it once approved",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const person = scriptedPerson([[/^Decision \[a\/r\/e\/p\]: $/, "a"]]);
      const r = await runAsked(["run", TRIP, "--db", db, "--thread", "ok", "--approval-threshold", "0.99"], person);
      expect(r.code, r.stderr).toBe(0);
      expect(person.done()).toBe(true);
      expect(r.stderr).toContain("Waiting for you: approve the plan before it runs.");
      expect(r.stderr).toMatch(
        / 1\. flight +Find flights Paris → Rome for 1\n +worker flight_agent · tools search_flights · params \{"origin":"Paris"/,
      );
      expect(r.stderr).toContain("Why the confidence is what it is:");
      expect(r.stderr).toMatch(/ a {2}approve +run the plan as it is/);
      expect(r.stdout).toContain("Status: completed");
      expect(r.stdout).not.toContain("Continue with one of:");
      expect(decisionsApplied(db, "ok")).toEqual(["approve"]);
    },
  );

  it(
    "asks again after a malformed answer, bad edits and edits the graph refuses (with its reason), then runs the adjusted plan",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const person = scriptedPerson([
        [/^Decision/, "maybe"],
        [/^Decision/, "e"],
        [/^Edits: $/, "[{taskId: hotel}"],
        // Makes a cycle: only the graph's validation sees it, and the thread keeps waiting with the reason.
        [/^Edits: $/, `[{"taskId":"flight","field":"dependsOn","newValue":["itinerary"]}]`],
        [/^Decision/, "adjust"],
        [/^Edits: $/, `[{"taskId":"hotel","field":"params.nights","newValue":3}]`],
      ]);
      const r = await runAsked(["run", TRIP, "--db", db, "--thread", "adj", "--approval-threshold", "0.99"], person);
      expect(r.code, r.stderr).toBe(0);
      expect(person.done()).toBe(true);
      expect(r.stderr).toContain(`✗ "maybe" is not one of the choices. Type one of a, r, e`);
      expect(r.stderr).toContain("✗ The edits are not valid JSON");
      expect(r.stderr).toMatch(/! Your last answer was not applied: .*cycle/i);
      expect(r.stdout).toMatch(/× 3 night\(s\)/);
      expect(decisionsApplied(db, "adj")).toEqual(["adjust"]);
    },
  );

  it(
    "a denied tool call, with the reason asked for, fails the step as policy-blocked and the run recovers without it",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const person = scriptedPerson([
        [/^Decision \[a\/d\]: $/, "deny"],
        [/^Why\?/, "not now"],
      ]);
      const r = await runAsked(["run", BOOK, "--db", db, "--thread", "book"], person);
      expect(person.done()).toBe(true);
      expect(r.stderr).toContain("Waiting for you: approve a tool call before it runs.");
      expect(r.stderr).toMatch(/Call: book_trip\(\{.*\}\)/);
      expect(r.stderr).toContain("→ deny (comment: not now)");
      expect(r.stderr).toMatch(/Recovery for booking: .*\n.*\n.*A human denied book_trip.*not now.*policy blocked it/);
      expect(r.code, r.stderr).toBe(4);
      expect(decisionsApplied(db, "book")).toEqual(["deny"]);
    },
  );

  it(
    "an escalation shows the failures; a retry asks for new parameters and asks again when the graph refuses them",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const person = scriptedPerson([
        [/^Decision \[s\/t\/p\/x\]: $/, "t"],
        [
          /^New parameters for budget_status \(now \{.*"budget":2000.*\}\) as key=value, blank for none: $/,
          "budget=-5",
        ],
        [/^Decision/, "retry"],
        [/^New parameters/, "budget=5000"],
      ]);
      // Over its $2000 budget, and a revision cap of 0 escalates at once instead of adjusting prices.
      const r = await runAsked(
        [
          "run",
          "Plan a 3-day trip from Madrid to Paris for 2 people under $2000",
          "--db",
          db,
          "--thread",
          "esc",
          "--max-revisions",
          "0",
        ],
        person,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(person.done()).toBe(true);
      expect(r.stderr).toContain("Waiting for you: the run used all its revisions.");
      expect(r.stderr).toMatch(/Errors:\n {4}- .+\n {2}Suggested:/);
      expect(r.stderr).toMatch(
        /! Your last answer was not applied: check_budget would refuse these parameters \(budget: /,
      );
      expect(r.stderr).toContain(`→ retry (parameters {"budget":5000})`);
      expect(decisionsApplied(db, "esc")).toEqual(["retry"]);
    },
  );

  it(
    "at end of input (Ctrl-D) stops asking, prints the commands to continue as without a terminal, and exits 3",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const person = scriptedPerson([[/^Decision/, null]]);
      const r = await runAsked(["run", TRIP, "--db", db, "--thread", "eof", "--approval-threshold", "0.99"], person);
      expect(r.code, r.stderr).toBe(3);
      expect(person.done()).toBe(true);
      expect(r.stderr).toContain("No answer (end of input): the thread keeps waiting.");
      expect(r.stdout).toContain("Waiting for a human: approve the plan before it runs.");
      expect(r.stdout).toContain(`candor resume eof --approve --db ${db}`);
      expect(decisionsApplied(db, "eof")).toEqual([]);
    },
  );

  it("--no-input never asks, even with a terminal", { timeout: LONG }, async () => {
    const db = freshDb();
    const person = scriptedPerson([]);
    const r = await runAsked(
      ["run", TRIP, "--db", db, "--thread", "quiet", "--approval-threshold", "0.99", "--no-input"],
      person,
    );
    expect(r.code, r.stderr).toBe(3);
    expect(person.prompts).toEqual([]);
    expect(r.stdout).toContain(`candor resume quiet --approve --db ${db}`);
  });
});

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

describe("candor run under a real terminal", () => {
  it.skipIf(!hasScript)(
    "asks for the decision on the terminal and finishes once it is answered (util-linux `script` gives it a pseudo-terminal; skipped where `script` is missing)",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const command = `node --import tsx src/cli/main.ts run '${TRIP}' --db ${db} --thread tty --approval-threshold 0.99`;
      const child = spawn("script", ["-qfec", command, "/dev/null"], {
        cwd: ROOT,
        env: childEnv({ TERM: "dumb" }),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let seen = "";
      let answered = false;
      child.stdout.on("data", (d: Buffer) => {
        seen += d.toString();
        if (!answered && /Decision \[a\/r\/e\/p\]: $/.test(seen)) {
          answered = true;
          child.stdin.write("approve\n");
        }
      });
      const code = await new Promise<number | null>((resolve, reject) => {
        child.on("error", reject);
        child.on("close", resolve);
      });
      child.stdin.end();
      expect(answered, seen).toBe(true);
      expect(code, seen).toBe(0);
      expect(seen).toContain("Waiting for you: approve the plan before it runs.");
      expect(seen).toContain("Status: completed");
      expect(decisionsApplied(db, "tty")).toEqual(["approve"]);
    },
  );
});
