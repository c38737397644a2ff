import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Plan } from "../domain/plan.js";
import { loadLearnedConfig } from "../memory/learning.js";
import type { ToolRegistry } from "../tools/registry.js";
import { applyAdjustments, type AppliedLearning } from "./adjustments.js";

/**
 * What UNDERSTAND calls after planning: the user's active adjustments applied to the plan's steps, each announced
 * with the reflection it came from and how to revoke it. A practice run (faults injected) applies only what
 * practice runs taught, and a real run only what real runs taught. No store: the plan as it is.
 */
export async function applyLearning(
  store: BaseStore | undefined,
  userId: string,
  plan: Plan,
  registry: ToolRegistry,
  simulated: boolean,
): Promise<AppliedLearning> {
  if (!store) return { plan, notes: [] };
  const config = await loadLearnedConfig(store, userId);
  const usable = config.adjustments.filter((a) => (a.simulated === true) === simulated);
  const user = userId === "default" ? "" : ` --user ${userId}`;
  return applyAdjustments(plan, usable, registry, (id) => `Revoke it with: candor memory revoke ${id}${user}`);
}
