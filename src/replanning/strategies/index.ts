import type { StrategyType } from "../../domain/revision.js";
import { adjustParameters } from "./adjust-parameters.js";
import { findWorkaround } from "./find-workaround.js";
import { notYetAvailable } from "./not-yet.js";
import { retryDifferentAgent } from "./retry-different-agent.js";
import { skip } from "./skip.js";
import type { Strategy } from "./types.js";

export * from "./types.js";
export { adjustParameters, violationFacts } from "./adjust-parameters.js";
export { findWorkaround } from "./find-workaround.js";
export { retryDifferentAgent } from "./retry-different-agent.js";
export { skip, skipWithReason } from "./skip.js";

/** Every strategy by name: one pure function each, behind one node each. */
export const STRATEGIES: Record<StrategyType, Strategy> = {
  RETRY_DIFFERENT_AGENT: retryDifferentAgent,
  RETRY_WITH_PARAMS: notYetAvailable("RETRY_WITH_PARAMS"),
  SWAP_TOOL: notYetAvailable("SWAP_TOOL"),
  DECOMPOSE: notYetAvailable("DECOMPOSE"),
  ADJUST_PARAMETERS: adjustParameters,
  FIX_DEPENDENCIES: notYetAvailable("FIX_DEPENDENCIES"),
  FIND_WORKAROUND: findWorkaround,
  SKIP: skip,
};

/** Strategies that really revise the plan today (the others skip and say so). */
export const IMPLEMENTED: readonly StrategyType[] = ["RETRY_DIFFERENT_AGENT", "ADJUST_PARAMETERS", "FIND_WORKAROUND", "SKIP"];
