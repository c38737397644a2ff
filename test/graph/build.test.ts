import { describe, expect, it } from "vitest";
import { TRAVEL_WORKERS, travelToolkit } from "../../examples/travel/index.js";
import { buildAgentGraph } from "../../graphs/agent.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import type { Toolkit } from "../../src/tools/types.js";
import { countingToolkits } from "../fakes/graph-harness.js";

/** What buildAgentGraph threw, or a failure when it did not throw. */
function buildError(toolkits: Toolkit[]): CandorError {
  try {
    buildAgentGraph({ toolkits });
  } catch (e) {
    if (CandorError.isInstance(e)) return e;
    throw e;
  }
  throw new Error("buildAgentGraph accepted an invalid configuration");
}

describe("buildAgentGraph validates its toolkits before anything runs", () => {
  it("rejects a tool name registered twice, naming it, without calling any tool", () => {
    const { toolkits, calls } = countingToolkits([
      travelToolkit({ latencyMs: 0 }),
      { name: "extra", tools: [travelToolkit().tools[0]!], workers: [] },
    ]);
    const error = buildError(toolkits);
    expect(error.code).toBe(ErrorCode.CONFIGURATION);
    expect(error.message).toMatch(/Tool "search_flights" is registered twice/);
    expect(calls.total()).toBe(0);
  });

  it("rejects a worker granted a tool that does not exist", () => {
    const kit = travelToolkit({ latencyMs: 0 });
    const error = buildError([
      {
        ...kit,
        workers: [
          ...kit.workers,
          { name: "train_agent", description: "Books trains.", categories: [], tools: ["search_trains"] },
        ],
      },
    ]);
    expect(error.code).toBe(ErrorCode.CONFIGURATION);
    expect(error.message).toMatch(/"train_agent" is granted tool "search_trains", which does not exist/);
  });

  it("rejects a worker type registered twice", () => {
    const kit = travelToolkit({ latencyMs: 0 });
    const error = buildError([kit, { name: "more", tools: [], workers: [TRAVEL_WORKERS[0]!] }]);
    expect(error.code).toBe(ErrorCode.CONFIGURATION);
    expect(error.message).toMatch(/Worker type "flight_agent" is registered twice/);
  });

  it("rejects an empty toolkit list", () => {
    const error = buildError([]);
    expect(error.code).toBe(ErrorCode.CONFIGURATION);
    expect(error.message).toMatch(/at least one toolkit/);
    const empty = buildError([{ name: "empty", tools: [], workers: [] }]);
    expect(empty.code).toBe(ErrorCode.CONFIGURATION);
    expect(empty.message).toMatch(/No tools registered/);
  });

  it("returns an uncompiled graph for a valid toolkit (callers compile it)", () => {
    const graph = buildAgentGraph({ toolkits: [travelToolkit({ latencyMs: 0 })] });
    expect(typeof graph.compile).toBe("function");
    expect(Object.keys(graph.nodes)).toEqual(
      expect.arrayContaining([
        "understand",
        "execute",
        "worker",
        "synthesize",
        "select_strategy",
        "human_interrupt",
        "reflect",
        "finalize",
      ]),
    );
  });
});
