import { travelToolkit } from "../../examples/travel/index.js";
import { workspaceToolkit } from "../tools/builtin/workspace.js";
import type { Toolkit } from "../tools/types.js";

/**
 * What the CLI and Studio run with: the built-in workspace tools (reader, analyzer, reporter, coder over the
 * current directory) and the travel demo's simulated agents. `allowHardLinks`: CANDOR_ALLOW_HARD_LINKS.
 */
export function defaultToolkits(options: { allowHardLinks?: boolean } = {}): Toolkit[] {
  return [workspaceToolkit({ allowHardLinks: options.allowHardLinks ?? false }), travelToolkit()];
}
