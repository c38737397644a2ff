import type { StrategyType } from "../../domain/revision.js";
import { skipWithReason } from "./skip.js";
import type { Strategy } from "./types.js";

/**
 * Strategies whose node exists but whose planning is not built yet (issue 3: RETRY_WITH_PARAMS, SWAP_TOOL,
 * DECOMPOSE, FIX_DEPENDENCIES). They skip the step and say so plainly rather than pretend to recover.
 */
export function notYetAvailable(strategy: StrategyType): Strategy {
  return (input) => skipWithReason(input, `${strategy} would fit this failure (${input.failure.failureClass}), but Candor cannot do it yet.`);
}
