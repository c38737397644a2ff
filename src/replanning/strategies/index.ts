import type { StrategyType } from "../../domain/revision.js";
import { adjustParameters } from "./adjust-parameters.js";
import { findWorkaround } from "./find-workaround.js";
import { decompose } from "./decompose.js";
import { fixDependencies } from "./fix-dependencies.js";
import { retryDifferentAgent } from "./retry-different-agent.js";
import { retryWithParams } from "./retry-with-params.js";
import { swapTool } from "./swap-tool.js";
import { skip } from "./skip.js";
import type { Strategy } from "./types.js";

export * from "./types.js";
export { adjustParameters, violationFacts } from "./adjust-parameters.js";
export { findWorkaround } from "./find-workaround.js";
export { retryDifferentAgent } from "./retry-different-agent.js";
export { retryWithParams } from "./retry-with-params.js";
export { swapTool } from "./swap-tool.js";
export { decompose } from "./decompose.js";
export { fixDependencies } from "./fix-dependencies.js";
export { skip, skipWithReason } from "./skip.js";

/** Every strategy by name: one pure function each, behind one node each. */
export const STRATEGIES: Record<StrategyType, Strategy> = {
  RETRY_DIFFERENT_AGENT: retryDifferentAgent,
  RETRY_WITH_PARAMS: retryWithParams,
  SWAP_TOOL: swapTool,
  DECOMPOSE: decompose,
  ADJUST_PARAMETERS: adjustParameters,
  FIX_DEPENDENCIES: fixDependencies,
  FIND_WORKAROUND: findWorkaround,
  SKIP: skip,
};
