/**
 * The CLI bad-input corpus (issue 8, "the tools that find the next ones"): over 100 bad flags, values, paths,
 * JSON, decisions and unknown threads. Every case must end within its time limit, with a documented exit code
 * (0/2/3/4, docs/cli.md, "Exit codes") and the one it is expected to have, with no stack trace or internal error, a
 * refusal in plain words (not a schema dump), and a waiting thread still waiting after a refused answer.
 *
 * Cases run through the CLI's own program in this process (runCli: the code `candor` runs, minus Node's start-up)
 * on a fresh copy of a database holding four threads; a few run in a child process, where only a process shows
 * the behaviour (a hang that blocks the event loop, the real entry point).
 *
 * `KNOWN` lists cases that fail today because of defects other branches are fixing (issue 8 items 1-11): a known
 * case may still fail without failing the test, and says so when it passes. Empty it once the fixes are merged.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { CLI_ENTRY } from "../../bench/chaos/driver.js";
import { inspectThread } from "../../bench/chaos/inspect.js";

/** Defects other branches are fixing; a case listed here may still fail. Empty it after merging their fixes. */
// Empty: every case that waited for a fix (issue 8 items 2, 6, 7, 8, 9) passes now, so each is a regression test.
const KNOWN: Record<string, string> = {};

/** Placeholders a case's argv may use; filled in per case. */
interface Places {
  DB: string;
  DIR: string;
  DONE: string;
  WAIT: string;
  TOOL: string;
  ESC: string;
  CP: string;
}

interface Case {
  name: string;
  argv: (p: Places) => string[];
  /** The exit codes that are right for it. */
  exit: number[];
  /** A thread that must still wait for the same kind of decision afterwards. */
  stillWaiting?: keyof Places;
  /** Run in a child process (with this time limit), not in this process. */
  spawn?: boolean;
  /** Environment for the command (in-process: what readEnv sees). */
  env?: Record<string, string>;
  /** Prepares the case's copy of the directory before it runs. */
  prepare?: (p: Places) => void;
  /** Most characters stdout and stderr may hold together: a huge value must not be printed back. */
  maxOutput?: number;
  /** The child's time limit, when it is not CHILD_LIMIT_MS. */
  limitMs?: number;
}

/** A named pipe at `file`: reading it without O_NONBLOCK waits forever for a writer that never comes. */
function fifo(file: string): void {
  const made = spawnSync("mkfifo", [file]);
  if (made.status !== 0) throw new Error(`mkfifo ${file}: ${made.stderr.toString()}`);
}

/** JSON nested `depth` levels deep, built without recursion. */
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const HUGE = 10_000_000;

const USAGE = [2];
const adjust = (taskId: string, field: string, newValue: unknown) => JSON.stringify([{ taskId, field, newValue }]);
const run =
  (...flags: string[]) =>
  (p: Places) => ["run", "Plan a 2-day trip from Paris to Rome", "--db", p.DB, "--no-input", ...flags];
const resumeWait =
  (...flags: string[]) =>
  (p: Places) => ["resume", p.WAIT, "--db", p.DB, ...flags];

const CASES: Case[] = [
  // Commands and help
  { name: "unknown command", argv: () => ["frobnicate"], exit: USAGE },
  { name: "unknown command that looks like a request", argv: () => ["plan", "a", "trip"], exit: USAGE },
  { name: "bare unknown flag", argv: (p) => ["--bogus", "--db", p.DB], exit: USAGE },
  { name: "help for an unknown command", argv: () => ["help", "nosuch"], exit: [0, 2] },
  { name: "--help", argv: () => ["--help"], exit: [0] },
  { name: "--version", argv: () => ["--version"], exit: [0] },
  { name: "run --help", argv: () => ["run", "--help"], exit: [0] },
  { name: "-x single-dash junk", argv: () => ["run", "x", "-x"], exit: USAGE },
  // run: the request
  { name: "run with no request", argv: (p) => ["run", "--db", p.DB], exit: USAGE },
  { name: "run with an empty request", argv: (p) => ["run", "", "--db", p.DB], exit: USAGE },
  { name: "run with a blank request", argv: (p) => ["run", "   \t ", "--db", p.DB], exit: USAGE },
  {
    name: "run with a 100k-character request",
    argv: (p) => ["run", `plan ${"very ".repeat(20_000)}long trip to Rome`, "--db", p.DB, "--no-input"],
    exit: [0, 2, 3, 4],
  },
  {
    name: "run with control characters",
    argv: (p) => ["run", "plan\u0000 a\u001b[31m trip\u0007 to Rome", "--db", p.DB, "--no-input"],
    exit: [0, 2, 3, 4],
  },
  { name: "run with only emoji", argv: (p) => ["run", "✈️🏨", "--db", p.DB, "--no-input"], exit: [0, 2, 3, 4] },
  // run: numbers
  { name: "run --max-revisions -1", argv: run("--max-revisions", "-1"), exit: USAGE },
  { name: "run --max-revisions abc", argv: run("--max-revisions", "abc"), exit: USAGE },
  { name: "run --max-revisions 1.5", argv: run("--max-revisions", "1.5"), exit: USAGE },
  { name: "run --max-revisions 1e9", argv: run("--max-revisions", "1e9"), exit: USAGE },
  { name: 'run --max-revisions ""', argv: run("--max-revisions", ""), exit: USAGE },
  {
    name: "run --max-revisions with no value",
    argv: (p) => ["run", "x", "--db", p.DB, "--max-revisions"],
    exit: USAGE,
  },
  { name: 'run --approval-threshold ""', argv: run("--approval-threshold", ""), exit: USAGE },
  { name: "run --approval-threshold 2", argv: run("--approval-threshold", "2"), exit: USAGE },
  { name: "run --approval-threshold -0.1", argv: run("--approval-threshold", "-0.1"), exit: USAGE },
  { name: "run --approval-threshold abc", argv: run("--approval-threshold", "abc"), exit: USAGE },
  { name: "run --approval-threshold NaN", argv: run("--approval-threshold", "NaN"), exit: USAGE },
  { name: "run --approval-threshold 50%", argv: run("--approval-threshold", "50%"), exit: USAGE },
  { name: "run --abort-below 1.5", argv: run("--abort-below", "1.5"), exit: USAGE },
  { name: "run --abort-below Infinity", argv: run("--abort-below", "Infinity"), exit: USAGE },
  { name: "run --abort-below 0x1", argv: run("--abort-below", "0x1"), exit: [0, 2, 3, 4] },
  // run: faults
  { name: "run --fault ,,,", argv: run("--fault", ",,,"), exit: USAGE },
  {
    name: "run --fault with a count past 2^53",
    argv: run("--fault", "search_flights=timeout*99999999999999999999"),
    exit: USAGE,
  },
  { name: "run --fault on an unknown tool", argv: run("--fault", "nosuchtool=timeout"), exit: USAGE },
  { name: "run --fault of an unknown kind", argv: run("--fault", "search_flights=explode"), exit: USAGE },
  { name: "run --fault without a kind", argv: run("--fault", "search_flights"), exit: USAGE },
  { name: "run --fault *0", argv: run("--fault", "search_flights=timeout*0"), exit: USAGE },
  { name: "run --fault *-1", argv: run("--fault", "search_flights=timeout*-1"), exit: USAGE },
  { name: "run --fault without a tool", argv: run("--fault", "=timeout"), exit: USAGE },
  { name: "run --fault with two equals", argv: run("--fault", "search_flights=timeout=error"), exit: USAGE },
  { name: "run --fault with a good and a bad spec", argv: run("--fault", "search_flights=timeout,bogus"), exit: USAGE },
  // run: reasoner and model
  { name: "run --reasoner magic", argv: run("--reasoner", "magic"), exit: USAGE },
  { name: "run --reasoner llm without a key", argv: run("--reasoner", "llm"), exit: USAGE },
  { name: "run --model without a key", argv: run("--model", "gpt-4o"), exit: USAGE },
  { name: "run --reasoner rules --model x", argv: run("--reasoner", "rules", "--model", "x"), exit: USAGE },
  { name: 'run --model ""', argv: run("--model", ""), exit: USAGE },
  { name: "run with an invalid OPENAI_BASE_URL", argv: run(), exit: USAGE, env: { OPENAI_BASE_URL: "not a url" } },
  { name: "run with an invalid CANDOR_LOG_LEVEL", argv: run(), exit: USAGE, env: { CANDOR_LOG_LEVEL: "loud" } },
  // run: thread and user
  { name: "run --thread with a space", argv: run("--thread", "a b"), exit: USAGE },
  { name: 'run --thread ""', argv: run("--thread", ""), exit: USAGE },
  { name: "run --thread of 65 characters", argv: run("--thread", "t".repeat(65)), exit: USAGE },
  { name: "run --thread ../etc", argv: run("--thread", "../etc"), exit: USAGE },
  { name: "run --thread with unicode", argv: run("--thread", "thréad"), exit: USAGE },
  { name: "run --thread of an existing thread", argv: (p) => run("--thread", p.DONE)(p), exit: USAGE },
  { name: "run --user with a space", argv: run("--user", "bad user"), exit: USAGE },
  { name: 'run --user ""', argv: run("--user", ""), exit: USAGE },
  { name: "run --replan (a resume flag)", argv: run("--replan", "x"), exit: USAGE },
  {
    name: "resume --replan with no value swallows the next flag",
    argv: (p) => ["resume", p.WAIT, "--db", p.DB, "--replan", "--json"],
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  // run: databases
  { name: 'run --db ""', argv: () => ["run", "x", "--db", ""], exit: USAGE },
  { name: "run --db /", argv: () => ["run", "x", "--db", "/", "--no-input"], exit: USAGE },
  { name: "run --db an existing directory", argv: (p) => ["run", "x", "--db", p.DIR, "--no-input"], exit: USAGE },
  { name: "run --db /dev/null", argv: () => ["run", "x", "--db", "/dev/null", "--no-input"], exit: USAGE },
  {
    name: "run --db a text file",
    argv: (p) => ["run", "x", "--db", path.join(p.DIR, "notes.txt"), "--no-input"],
    exit: USAGE,
    prepare: (p) => writeFileSync(path.join(p.DIR, "notes.txt"), "not a database\n"),
  },
  {
    name: "run --db a corrupt SQLite file",
    argv: (p) => ["run", "x", "--db", path.join(p.DIR, "corrupt.db"), "--no-input"],
    exit: USAGE,
    prepare: (p) =>
      writeFileSync(
        path.join(p.DIR, "corrupt.db"),
        Buffer.concat([Buffer.from("SQLite format 3\u0000"), Buffer.alloc(4096, 0xab)]),
      ),
  },
  {
    name: "run --db through a file",
    argv: (p) => ["run", "x", "--db", path.join(p.DIR, "notes.txt", "sub", "x.db"), "--no-input"],
    exit: USAGE,
    prepare: (p) => writeFileSync(path.join(p.DIR, "notes.txt"), "a file\n"),
  },
  {
    name: "run --db under /proc/self",
    argv: () => ["run", "x", "--db", "/proc/self/nonexist/x.db", "--no-input"],
    exit: USAGE,
    spawn: true,
  },
  {
    name: "run --db under /proc/<name>",
    argv: () => ["run", "x", "--db", "/proc/foo/x.db", "--no-input"],
    exit: USAGE,
    spawn: true,
  },
  { name: "run --json with a bad flag", argv: run("--json", "--max-revisions", "x"), exit: USAGE },
  // resume: what to resume
  { name: "resume with no thread", argv: (p) => ["resume", "--db", p.DB], exit: USAGE },
  { name: "resume an unknown thread", argv: (p) => ["resume", "nosuch", "--db", p.DB, "--approve"], exit: USAGE },
  {
    name: "resume in a database that does not exist",
    argv: (p) => ["resume", "nosuch", "--db", path.join(p.DIR, "missing.db")],
    exit: USAGE,
  },
  { name: "resume a malformed thread id", argv: (p) => ["resume", "bad id", "--db", p.DB], exit: USAGE },
  { name: "resume a thread id with a slash", argv: (p) => ["resume", "../x", "--db", p.DB], exit: USAGE },
  {
    name: "resume a finished thread with a decision",
    argv: (p) => ["resume", p.DONE, "--db", p.DB, "--approve"],
    exit: USAGE,
  },
  { name: "resume a finished thread with no decision", argv: (p) => ["resume", p.DONE, "--db", p.DB], exit: [0] },
  { name: "resume waiting thread with no decision", argv: resumeWait(), exit: [3], stillWaiting: "WAIT" },
  // resume: decisions that do not fit
  { name: "resume --deny at a plan approval", argv: resumeWait("--deny"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --skip at a plan approval", argv: resumeWait("--skip"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --retry at a plan approval", argv: resumeWait("--retry"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --abort at a plan approval", argv: resumeWait("--abort"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume two decisions", argv: resumeWait("--approve", "--reject"), exit: USAGE, stillWaiting: "WAIT" },
  {
    name: "resume three decisions",
    argv: resumeWait("--approve", "--reject", "--skip"),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  { name: "resume --comment alone", argv: resumeWait("--comment", "why"), exit: USAGE, stillWaiting: "WAIT" },
  {
    name: "resume --set without --retry",
    argv: resumeWait("--approve", "--set", "a=1"),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  {
    name: "resume --retry --set not key=value",
    argv: resumeWait("--retry", "--set", "noequals"),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  { name: 'resume --replan ""', argv: resumeWait("--replan", ""), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --replan of spaces", argv: resumeWait("--replan", "   "), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --bogus", argv: resumeWait("--bogus"), exit: USAGE, stillWaiting: "WAIT" },
  {
    name: "resume --reject at a tool approval",
    argv: (p) => ["resume", p.TOOL, "--db", p.DB, "--reject"],
    exit: USAGE,
    stillWaiting: "TOOL",
  },
  {
    name: "resume --adjust at a tool approval",
    argv: (p) => ["resume", p.TOOL, "--db", p.DB, "--adjust", adjust("flight", "params.travellers", 2)],
    exit: USAGE,
    stillWaiting: "TOOL",
  },
  {
    name: "resume --approve at an escalation",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--approve"],
    exit: USAGE,
    stillWaiting: "ESC",
  },
  {
    name: "resume --deny at an escalation",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--deny"],
    exit: USAGE,
    stillWaiting: "ESC",
  },
  // resume: --adjust JSON
  { name: "resume --adjust not JSON", argv: resumeWait("--adjust", "{not json"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --adjust []", argv: resumeWait("--adjust", "[]"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --adjust null", argv: resumeWait("--adjust", "null"), exit: USAGE, stillWaiting: "WAIT" },
  { name: "resume --adjust a number", argv: resumeWait("--adjust", "42"), exit: USAGE, stillWaiting: "WAIT" },
  {
    name: "resume --adjust without newValue",
    argv: resumeWait("--adjust", '[{"taskId":"hotel","field":"params.nights"}]'),
    exit: [2, 3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust with a numeric taskId",
    argv: resumeWait("--adjust", '[{"taskId":1,"field":"params.nights","newValue":3}]'),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust @ a missing file",
    argv: resumeWait("--adjust", "@/nonexistent/adjust.json"),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust @ a directory",
    argv: (p) => resumeWait("--adjust", `@${p.DIR}`)(p),
    exit: USAGE,
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust @ a file of prose",
    argv: (p) => resumeWait("--adjust", `@${path.join(p.DIR, "prose.txt")}`)(p),
    exit: USAGE,
    stillWaiting: "WAIT",
    prepare: (p) => writeFileSync(path.join(p.DIR, "prose.txt"), "make it cheaper please"),
  },
  // resume: --adjust edits the graph must refuse
  {
    name: "resume --adjust an unknown step",
    argv: resumeWait("--adjust", adjust("nosuch", "params.nights", 3)),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust a field nobody may change",
    argv: resumeWait("--adjust", adjust("hotel", "status", "done")),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust __proto__",
    argv: resumeWait("--adjust", adjust("hotel", "__proto__", { polluted: true })),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust a dependency cycle",
    argv: resumeWait("--adjust", adjust("flight", "dependsOn", ["flight"])),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust a dependency on a missing step",
    argv: resumeWait("--adjust", adjust("flight", "dependsOn", ["nowhere"])),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust nights -5",
    argv: resumeWait("--adjust", adjust("hotel", "params.nights", -5)),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: 'resume --adjust nights "three"',
    argv: resumeWait("--adjust", adjust("hotel", "params.nights", "three")),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust travellers 1e9",
    argv: resumeWait("--adjust", adjust("flight", "params.travellers", 1e9)),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust an ungranted tool",
    argv: resumeWait("--adjust", adjust("flight", "tools", ["book_trip"])),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust an unknown worker",
    argv: resumeWait("--adjust", adjust("flight", "workerType", "root")),
    exit: [3],
    stillWaiting: "WAIT",
  },
  {
    name: "resume --adjust a negative timeout",
    argv: resumeWait("--adjust", adjust("flight", "timeoutMs", -1)),
    exit: [3],
    stillWaiting: "WAIT",
  },
  // resume: --retry --set the graph must refuse
  {
    name: "resume --retry --set an unknown parameter",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry", "--set", "nosuch=1"],
    exit: [3],
    stillWaiting: "ESC",
  },
  {
    name: "resume --retry --set a negative budget",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry", "--set", "budget=-5"],
    exit: [3],
    stillWaiting: "ESC",
  },
  {
    name: "resume --retry --set budget to text",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry", "--set", "budget=lots"],
    exit: [3],
    stillWaiting: "ESC",
  },
  // Refused up front as bad usage (exit 2) with the command that can work: --retry --set budget=<the floors' sum>.
  {
    name: "resume plain --retry of an infeasible limit",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry"],
    exit: USAGE,
    stillWaiting: "ESC",
  },
  // threads, history, report
  { name: "threads --limit 0", argv: (p) => ["threads", "--db", p.DB, "--limit", "0"], exit: USAGE },
  { name: "threads --limit abc", argv: (p) => ["threads", "--db", p.DB, "--limit", "abc"], exit: USAGE },
  { name: "threads --limit -1", argv: (p) => ["threads", "--db", p.DB, "--limit", "-1"], exit: USAGE },
  {
    name: "threads in a database that does not exist",
    argv: (p) => ["threads", "--db", path.join(p.DIR, "missing.db")],
    exit: [0],
  },
  { name: "threads --bogus", argv: (p) => ["threads", "--db", p.DB, "--bogus"], exit: USAGE },
  { name: "history of an unknown thread", argv: (p) => ["history", "nosuch", "--db", p.DB], exit: USAGE },
  { name: "history with no thread", argv: (p) => ["history", "--db", p.DB], exit: USAGE },
  { name: "history --limit 0", argv: (p) => ["history", p.DONE, "--db", p.DB, "--limit", "0"], exit: USAGE },
  { name: "history --limit 1.5", argv: (p) => ["history", p.DONE, "--db", p.DB, "--limit", "1.5"], exit: USAGE },
  { name: "report of an unknown thread", argv: (p) => ["report", "nosuch", "--db", p.DB], exit: USAGE },
  { name: "report with no thread", argv: (p) => ["report", "--db", p.DB], exit: USAGE },
  { name: "report of a waiting thread", argv: (p) => ["report", p.WAIT, "--db", p.DB], exit: [3] },
  { name: "report of a malformed id", argv: (p) => ["report", "a/b", "--db", p.DB], exit: USAGE },
  // logs
  { name: "logs --thread unknown", argv: (p) => ["logs", "--thread", "nosuch", "--db", p.DB], exit: USAGE },
  { name: "logs --operation bogus", argv: (p) => ["logs", "--operation", "bogus", "--db", p.DB], exit: USAGE },
  { name: "logs --thread with no value", argv: (p) => ["logs", "--db", p.DB, "--thread"], exit: USAGE },
  {
    name: "logs with no database",
    argv: (p) => ["logs", "--db", path.join(p.DIR, "nowhere", "missing.db")],
    exit: [0],
  },
  {
    name: "logs with decisions.log a directory",
    argv: (p) => ["logs", "--db", path.join(p.DIR, "logdir", "candor.db")],
    exit: USAGE,
    // Each database has its own log beside it (issue 8 item 5): <db>.decisions.log.
    prepare: (p) => mkdirSync(path.join(p.DIR, "logdir", "candor.db.decisions.log"), { recursive: true }),
  },
  {
    name: "logs with a corrupt decisions.log",
    argv: (p) => ["logs", "--db", path.join(p.DIR, "junk", "candor.db")],
    exit: [0],
    prepare: (p) => (
      mkdirSync(path.join(p.DIR, "junk")),
      writeFileSync(
        path.join(p.DIR, "junk", "candor.db.decisions.log"),
        '{"operation":\n\u0000\u0001garbage\n[1,2]\n{"operation":5}\n',
      )
    ),
  },
  // replay and fork
  { name: "replay without --from", argv: (p) => ["replay", p.DONE, "--db", p.DB], exit: USAGE },
  {
    name: "replay an unknown checkpoint",
    argv: (p) => ["replay", p.DONE, "--db", p.DB, "--from", "nosuch"],
    exit: USAGE,
  },
  {
    name: "replay with --set",
    argv: (p) => ["replay", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "a=1"],
    exit: USAGE,
  },
  { name: "replay an unknown thread", argv: (p) => ["replay", "nosuch", "--db", p.DB, "--from", "x"], exit: USAGE },
  { name: "fork without --set", argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP], exit: USAGE },
  {
    name: "fork --set not key=value",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "noequals"],
    exit: USAGE,
  },
  {
    name: "fork --set with an empty path part",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "settings..x=1"],
    exit: USAGE,
  },
  {
    name: "fork --set a path that does not exist",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "nosuch.path=1"],
    exit: USAGE,
  },
  {
    name: "fork --set __proto__.polluted",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "__proto__.polluted=1"],
    exit: USAGE,
  },
  {
    name: "fork --set a wrong type",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "settings.maxRevisions=lots"],
    exit: USAGE,
  },
  {
    name: "fork --set a negative night count",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", "plan.steps.1.params.nights=-3"],
    exit: USAGE,
  },
  {
    name: "fork --as-node an unknown node",
    argv: (p) => [
      "fork",
      p.DONE,
      "--db",
      p.DB,
      "--from",
      p.CP,
      "--as-node",
      "nosuch",
      "--set",
      "settings.maxRevisions=1",
    ],
    exit: USAGE,
  },
  {
    name: "fork an unknown checkpoint",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", "nosuch", "--set", "settings.maxRevisions=1"],
    exit: USAGE,
  },
  // Hostile values and files (issue 24): refused with the limit named, never a stack overflow, an echo or a hang.
  {
    name: "resume --adjust nested 5,000 levels deep",
    argv: resumeWait("--adjust", `[{"taskId":"hotel","field":"params.nights","newValue":${nested(5_000)}}]`),
    exit: USAGE,
    stillWaiting: "WAIT",
    maxOutput: 4_000,
  },
  {
    name: "resume --adjust of 10 MB",
    argv: resumeWait("--adjust", adjust("hotel", "params.note", "x".repeat(HUGE))),
    exit: USAGE,
    stillWaiting: "WAIT",
    maxOutput: 4_000,
  },
  {
    name: "resume --adjust @ a 10 MB file",
    prepare: (p) => writeFileSync(path.join(p.DIR, "huge.json"), adjust("hotel", "params.note", "x".repeat(HUGE))),
    argv: (p) => resumeWait("--adjust", `@${path.join(p.DIR, "huge.json")}`)(p),
    exit: USAGE,
    stillWaiting: "WAIT",
    maxOutput: 4_000,
  },
  {
    name: "resume --retry --set a value of 10 MB",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry", "--set", `maxPrice=${"x".repeat(HUGE)}`],
    exit: USAGE,
    stillWaiting: "ESC",
    maxOutput: 4_000,
  },
  {
    name: "resume --retry --set 10 MB that is not key=value",
    argv: (p) => ["resume", p.ESC, "--db", p.DB, "--retry", "--set", "x".repeat(HUGE)],
    exit: USAGE,
    stillWaiting: "ESC",
    maxOutput: 4_000,
  },
  {
    name: "fork --set a value nested 5,000 levels deep",
    argv: (p) => ["fork", p.DONE, "--db", p.DB, "--from", p.CP, "--set", `request.constraints=${nested(5_000)}`],
    exit: USAGE,
    maxOutput: 4_000,
  },
  {
    name: "process: resume --adjust @ a FIFO",
    prepare: (p) => fifo(path.join(p.DIR, "adjust.fifo")),
    argv: (p) => ["resume", p.WAIT, "--db", p.DB, "--adjust", `@${path.join(p.DIR, "adjust.fifo")}`],
    exit: USAGE,
    stillWaiting: "WAIT",
    spawn: true,
    limitMs: 20_000,
  },
  {
    name: "process: run --mcp a FIFO",
    prepare: (p) => fifo(path.join(p.DIR, "mcp.fifo")),
    argv: (p) => [...run("--mcp", path.join(p.DIR, "mcp.fifo"))(p)],
    exit: USAGE,
    spawn: true,
    limitMs: 20_000,
  },
  {
    name: "process: run with a FIFO named .env in the working directory",
    prepare: (p) => fifo(path.join(p.DIR, ".env")),
    argv: run(),
    exit: USAGE,
    spawn: true,
    limitMs: 20_000,
  },
  {
    name: "process: run with CANDOR_PRICES_FILE a FIFO",
    prepare: (p) => fifo(path.join(p.DIR, "prices.fifo")),
    argv: (p) => [...run("--reasoner", "llm")(p)],
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", CANDOR_PRICES_FILE: "prices.fifo" },
    exit: USAGE,
    spawn: true,
    limitMs: 20_000,
  },
  {
    name: "run with escape sequences in the request",
    argv: (p) => [
      "run",
      "Plan a 2-day trip from Paris to Rome\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u009b31m for 1 person",
      "--db",
      p.DB,
      "--no-input",
    ],
    exit: [0, 2, 3, 4],
  },
  {
    name: "process: run over a file whose text holds escape sequences",
    prepare: (p) =>
      writeFileSync(
        path.join(p.DIR, "notes.md"),
        "Meeting notes\u001b]0;pwned\u0007 \u001b]52;c;ZXZpbA==\u0007 hidden\u001b[8m text\u001b[0m \u202eevil\n",
      ),
    argv: (p) => ["run", "summarize notes.md", "--db", p.DB, "--no-input"],
    exit: [0, 4],
    spawn: true,
    limitMs: 20_000,
  },
  // The real entry point, in a process of its own
  { name: "process: unknown flag", argv: () => ["run", "x", "--bogus"], exit: USAGE, spawn: true },
  { name: "process: --version", argv: () => ["--version"], exit: [0], spawn: true },
  {
    name: "process: resume an unknown thread",
    argv: (p) => ["resume", "nosuch", "--db", p.DB],
    exit: USAGE,
    spawn: true,
  },
];

/** A Node stack frame: never shown for bad input. */
const STACK = /^\s+at (?:.+ \()?(?:file:\/\/|node:|\/)[^\n]*:\d+:\d+\)?$/m;
/** A schema or library error dumped instead of a sentence. */
const DUMP = /"(?:code|path|expected|received)":|^\s*\[\s*\{/m;

const IN_PROCESS_LIMIT_MS = 30_000;
/** Issue 8 item 2: a path a database cannot live at must end in exit 2 within a second; allow for start-up. */
const CHILD_LIMIT_MS = 5_000;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

async function inProcess(argv: string[], env: Record<string, string> | undefined): Promise<Outcome> {
  let stdout = "";
  let stderr = "";
  let timer: NodeJS.Timeout | undefined;
  const abort = new AbortController();
  const limit = new Promise<"late">((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve("late");
    }, IN_PROCESS_LIMIT_MS);
  });
  const code = await Promise.race([
    runCli(
      argv,
      {
        out: (t) => void (stdout += `${t}\n`),
        err: (t) => void (stderr += `${t}\n`),
        invokedAs: "candor",
        signal: abort.signal,
      },
      () => readEnv(env ?? {}),
    ),
    limit,
  ]);
  clearTimeout(timer);
  return code === "late" ? { code: null, stdout, stderr, timedOut: true } : { code, stdout, stderr, timedOut: false };
}

function inChild(
  argv: string[],
  cwd: string,
  extra: Record<string, string> = {},
  limitMs = CHILD_LIMIT_MS,
): Promise<Outcome> {
  const env = { ...process.env };
  for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CANDOR_DB", "CANDOR_MODEL", "CANDOR_LOG_LEVEL"])
    delete env[key];
  Object.assign(env, extra);
  const child = spawn(process.execPath, [CLI_ENTRY, ...argv], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let timedOut = false;
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, limitMs);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? null : code, stdout, stderr, timedOut });
    });
  });
}

/** What is wrong with a case's outcome, one line each; empty when it behaved. */
function problems(c: Case, o: Outcome, waitingBefore: string | null, waitingAfter: string | null): string[] {
  const out: string[] = [];
  const both = `${o.stdout}\n${o.stderr}`;
  if (o.timedOut) return [`did not end within ${c.spawn ? (c.limitMs ?? CHILD_LIMIT_MS) : IN_PROCESS_LIMIT_MS} ms`];
  if (STACK.test(both)) out.push("printed a stack trace");
  if (/Internal error/.test(both) || o.code === 1)
    out.push(`internal error (exit ${o.code}): ${o.stderr.trim().split("\n")[0]}`);
  if (o.code === null || ![0, 2, 3, 4].includes(o.code)) out.push(`exit ${o.code} is not a documented exit code`);
  else if (!c.exit.includes(o.code))
    out.push(`exit ${o.code}, expected ${c.exit.join(" or ")}: ${o.stderr.trim().split("\n").slice(-1)[0] ?? ""}`);
  if (o.code === 2 && o.stderr.trim() === "") out.push("exit 2 with nothing on stderr");
  if (o.code === 2 && DUMP.test(o.stderr))
    out.push(`a raw dump instead of a sentence: ${o.stderr.trim().slice(0, 160)}`);
  if (c.maxOutput !== undefined && both.length > c.maxOutput)
    out.push(`printed ${both.length} characters (at most ${c.maxOutput}): a value was echoed back`);
  // Whatever the input held, the terminal gets no control character it would act on (the CLI's own text has none).
  // eslint-disable-next-line no-control-regex -- the characters looked for
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(both)) out.push("printed a raw control character");
  if (c.stillWaiting && waitingBefore !== waitingAfter)
    out.push(`the thread waited for ${waitingBefore} and now ${waitingAfter ?? "waits for nothing"}`);
  return out;
}

describe("the CLI bad-input corpus", () => {
  let root: string;
  let template: string;
  const base = { DONE: "done", WAIT: "wait", TOOL: "tool", ESC: "esc" };
  let CP = "";

  /** Four threads in one database: finished, waiting for plan approval, for a tool approval, at an escalation. */
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "candor-bad-input-"));
    template = path.join(root, "template");
    mkdirSync(template);
    const db = path.join(template, "candor.db");
    const setup: [string, string[], number][] = [
      [base.DONE, ["Plan a 2-day trip from Paris to Rome for 1 person"], 0],
      [base.WAIT, ["Plan a 3-day trip from Madrid to Paris for 2 people", "--approval-threshold", "0.99"], 3],
      [base.TOOL, ["Plan and book a 2-day trip from Paris to Rome for 1 person"], 3],
      [base.ESC, ["3 days in Paris from Madrid for 2 under $500"], 3],
    ];
    for (const [thread, args, want] of setup) {
      const [request, ...flags] = args;
      const o = await inProcess(["run", request!, "--thread", thread, "--db", db, "--no-input", ...flags], undefined);
      if (o.code !== want)
        throw new Error(`setting up thread ${thread}: exit ${o.code}, expected ${want}\n${o.stderr}`);
    }
    const history = await inProcess(["history", base.DONE, "--db", db, "--json"], undefined);
    const checkpoints = (JSON.parse(history.stdout) as { checkpoints: { checkpointId: string; next: string[] }[] })
      .checkpoints;
    CP = checkpoints.find((c) => c.next.includes("execute"))?.checkpointId ?? checkpoints[0]!.checkpointId;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("has at least 100 cases, each named once", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(100);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    for (const name of Object.keys(KNOWN))
      expect(
        CASES.map((c) => c.name),
        `KNOWN names a case that does not exist: ${name}`,
      ).toContain(name);
  });

  it.each(CASES.map((c, i) => [c.name, c, i] as const))("%s", async (_name, c, i) => {
    // A fresh copy of the template directory, so no case sees what another did to the threads.
    const dir = path.join(root, `case-${i}`);
    mkdirSync(dir);
    for (const f of readdirSync(template)) copyFileSync(path.join(template, f), path.join(dir, f));
    const p: Places = { ...base, DB: path.join(dir, "candor.db"), DIR: dir, CP };
    c.prepare?.(p);
    const watched = c.stillWaiting ? p[c.stillWaiting] : null;
    const before = watched ? ((await inspectThread(p.DB, watched)).waitingFor?.kind ?? null) : null;
    if (watched) expect(before, `thread ${watched} should wait before the case runs`).not.toBeNull();
    const argv = c.argv(p);
    const o = c.spawn ? await inChild(argv, dir, c.env, c.limitMs) : await inProcess(argv, c.env);
    const after = watched && existsSync(p.DB) ? ((await inspectThread(p.DB, watched)).waitingFor?.kind ?? null) : null;
    const found = problems(c, o, before, after);
    const known = KNOWN[c.name];
    if (known) {
      // Waiting for a fix on another branch: report, do not fail.
      if (found.length > 0) console.warn(`known defect (${known}): ${c.name}: ${found.join("; ")}`);
      else console.info(`"${c.name}" now passes: remove it from KNOWN (${known}).`);
      return;
    }
    expect(
      found,
      `candor ${argv.map((a) => (a.length > 60 ? `${a.slice(0, 60)}…` : a)).join(" ")}\n--- stdout ---\n${o.stdout.slice(0, 1500)}\n--- stderr ---\n${o.stderr.slice(0, 1500)}`,
    ).toEqual([]);
  });
});
