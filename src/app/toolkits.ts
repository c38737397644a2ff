import { travelToolkit } from "../../examples/travel/index.js";
import { workspaceToolkit } from "../tools/builtin/workspace.js";
import type { Toolkit } from "../tools/types.js";

/**
 * What the CLI and Studio run with: the built-in workspace tools (reader, analyzer, reporter, coder over the
 * current directory) and the travel demo's simulated agents.
 */
export function defaultToolkits(): Toolkit[] {
  return [workspaceToolkit(), travelToolkit()];
}
