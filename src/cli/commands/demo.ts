import { randomBytes } from "node:crypto";
import { DEMO } from "../../app/demo.js";
import type { CliIo, Exit } from "../io.js";
import { chooseReasoner, EXAMPLE_REQUEST, parseFlags, resolveDbPath, RunFlags } from "../options.js";
import { dbArgFor } from "../present.js";
import { shellArg } from "../render.js";
import { describeReasoner, startRun } from "../start-run.js";

/** `candor` with no command: the travel demo with injected faults, framed by what to watch and what to try next. */
export async function demoCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(RunFlags, rawFlags);
  const reasoner = chooseReasoner(flags, io.env);
  io.err(
    [
      `Candor demo · reasoner: ${describeReasoner(reasoner)}`,
      "A trip under a budget, with failures injected on purpose:",
      `  request: "${DEMO.request}"`,
      `  faults:  ${DEMO.faults.join(", ")}`,
      "Watch for three recoveries, each announced the moment it happens:",
      "  1. the primary flight agent times out  → retried on the backup agent   (RETRY_DIFFERENT_AGENT)",
      "  2. the hotel is fully booked           → a wider search nearby         (FIND_WORKAROUND)",
      "  3. the trip comes out over budget      → prices capped, steps re-run   (ADJUST_PARAMETERS)",
      "Live events go to stderr; the answer and the report follow on stdout.",
      "",
    ].join("\n"),
  );
  // A fresh user each time, so the story above holds on every run: the default user's memory of earlier demos
  // would have the planner pick the backup flight agent up front (see "learn across runs" below).
  const user = hasUser(rawFlags) ? flags.user : `demo-${randomBytes(4).toString("hex")}`;
  const { exit, threadId } = await startRun(
    DEMO.request,
    { ...flags, user, fault: [...DEMO.faults, ...flags.fault] },
    io,
    true,
  );
  const p = io.invokedAs;
  const dbArg = dbArgFor(resolveDbPath(flags.db, io.env));
  const db = dbArg ? ` --db ${shellArg(dbArg)}` : "";
  const tries: [string, string][] = [
    ["another trip, no faults", `${p} run ${shellArg(EXAMPLE_REQUEST)}${db}`],
    ["inject a fault, get JSON", `${p} run ${shellArg(EXAMPLE_REQUEST)} --fault search_hotels=unavailable --json${db}`],
    [
      "split a step (DECOMPOSE)",
      `${p} run ${shellArg(EXAMPLE_REQUEST)} --fault ${shellArg("search_activities=complex*1")}${db}`,
    ],
    ["stop for plan approval", `${p} run ${shellArg(EXAMPLE_REQUEST)} --approval-threshold 0.99${db}`],
    ["answer a waiting run", `${p} resume <thread> --approve${db}`],
    ["learn across runs (try 3x)", `${p} --user me${db}`],
    ["this run's checkpoints", `${p} history ${threadId}${db}`],
    ["this run's report again", `${p} report ${threadId}${db}`],
    ["why each decision was made", `${p} logs --thread ${threadId} --step flight${db}`],
    ["every command and flag", `${p} --help`],
  ];
  const width = Math.max(...tries.map(([why]) => why.length));
  io.err(["", "Try next:", ...tries.map(([why, c]) => `  ${why.padEnd(width)}   ${c}`)].join("\n"));
  return exit;
}

function hasUser(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && typeof (raw as { user?: unknown }).user === "string";
}
