import { z } from "zod";
import { ALL_CATEGORIES, ToolRegistry } from "../../src/tools/registry.js";
import type { Toolkit, ToolSpec } from "../../src/tools/types.js";

/**
 * A three-tool pipeline for planner tests: fetch_data → analyze_data → write_report, each tool in its own
 * category so every specialist worker grants exactly one tool and `general` grants them all.
 */

function tool(
  spec: Pick<ToolSpec, "name" | "description" | "category" | "keywords" | "consumes" | "produces" | "estimates">,
): ToolSpec {
  return {
    ...spec,
    sideEffect: "none",
    needsApproval: false,
    schema: z.object({ topic: z.string().nullable().default(null) }),
    run: async () => ({ summary: `${spec.name} done` }),
  };
}

const pipelineToolkit: Toolkit = {
  name: "pipeline",
  tools: [
    tool({
      name: "fetch_data",
      description: "Fetches the raw data set for a topic.",
      category: "data",
      keywords: ["fetch", "data", "download"],
      consumes: [],
      produces: ["data"],
      estimates: { durationMs: 200, cost: 0.01 },
    }),
    tool({
      name: "analyze_data",
      description: "Finds trends and outliers in a data set.",
      category: "analysis",
      keywords: ["analyze", "analyse", "trends"],
      consumes: ["data"],
      produces: ["analysis"],
      estimates: { durationMs: 500, cost: 0.05 },
    }),
    tool({
      name: "write_report",
      description: "Writes a short report from an analysis.",
      category: "reporting",
      keywords: ["report", "write", "summary"],
      consumes: ["analysis"],
      produces: ["report"],
      estimates: { durationMs: 300, cost: 0.02 },
    }),
  ],
  workers: [
    { name: "reader", description: "Fetches and reads data.", categories: ["data"] },
    { name: "analyzer", description: "Analyses data and finds patterns.", categories: ["analysis"] },
    { name: "reporter", description: "Turns findings into reports.", categories: ["reporting"] },
    { name: "general", description: "Fallback worker with every tool.", categories: [ALL_CATEGORIES], fallback: true },
  ],
};

/** A fresh registry over the pipeline toolkit. */
export function pipelineRegistry(): ToolRegistry {
  return ToolRegistry.create([pipelineToolkit]);
}
