/**
 * Reads what a database says about a thread after a command: its latest checkpoint, what it waits for, its
 * state, and the effect ledger. The ground truth the invariants are checked against — never the CLI's output.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { AgentStateValue } from "../../nodes/state.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { buildToolkits, readOutcome, sessionOn, type WaitingRequest } from "../../src/cli/session.js";

export interface Inspection {
  /** The thread has at least one checkpoint. */
  exists: boolean;
  checkpointId: string | null;
  finished: boolean;
  status: string | null;
  waitingFor: WaitingRequest | null;
  next: string[];
  values: AgentStateValue | null;
}

export interface LedgerRow {
  stepId: string;
  dispatch: number;
  attempt: number;
  tool: string;
  status: string;
}

const NONE: Inspection = {
  exists: false,
  checkpointId: null,
  finished: false,
  status: null,
  waitingFor: null,
  next: [],
  values: null,
};

export async function inspectThread(db: string, threadId: string): Promise<Inspection> {
  if (!existsSync(db)) return NONE;
  const session = await sessionOn(openPersistence(db), {
    reasoner: { kind: "rules", model: null },
    faults: [],
    env: {},
  });
  try {
    const tuple = await session.persistence.checkpointer.getTuple({ configurable: { thread_id: threadId } });
    if (!tuple) return NONE;
    const o = await readOutcome(session.graph, threadId);
    return {
      exists: true,
      checkpointId: String(tuple.config.configurable?.checkpoint_id ?? ""),
      finished: o.finished,
      status: o.status,
      waitingFor: o.waitingFor,
      next: o.next,
      values: o.values,
    };
  } finally {
    await session.close();
  }
}

/** The effect ledger's rows for a thread (empty when the table does not exist yet). */
export function ledgerRows(db: string, threadId: string): LedgerRow[] {
  if (!existsSync(db)) return [];
  const conn = new Database(db, { readonly: true, timeout: 5000 });
  try {
    const table = conn.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'candor_effects'`).get();
    if (!table) return [];
    return conn
      .prepare(
        `SELECT step_id AS stepId, dispatch, attempt, tool, status FROM candor_effects WHERE thread_id = ? ORDER BY rowid`,
      )
      .all(threadId) as LedgerRow[];
  } finally {
    conn.close();
  }
}

/** The tools as the CLI builds them, for schema checks and side-effect kinds. */
const tools = new Map(buildToolkits([]).flatMap((k) => k.tools.map((t) => [t.name, t] as const)));

/** Whether a tool's schema refuses these parameters; null for a tool no toolkit has. */
export function schemaRefuses(tool: string, params: Record<string, unknown>): boolean | null {
  const spec = tools.get(tool);
  return spec ? !spec.schema.safeParse(params).success : null;
}

/** The tool's declared side effect, or null for an unknown tool. */
export function sideEffectOf(tool: string): string | null {
  return tools.get(tool)?.sideEffect ?? null;
}
