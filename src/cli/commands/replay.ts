import type { StateSnapshot } from "@langchain/langgraph";
import { Node } from "../../../nodes/names.js";
import { AgentState, type AgentStateValue } from "../../../nodes/state.js";
import type { PlanDefinition } from "../../domain/plan.js";
import { planFields, planOf, planView } from "../../domain/plan-state.js";
import { CandorError, ErrorCode } from "../../errors.js";
import { checkEditedPlan } from "../../replanning/plan-edit.js";
import { ToolRegistry } from "../../tools/registry.js";
import { buildToolkits } from "../session.js";
import {
  checkpointAt,
  checkpointBefore,
  forkCheckpoint,
  parseAssignments,
  stateFieldsOf,
  updateFromAssignments,
} from "../../replay.js";
import { Exit, type CliIo } from "../io.js";
import { parseFlags, ReplayFlags } from "../options.js";
import { executeThread, presentOutcome } from "../present.js";
import { inLeasedThread } from "../thread-lease.js";
import { describeReasoner, headerLines } from "../start-run.js";
import { openThread, type OpenThread } from "../open-thread.js";

/** `candor replay <thread> --from <checkpoint>`: runs the thread again from that checkpoint, on a new branch. */
export async function replayCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ReplayFlags, rawFlags);
  if (flags.set.length > 0) {
    throw new CandorError(
      `replay runs a checkpoint unchanged; to change state first, use: ${io.invokedAs} fork ${rawId} --from ${flags.from} --set key=value.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  return onBranch(rawId, flags, io, "replay", async (thread) => {
    await checkpointAt(thread.session.graph, thread.threadId, flags.from);
    return { checkpointId: flags.from, what: ["replay", `from checkpoint ${flags.from}`] };
  });
}

/**
 * `candor fork <thread> --from <checkpoint> --set key=value ...`: writes the changed state on top of the
 * checkpoint as a new branch and runs the branch. Every path must exist in the state's shape and every value
 * must parse (plan steps against their tools too), or nothing is written. A changed request after the plan was
 * made would run the old plan: the fork then starts from the checkpoint before planning, so the plan is made
 * again for the new request, and says so.
 */
export async function forkCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ReplayFlags, rawFlags);
  if (flags.set.length === 0) {
    throw new CandorError(
      `fork needs at least one --set key=value (e.g. --set settings.maxRevisions=1). To run the checkpoint unchanged, use: ${io.invokedAs} replay ${rawId} --from ${flags.from}.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  // Malformed assignments fail before the database is opened.
  const assignments = parseAssignments(flags.set);
  const touched = new Set(assignments.map((a) => a.path[0]));
  const threshold = assignments.some(
    ({ path }) => path[0] === "settings" && (path.length === 1 || path[1] === "approvalThreshold"),
  );
  return onBranch(rawId, flags, io, "fork", async ({ session, threadId }) => {
    const at = await checkpointAt(session.graph, threadId, flags.from);
    const values = at.values as AgentStateValue;
    const notes: string[] = [];
    let base = at;
    if (touched.has("request") && values.plan && flags.asNode === undefined) {
      if (touched.has("plan")) {
        throw new CandorError(
          `--set changes the request and the plan together, but checkpoint ${flags.from} already has its plan: the plan will be made again for the new request, so edits to the old one would be lost. Fork with the request change alone, then edit the new plan in a second fork.`,
          ErrorCode.INVALID_REQUEST,
        );
      }
      const before = await checkpointBefore(session.graph, threadId, flags.from, Node.UNDERSTAND);
      if (!before) {
        throw new CandorError(
          `Checkpoint ${flags.from} has its plan and no earlier checkpoint on its branch plans again, so a new request would run the old plan. Start a new run with the new request instead: ${io.invokedAs} run "<request>".`,
          ErrorCode.INVALID_REQUEST,
        );
      }
      base = before;
      notes.push(
        `the plan at checkpoint ${flags.from} was made for the old request, so the fork starts from checkpoint ${idOf(before)}, before planning, and plans again for the new request`,
      );
    } else if (touched.has("request") && values.plan) {
      notes.push(
        `the plan at checkpoint ${flags.from} was made for the old request and --as-node ${flags.asNode} keeps it: the request change shows in the report, not in what runs`,
      );
    }
    if (threshold && (base.values as AgentStateValue).plan) {
      notes.push(
        "settings.approvalThreshold is read when a plan is made; this checkpoint's plan is made, so it applies only to a plan made again (a guided replan)",
      );
    }
    const baseValues = base.values as AgentStateValue;
    const update = updateFromAssignments(base.values as Record<string, unknown>, flags.set, stateFieldsOf(AgentState));
    if (update.plan) {
      const request = (update.request ?? baseValues.request) as AgentStateValue["request"];
      const previous = planOf(baseValues);
      if (!previous)
        throw new CandorError(
          `--set refused, nothing was changed: plan: there is no plan at checkpoint ${idOf(base)} to edit.`,
          ErrorCode.INVALID_REQUEST,
        );
      // The edit is to the plan's definition; it is checked as the plan it makes with the steps' run-state.
      const edited = planView(update.plan as PlanDefinition, baseValues.runs);
      const checked = checkEditedPlan(previous, edited, request, ToolRegistry.create(buildToolkits([])));
      if (!checked.ok)
        throw new CandorError(
          `--set refused, nothing was changed: ${checked.reason.replace(/\.+$/, "")}.`,
          ErrorCode.INVALID_REQUEST,
        );
      delete update.plan;
      Object.assign(update, planFields(checked.value));
    }
    const from = idOf(base);
    const config = await forkCheckpoint(session.graph, threadId, from, update, flags.asNode);
    const forked = String(config.configurable?.checkpoint_id);
    return {
      checkpointId: forked,
      what: ["fork", `checkpoint ${from} → new checkpoint ${forked} with ${flags.set.join(", ")}`],
      request: (update.request as AgentStateValue["request"] | undefined)?.userIntent,
      notes,
    };
  });
}

const idOf = (s: StateSnapshot) => String(s.config.configurable?.checkpoint_id);

/** Opens and leases the thread, lets `prepare` pick the checkpoint to start from, then streams from it. */
async function onBranch(
  rawId: string,
  flags: ReplayFlags,
  io: CliIo,
  verb: string,
  prepare: (
    thread: OpenThread,
  ) => Promise<{ checkpointId: string; what: [string, string]; request?: string; notes?: string[] }>,
): Promise<Exit> {
  const thread = await openThread(rawId, flags.db, io, "execute");
  const { threadId, session, dbPath } = thread;
  return inLeasedThread(session, threadId, io, async (signal) => {
    const { checkpointId, what, request, notes = [] } = await prepare(thread);
    io.err(
      headerLines(`Candor · reasoner: ${describeReasoner(thread.reasoner)} · ${verb} of thread ${threadId}`, session, [
        ["request", request ?? thread.record?.request ?? ""],
        what,
        ...notes.map((n): [string, string] => ["note", n]),
        ["faults", thread.record?.faults.join(", ") ?? ""],
      ]).join("\n"),
    );
    const outcome = await executeThread(session, threadId, { kind: "continue" }, { ...io, signal }, checkpointId, {
      streamAnswer: !flags.json,
    });
    return presentOutcome(outcome, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
  });
}
