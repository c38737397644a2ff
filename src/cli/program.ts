import { createRequire } from "node:module";
import { Command, CommanderError, Option } from "commander";
// Only light modules here: `candor --help`, `--version` and a usage error are answered from this file alone, without
// zod, the database or the agent (issue 25: --help within 3x bare node). Each command's module is imported when it runs.
import { FAULT_KINDS } from "../tools/fault-kinds.js";
import type { CandorEnv } from "../env.js";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { Exit, visibleIo, type CliIo } from "./io.js";
import { Node } from "../../nodes/names.js";
import { EXAMPLE_REQUEST } from "../app/example-request.js";
import { FLAG_BOUNDS, LOG_OPERATIONS } from "./catalog.js";
import { shellArg } from "./shell-arg.js";
import { takeSecondaryFailures } from "./closing.js";

/** Errors that are the user's to fix: shown as their message alone, exit 2. */
const USAGE_CODES: ReadonlySet<string> = new Set([
  ErrorCode.INVALID_REQUEST,
  ErrorCode.CONFIGURATION,
  ErrorCode.STORAGE,
  ErrorCode.UNKNOWN_THREAD,
  ErrorCode.INVALID_DECISION,
  ErrorCode.LIMIT_EXCEEDED,
  ErrorCode.UNSUPPORTED_CHECKPOINT,
]);

/**
 * Through the package's own name (its `exports` lists package.json): the same path from src/ in the clone and from
 * dist/src/ in an installed package. Checked by hand rather than with zod, which would double --help's start-up.
 */
function packageVersion(): string {
  const pkg: unknown = createRequire(import.meta.url)("candor/package.json");
  const version = typeof pkg === "object" && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  if (typeof version !== "string")
    throw new CandorError(
      "Candor's own package.json has no version, so this installation is broken: install Candor again.",
      ErrorCode.CONFIGURATION,
    );
  return version;
}
const VERSION = packageVersion();

const COMMANDS = new Set([
  "demo",
  "run",
  "resume",
  "review",
  "feedback",
  "memory",
  "metrics",
  "threads",
  "history",
  "report",
  "logs",
  "replay",
  "fork",
  "submit",
  "worker",
  "serve",
  "db",
  "help",
]);
const HELP_FLAGS = new Set(["-h", "--help", "-V", "--version"]);

/**
 * No command runs the demo, and so does a bare flag list (`candor --db x.db`): the demo is the first thing a
 * newcomer should see.
 */
function withDefaultCommand(argv: readonly string[]): string[] {
  const first = argv[0];
  if (first === undefined || (first.startsWith("-") && !HELP_FLAGS.has(first))) return ["demo", ...argv];
  return [...argv];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const bounds = ({ min, max }: { min: number; max: number }) => `${min}-${max}`;

function withCommon(c: Command, json = "print one JSON object on stdout instead of text"): Command {
  return c
    .option(
      "--db <path|url>",
      "the database: a SQLite file, or a postgres:// URL (migrated once with: db migrate); default: CANDOR_DB or .candor/candor.db",
    )
    .option("--json", json)
    .option("--debug", "print the stack trace of an unexpected error");
}

const NO_INPUT =
  "never ask at the terminal: when the run waits for a person, print the commands to continue and exit 3 (what happens anyway when stdin is not a terminal)";

function withRunOptions(c: Command): Command {
  return withCommon(c)
    .option("--thread <id>", "thread id (default: a new run-xxxxxxxx)")
    .option(
      "--user <id>",
      "user whose memory (past runs) the planner learns from (default: default; the demo uses a fresh one)",
    )
    .option("--model <name>", "chat model for the llm reasoner (needs OPENAI_API_KEY; OPENAI_BASE_URL honoured)")
    .addOption(
      new Option(
        "--reasoner <kind>",
        "how plans are made (default: llm when OPENAI_API_KEY is set, else rules)",
      ).choices(["rules", "llm"]),
    )
    .option(
      "--fault <tool=kind[*N]>",
      `inject a fault, repeatable; kinds: ${FAULT_KINDS.join(", ")}; N (calls that fail) ${bounds(FLAG_BOUNDS.faultCalls)}`,
      collect,
    )
    .option(
      "--max-revisions <n>",
      `plan revisions before a human is asked (${bounds(FLAG_BOUNDS.maxRevisions)}, default 3)`,
    )
    .option("--approval-threshold <x>", "plans with confidence below x (0..1) wait for approval (default 0.5)")
    .option("--abort-below <x>", "stop and ask a human when confidence falls below x (0..1, default 0.3)")
    .option(
      "--reactive",
      "no plan: one general worker's model runs the request with every tool (needs --model or OPENAI_API_KEY)",
    )
    .option("--mcp <file>", "a JSON file of MCP servers whose tools the run may use (default: CANDOR_MCP)")
    .option("--docs <dir>", "a folder of documents search_docs searches (default: CANDOR_DOCS)")
    .option(
      "--token-budget <n>",
      `most model tokens the run may use (${bounds(FLAG_BOUNDS.tokenBudget)}); a plan expected to need more is refused, a call that would exceed it asks`,
    )
    .option("--no-input", NO_INPUT)
    .option(
      "--debug-tools",
      "add the debugging tools (review_runs, get_run_context, …: read-only over this database, except write_debug_report); CANDOR_DEBUG_TOOLS=1 does too",
    );
}

/**
 * Builds the `candor` command tree; `setCode` receives each action's exit code. Commands are imported when they
 * run, so a usage error answers without loading the agent and its dependencies.
 */
export function buildProgram(io: CliIo, setCode: (code: Exit) => void): Command {
  const p = io.invokedAs;
  const program = new Command("candor")
    .description(
      "Candor: a planner–executor agent that never hides a failure. With no command it runs the travel demo.",
    )
    .version(VERSION, "-V, --version", "print Candor's version")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
      outputError: () => undefined,
    })
    .showSuggestionAfterError(true)
    .helpCommand(true)
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        `  ${p}                                   the demo: faults injected, recoveries announced`,
        `  ${p} run "${EXAMPLE_REQUEST}"`,
        `  ${p} run "..." --fault read_file=timeout --json`,
        `  ${p} resume run-1a2b3c4d --approve`,
        `  ${p} run "..." --no-input                 never ask at the terminal: exit 3 with the commands to continue`,
        `  ${p} threads                            every thread, newest first, and what each waits for`,
        `  ${p} fork run-1a2b3c4d --from <checkpoint> --set settings.maxRevisions=1`,
        `  ${p} logs --thread run-1a2b3c4d --step s2`,
        `  ${p} review --thread run-1a2b3c4d        what went wrong in a run, as a debug report in .candor/reports`,
        `  ${p} feedback run-1a2b3c4d --reject "the report was too vague"  learn from a finished run`,
        `  ${p} memory --user ana                  what was learned, and from what; memory revoke <id> withdraws it`,
        "",
        "At a terminal, a run that waits for a decision asks for it inline; elsewhere (or with --no-input) it exits 3.",
        "Exit codes: 0 completed · 2 bad usage or input, or the thread is busy in another process · 3 waiting for a human · 4 failed, rejected, aborted or partial · 5 the database failed (damaged, full, read-only, connection lost, could not be closed).",
      ].join("\n"),
    );

  withRunOptions(
    program.command("demo").description("the travel demo with injected faults (what runs with no command)"),
  ).action(async (opts) => setCode(await (await import("./commands/demo.js")).demoCommand(opts, io)));

  withRunOptions(
    program
      .command("run")
      .description("plan and execute a request, streaming what happens")
      .argument("<request...>", "what you want done, in plain words"),
  ).action(async (words: string[], opts) =>
    setCode(await (await import("./commands/run.js")).runCommand(words.join(" "), opts, io)),
  );

  withCommon(
    program
      .command("resume")
      .description("answer a run that waits for a human, or continue one that stopped part-way")
      .argument("<thread>", "the thread id run printed")
      .option("--approve", "approve the plan, or the tool call a step waits to make")
      .option("--reject", "reject the plan")
      .option("--adjust <json>", "adjust the plan, then run it: a JSON list of {taskId, field, newValue}, or @file")
      .option("--skip", "give up on the failed step and finish the rest")
      .option("--retry", "allow one more recovery attempt")
      .option(
        "--set <key=value>",
        "with --retry: a new value for one of the failed step's parameters, repeatable (checked against the tool's schema)",
        collect,
      )
      .option(
        "--replan <guidance>",
        "plan the unfinished work again, following this guidance (finished steps the new plan repeats are kept)",
      )
      .option("--abort", "stop the run")
      .option("--deny", "refuse the tool call a step waits to make (the step fails as POLICY_BLOCKED and is replanned)")
      .option("--comment <text>", "why, recorded with the decision")
      .option("--no-input", NO_INPUT),
  ).action(async (thread: string, opts) =>
    setCode(await (await import("./commands/resume.js")).resumeCommand(thread, opts, io)),
  );

  withCommon(
    program
      .command("review")
      .description(
        "review past runs with the debugging tools and write a debug report under .candor/reports (read-only otherwise)",
      )
      .option("--thread <id>", "look into this thread in depth (default: the recent threads, the most anomalous first)")
      .option("--user <id>", "whose run the review is (default: default)")
      .option("--model <name>", "chat model for the llm reasoner (needs OPENAI_API_KEY; OPENAI_BASE_URL honoured)")
      .addOption(
        new Option(
          "--reasoner <kind>",
          "how the review is planned (default: llm when OPENAI_API_KEY is set, else rules)",
        ).choices(["rules", "llm"]),
      )
      .option("--no-input", NO_INPUT),
  ).action(async (opts) => setCode(await (await import("./commands/review.js")).reviewCommand(opts, io)));

  withCommon(
    program
      .command("feedback")
      .description("say how a finished run went; a rejection is reflected on at once and may change later runs")
      .argument("<thread>", "the thread id of a finished run")
      .option("--accept", "the answer was right")
      .option("--reject <reason>", "the answer was wrong, and why (what Candor learns from)")
      .option("--comment <text>", "a remark with the verdict"),
    "print what was stored and learned as JSON",
  ).action(async (thread: string, opts) =>
    setCode(await (await import("./commands/feedback.js")).feedbackCommand(thread, opts, io)),
  );

  withCommon(
    program
      .command("memory")
      .description(
        "what Candor learned about a user: adjustments, patterns, reflections, unmet wishes, episodes; or revoke or confirm one",
      )
      .argument("[action]", "revoke, to withdraw an adjustment; confirm, to apply a proposed one now")
      .argument("[id]", "the adjustment id (found among every user's; --user narrows)")
      .option("--user <id>", "whose memory (default: default)"),
    "print the memory as JSON",
  ).action(async (action: string | undefined, id: string | undefined, opts) =>
    setCode(await (await import("./commands/memory.js")).memoryCommand(action, id, opts, io)),
  );

  withCommon(
    program
      .command("metrics")
      .description("figures: planning, reflection quality, adjustments, success after reflection, calibration")
      .option("--user <id>", "one user's figures (default: every user)"),
    "print the figures as JSON",
  ).action(async (opts) => setCode(await (await import("./commands/metrics.js")).metricsCommand(opts, io)));

  withCommon(
    program.command("threads").description("the threads in the database, newest first: status and what each waits for"),
  )
    .option("--limit <n>", `show only the newest n threads (${bounds(FLAG_BOUNDS.limit)})`)
    .action(async (opts) => setCode(await (await import("./commands/threads.js")).threadsCommand(opts, io)));

  withCommon(
    program
      .command("replay")
      .description("run a thread again from one of its checkpoints (a new branch; the old checkpoints stay)")
      .argument("<thread>", "thread id")
      .requiredOption("--from <checkpoint>", "the checkpoint id to replay from (see: history <thread>)"),
  ).action(async (thread: string, opts) =>
    setCode(await (await import("./commands/replay.js")).replayCommand(thread, opts, io)),
  );

  withCommon(
    program
      .command("fork")
      .description("branch a thread from a checkpoint with changed state, and run the branch")
      .argument("<thread>", "thread id")
      .requiredOption("--from <checkpoint>", "the checkpoint id to fork from (see: history <thread>)")
      .option(
        "--set <key=value>",
        "change the state: a dotted path and a value (JSON if it parses, else text), repeatable",
        collect,
      )
      .addOption(
        new Option(
          "--as-node <node>",
          "the node the update counts as coming from (default: the checkpoint's last writer)",
        ).choices(Object.values(Node)),
      ),
  ).action(async (thread: string, opts) =>
    setCode(await (await import("./commands/replay.js")).forkCommand(thread, opts, io)),
  );

  withCommon(
    program.command("history").description("a thread's checkpoints, newest first").argument("<thread>", "thread id"),
  )
    .option("--limit <n>", `show only the newest n checkpoints (${bounds(FLAG_BOUNDS.limit)})`)
    .action(async (thread: string, opts) =>
      setCode(await (await import("./commands/history.js")).historyCommand(thread, opts, io)),
    );

  withCommon(
    program.command("report").description("a thread's post-execution report").argument("<thread>", "thread id"),
    "print the report as JSON",
  ).action(async (thread: string, opts) =>
    setCode(await (await import("./commands/report.js")).reportCommand(thread, opts, io)),
  );

  withCommon(
    program.command("logs").description("the decision log: what was decided, why, and confidence before → after"),
    "print the matching raw JSON lines",
  )
    .option("--thread <id>", "only this thread")
    .option("--plan <id>", "only this plan")
    .option("--step <id>", "only this step (task id)")
    .addOption(new Option("--operation <name>", "only this operation").choices(LOG_OPERATIONS))
    .action(async (opts) => setCode(await (await import("./commands/logs.js")).logsCommand(opts, io)));

  withRunOptions(
    program
      .command("submit")
      .description("put a request on the run queue in PostgreSQL and print its thread id; a worker runs it")
      .argument("<request...>", "what you want done, in plain words"),
  ).action(async (words: string[], opts) =>
    setCode(await (await import("./commands/submit.js")).submitCommand(words.join(" "), opts, io)),
  );

  withCommon(
    program
      .command("worker")
      .description("run submitted threads from the run queue in PostgreSQL, one at a time, until stopped")
      .option("--exit-when-idle", "exit once no thread is queued or running"),
  ).action(async (opts) => setCode(await (await import("./commands/worker.js")).workerCommand(opts, io)));

  withCommon(
    program
      .command("serve")
      .description(
        "serve the LangGraph API (SDK, useStream, chat apps) over the database; on PostgreSQL its runs go to the workers",
      )
      .option("--port <n>", "the port (default 2024; 0: any free port)")
      .option("--host <address>", "the address to listen on (default 127.0.0.1: this machine only)")
      .option(
        "--auth-token <token>",
        "every request must carry it as a bearer token or x-api-key (or CANDOR_SERVE_TOKEN)",
      )
      .option("--model <name>", "chat model for the llm reasoner (needs OPENAI_API_KEY)")
      .addOption(
        new Option(
          "--reasoner <kind>",
          "how plans are made (default: llm when OPENAI_API_KEY is set, else rules)",
        ).choices(["rules", "llm"]),
      ),
    "print {url, db, auth} as JSON on stdout once listening",
  ).action(async (opts) => setCode(await (await loadServe()).serveCommand(opts, io)));

  const db = program.command("db").description("the database itself: set up its tables");
  withCommon(
    db
      .command("migrate")
      .description(
        "create or upgrade Candor's tables (PostgreSQL: needed once before first use; safe to repeat, and from several machines at once)",
      ),
  ).action(async (opts) => setCode(await (await import("./commands/db.js")).dbMigrateCommand(opts, io)));

  return program;
}

/** Commander's own errors, as one paragraph that says what to do. */
function usageMessage(e: CommanderError, argv: readonly string[], prefix: string): string {
  if (e.code === "commander.unknownCommand" && argv[0]) {
    return `Unknown command "${argv[0]}". The commands are ${[...COMMANDS].join(", ")}. To plan and run a request, use: ${prefix} run ${shellArg(argv.join(" "))}`;
  }
  // A request that starts with a dash ("-7 days in Lisbon") reads as an option: say how to pass it as text.
  const dashed = e.code === "commander.unknownOption" ? argv.find((a) => a.startsWith("-") && /\s/.test(a)) : undefined;
  if (dashed) {
    const flags = argv.slice(1).filter((a) => a !== dashed);
    return `The request ${shellArg(dashed)} starts with a dash, so it was read as an option. Put it last, after -- (everything after -- is the request): ${prefix}${argv[0] ? ` ${argv[0]}` : ""}${flags.length > 0 ? ` ${flags.map(shellArg).join(" ")}` : ""} -- ${shellArg(dashed)}`;
  }
  const text = e.message
    .replace(/^error:\s*/i, "")
    .replace(/\s*\n\s*/g, " ")
    .trim();
  const command = argv[0] && COMMANDS.has(argv[0]) && argv[0] !== "help" ? ` ${argv[0]}` : "";
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return `${sentence}${/[.)?]$/.test(sentence) ? "" : "."} See ${prefix}${command} --help for the commands and flags.`;
}

/**
 * A flag that needs a value followed directly by another flag (`resume T --replan --db x.db`): commander would
 * take the second flag as the first one's value and then complain about something else (too many arguments), or
 * not at all. Returns the usage message, or null.
 */
export function swallowedFlag(program: Command, args: readonly string[], prefix: string): string | null {
  const command = program.commands.find((c) => c.name() === args[0]);
  const options = [...(command?.options ?? []), ...program.options];
  for (let i = 1; i < args.length; i++) {
    const token = args[i]!;
    if (token === "--") return null;
    const option = options.find((o) => o.long === token);
    if (!option || !(option.required || option.optional)) continue;
    const next = args[i + 1];
    if (next !== undefined && /^--[A-Za-z]/.test(next)) {
      return `${token} needs a value, but the next word is the flag "${next}": put the value right after ${token} (quoted if it has spaces), as in ${option.flags}. See ${prefix}${command ? ` ${command.name()}` : ""} --help for the flags.`;
    }
    i++; // the option's value: never itself an option
  }
  return null;
}

/** Whether the command line asks for JSON from a command that prints it (every command but help takes --json). */
function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  const flags = end < 0 ? args : args.slice(0, end);
  return flags.includes("--json") && args[0] !== "help";
}

/**
 * Runs one `candor` command and returns its exit code. Every failure becomes one readable paragraph on stderr:
 * usage and input errors exit 2; anything unexpected exits 1 with its message (and the stack with --debug).
 * With --json, the failure is also one JSON object on stdout, `{ "error": { "code", "message" } }`, so a script
 * that reads stdout always gets JSON. Everything printed goes through `visibleIo`: untrusted text in an answer, a
 * step's output or an error never reaches the terminal with its control characters. The environment is read
 * (`loadEnv`) just before a command's action runs: help, the version and usage errors need none of it.
 */
export async function runCli(
  argv: readonly string[],
  terminal: Omit<CliIo, "env">,
  loadEnv: () => CandorEnv | Promise<CandorEnv>,
): Promise<Exit> {
  const base = visibleIo(terminal);
  const args = withDefaultCommand(argv);
  const debug = args.includes("--debug");
  let also: CandorError[] = [];
  const fail = (code: string, message: string, exit: Exit): Exit => {
    // What failed after the first failure (closing the database) is said after it, never in its place.
    const more = also.map((e) => ({ code: e.code, message: e.message }));
    if (wantsJson(args))
      base.out(JSON.stringify({ error: { code, message, ...(more.length > 0 ? { also: more } : {}) } }));
    base.err(message);
    for (const m of more) base.err(`Also: ${m.message}`);
    return exit;
  };
  let code: Exit = Exit.COMPLETED;
  let env: CandorEnv | undefined;
  try {
    const io: CliIo = {
      ...base,
      get env(): CandorEnv {
        // Read by actions only, which run after the preAction hook below has loaded it.
        if (env === undefined) throw new Error("the environment was read before the command's action ran");
        return env;
      },
    };
    const program = buildProgram(io, (c) => (code = c));
    program.hook("preAction", async () => {
      env ??= await loadEnv();
    });
    const swallowed = swallowedFlag(program, args, base.invokedAs);
    if (swallowed) return fail(ErrorCode.INVALID_REQUEST, swallowed, Exit.USAGE);
    await program.parseAsync(args, { from: "user" });
    return code;
  } catch (e) {
    also = takeSecondaryFailures(e);
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return Exit.COMPLETED;
      return fail(ErrorCode.INVALID_REQUEST, usageMessage(e, args, base.invokedAs), Exit.USAGE);
    }
    // A database that failed under the command (damaged, full, read-only, its server gone) is named, not internal.
    const { storageFault } = await import("../memory/storage-faults.js");
    const fault = CandorError.hasCode(e, ErrorCode.STORAGE_CLOSE_FAILED) ? e : storageFault(e);
    if (fault) {
      const exit = fail(fault.code, fault.message, Exit.STORAGE);
      if (debug && e instanceof Error && e.stack) base.err(e.stack);
      return exit;
    }
    if (CandorError.isInstance(e) && USAGE_CODES.has(e.code)) {
      const exit = fail(e.code, e.message, Exit.USAGE);
      if (debug && e.stack) base.err(e.stack);
      return exit;
    }
    const exit = fail(
      CandorError.isInstance(e) ? e.code : "INTERNAL",
      `Internal error: ${errorMessage(e)} (run again with --debug for the stack).`,
      Exit.INTERNAL,
    );
    if (debug && e instanceof Error && e.stack) base.err(e.stack);
    return exit;
  }
}

/**
 * `candor serve`'s module. The LangGraph API server it builds on is an optional peer of the package (it brings a
 * web framework, a logger and tsx that an app embedding the graph does not need): where it is not installed, the
 * command says how to install it instead of failing on a missing module.
 */
async function loadServe(): Promise<typeof import("./commands/serve.js")> {
  try {
    return await import("./commands/serve.js");
  } catch (e) {
    const missing =
      (e as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && /@langchain\/langgraph-api/.test(String(e));
    if (!missing) throw e;
    throw new CandorError(
      "candor serve needs @langchain/langgraph-api, which is not installed (an optional peer of the package). Install it with: npm install @langchain/langgraph-api@1.5.1",
      ErrorCode.CONFIGURATION,
      { cause: e },
    );
  }
}
