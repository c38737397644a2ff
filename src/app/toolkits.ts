import { travelToolkit } from "../../examples/travel/index.js";
import { workspaceToolkit } from "../tools/builtin/workspace.js";
import type { Toolkit } from "../tools/types.js";

/** The request the CLI suggests when it needs an example: a trip the travel demo's agents plan. */
export const EXAMPLE_REQUEST = "Plan a 2-day trip from Paris to Rome for 1 person";

/**
 * What the CLI and Studio run with: the built-in workspace tools (reader, analyzer, reporter, coder over the
 * current directory) and the travel demo's simulated agents. `allowHardLinks`: CANDOR_ALLOW_HARD_LINKS.
 */
export function defaultToolkits(options: { allowHardLinks?: boolean } = {}): Toolkit[] {
  return [workspaceToolkit({ allowHardLinks: options.allowHardLinks ?? false }), travelToolkit()];
}
