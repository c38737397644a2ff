import type { RunnableConfig } from "@langchain/core/runnables";
import { Command, type StateSnapshot } from "@langchain/langgraph";
import { InterruptRequest } from "./domain/approval.js";

/**
 * What a waiting thread asks, for apps that embed Candor: every pending interrupt, the workers' tool approvals
 * included (those wait inside the worker subgraph, so they are not in the parent's `pendingInterrupt`). Works on
 * the compiled agent with any checkpointer.
 */
export interface PendingRequest {
  /** The interrupt's id: needed to answer one of several that wait at once (parallel tool approvals). */
  id: string | undefined;
  /** Candor's request when the payload is one (plan approval, escalation, tool approval); null otherwise. */
  request: InterruptRequest | null;
  /** The payload exactly as the graph gave it (a LangGraph HumanInterrupt with Candor's request alongside). */
  value: unknown;
}

/** The part of a compiled graph this module needs. */
export interface InspectableGraph {
  getState(config: RunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
}

/**
 * The interrupts still pending in a snapshot, subgraph tasks included, each once. A task that runs a subgraph
 * (a worker) is read through its own state, read with `{ subgraphs: true }`: the parent keeps the subgraph's
 * interrupt on its task until the whole subgraph finishes, even after the subgraph has moved past it (a worker
 * killed while running an approved call), and that stale copy must not be asked again.
 */
export function interruptsOf(snapshot: StateSnapshot): { id: string | undefined; value: unknown }[] {
  const out: { id: string | undefined; value: unknown }[] = [];
  const seen = new Set<string>();
  const visit = (s: StateSnapshot) => {
    for (const t of s.tasks) {
      if (t.state && "tasks" in t.state) {
        visit(t.state);
        continue;
      }
      for (const i of t.interrupts ?? []) {
        if (i.id !== undefined && seen.has(i.id)) continue;
        if (i.id !== undefined) seen.add(i.id);
        out.push({ id: i.id, value: i.value });
      }
    }
  };
  visit(snapshot);
  return out;
}

/** Every request a thread waits on, oldest first; empty when it is not waiting for a person. */
export async function pendingRequests(graph: InspectableGraph, config: RunnableConfig): Promise<PendingRequest[]> {
  const snapshot = await graph.getState(config, { subgraphs: true });
  return interruptsOf(snapshot).map(({ id, value }) => {
    const parsed = InterruptRequest.safeParse(value);
    return { id, request: parsed.success ? parsed.data : null, value };
  });
}

/**
 * The Command that answers waiting requests: one answer for one request, or one per interrupt id when several
 * wait (LangGraph resumes each interrupt with the value under its id). `answer` is Candor's decision
 * (`{decision: "approve"}`, `"approve"`) or a LangGraph HumanResponse.
 */
export function answerRequests(pending: readonly PendingRequest[], answer: unknown): Command {
  const ids = pending.flatMap((p) => (p.id ? [p.id] : []));
  return new Command({ resume: ids.length > 1 ? Object.fromEntries(ids.map((id) => [id, answer])) : answer });
}
