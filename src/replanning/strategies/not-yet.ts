import type { StrategyType } from "../../domain/revision.js";
import { skipWithReason } from "./skip.js";
import type { Strategy } from "./types.js";

/**
 * For a strategy whose node exists before its planning does (none today: every strategy in STRATEGIES is built).
 * It skips the step and says so plainly rather than pretend to recover.
 */
export function notYetAvailable(strategy: StrategyType): Strategy {
  return (input) => skipWithReason(input, `${strategy} would fit this failure (${input.failure.failureClass}), but Candor cannot do it yet.`);
}
