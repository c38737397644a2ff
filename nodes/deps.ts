import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Notification, Progress } from "../src/domain/notification.js";
import type { Reasoner } from "../src/reasoning/types.js";
import type { EffectLedger } from "../src/tools/effects.js";
import type { ToolRegistry } from "../src/tools/registry.js";
import type { DecisionLog } from "../src/transparency/decision-log.js";

/** What the nodes are given when the graph is built: nothing is imported or constructed inside a node. */
export interface NodeDeps {
  registry: ToolRegistry;
  reasoner: Reasoner;
  decisionLog: DecisionLog;
  /** Where the decision log is, to tell users where details are (null when decisions are not written to a file). */
  logFile: string | null;
  /** Records calls with side effects so a crash or a replay never repeats one (absent: no ledger, e.g. Studio). */
  ledger?: EffectLedger;
}

/** Emits notifications as `custom` stream events the moment they are created (they also go into state). */
export function emitNotifications(config: LangGraphRunnableConfig, notifications: readonly Notification[]): void {
  for (const notification of notifications) config.writer?.({ type: "notification", notification });
}

export function emitProgress(config: LangGraphRunnableConfig, progress: Progress): void {
  config.writer?.({ type: "progress", progress });
}

export function threadIdOf(config: LangGraphRunnableConfig): string | null {
  const id: unknown = config.configurable?.thread_id;
  return typeof id === "string" ? id : null;
}
