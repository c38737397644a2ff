import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";

/** One planning decision (seed 000 scenario 19): what was decided, why, and what it did to confidence. */
export interface Decision {
  operation: "plan" | "approval" | "route" | "dispatch" | "step_result" | "classify" | "strategy" | "revision" | "escalation" | "human_decision" | "synthesize" | "reflect" | "report";
  planId: string | null;
  taskId?: string | null;
  threadId?: string | null;
  /** A short summary of what the decision was made on (goal, step, error). */
  input: string;
  decision: string;
  reasoning: string;
  confidenceBefore?: number | null;
  confidenceAfter?: number | null;
  /** Cost of the operation itself (model tokens or tool cost). */
  cost?: number;
  /** For a plan: what the planner understood of the request (domain/understanding.ts), recorded whole. */
  understanding?: unknown;
}

export interface DecisionLog {
  record(decision: Decision): void;
}

/**
 * Writes decisions as JSON lines with pino (timestamp ISO 8601, level INFO), synchronously so a crash loses
 * nothing already decided. `candor logs` reads the same file back and filters it by plan, step and operation.
 */
export function fileDecisionLog(file: string, level: string = "info"): DecisionLog & { logger: Logger } {
  mkdirSync(dirname(file), { recursive: true });
  const logger = pino(
    { level, base: { app: "candor" }, timestamp: pino.stdTimeFunctions.isoTime, messageKey: "msg" },
    pino.destination({ dest: file, sync: true, mkdir: true }),
  );
  return {
    logger,
    record(d) {
      logger.info({ ...d, taskId: d.taskId ?? null, cost: d.cost ?? 0 }, `${d.operation}: ${d.decision}`);
    },
  };
}

/** Keeps decisions in memory: for tests and for apps that read them back through their own sink. */
export function memoryDecisionLog(): DecisionLog & { entries: Decision[] } {
  const entries: Decision[] = [];
  return { entries, record: (d) => void entries.push(d) };
}

export const silentDecisionLog: DecisionLog = { record: () => undefined };
