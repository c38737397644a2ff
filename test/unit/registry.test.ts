import { describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { ALL_CATEGORIES, ToolRegistry } from "../../src/tools/registry.js";
import type { Toolkit, WorkerType } from "../../src/tools/types.js";
import { caught, countingTool, travelKit } from "../fakes/toolkit-fixtures.js";

const read = countingTool("read_file", { category: "reading", produces: ["text"] }).spec;
const grep = countingTool("grep_text", { category: "reading", produces: ["matches"] }).spec;
const write = countingTool("write_file", { category: "writing", produces: ["file"] }).spec;
const deploy = countingTool("deploy_app", { category: "ops", produces: ["deployment"] }).spec;

const reader: WorkerType = { name: "reader", description: "reads", categories: ["reading"] };
const writer: WorkerType = { name: "writer", description: "writes", categories: ["writing"], tools: ["read_file"] };
const general: WorkerType = { name: "general", description: "anything", categories: [ALL_CATEGORIES], fallback: true };

const kit = (tools = [read, grep, write, deploy], workers = [reader, writer, general]): Toolkit => ({
  name: "kit",
  tools,
  workers,
});

function configurationError(fn: () => unknown): string {
  const e = caught(fn);
  expect(CandorError.hasCode(e, ErrorCode.CONFIGURATION), `expected CONFIGURATION, got ${String(e)}`).toBe(true);
  return (e as Error).message;
}

describe("ToolRegistry.create validates before anything runs", () => {
  it("refuses a tool registered twice, even across toolkits", () => {
    const message = configurationError(() =>
      ToolRegistry.create([kit(), { name: "second", tools: [{ ...read }], workers: [] }]),
    );
    expect(message).toContain('Tool "read_file" is registered twice (toolkit second)');
  });

  it("refuses a worker type registered twice", () => {
    const message = configurationError(() =>
      ToolRegistry.create([kit([read], [reader, { ...reader, description: "again" }])]),
    );
    expect(message).toContain('Worker type "reader" is registered twice');
    expect(message).toMatch(/rename one/);
  });

  it("names both toolkits of a clashing worker type, and how to rename an MCP server's", () => {
    // An MCP server named like a built-in worker ("reader") clashed with a message naming only the second toolkit.
    const mcp = { name: "mcp:reader", tools: [], workers: [{ ...reader, description: "Uses the MCP server" }] };
    const message = configurationError(() => ToolRegistry.create([kit(), mcp]));
    expect(message).toContain(`registered twice: by toolkit ${kit().name} and by toolkit mcp:reader`);
    expect(message).toContain('rename the server there, e.g. "reader_mcp"');
  });

  it("refuses a worker granted a tool that does not exist, listing the tools that do", () => {
    const message = configurationError(() =>
      ToolRegistry.create([
        kit(
          [read, write],
          [{ name: "writer", description: "", categories: ["writing"], tools: ["delete_everything"] }],
        ),
      ]),
    );
    expect(message).toContain('Worker type "writer" is granted tool "delete_everything", which does not exist');
    expect(message).toContain("Registered tools: read_file, write_file");
  });

  it.each(["readFile", "read-file", "Read_file", "1read", "read file", ""])(
    "refuses the tool name %j (not snake_case)",
    (name) => {
      const message = configurationError(() => ToolRegistry.create([kit([{ ...read, name }], [reader])]));
      expect(message).toMatch(/must be snake_case/);
    },
  );

  it("refuses a worker whose grant reaches no registered tool", () => {
    const message = configurationError(() =>
      ToolRegistry.create([kit([read], [reader, { name: "pilot", description: "", categories: ["flying"] }])]),
    );
    expect(message).toContain('Worker type "pilot" grants no existing tool (categories: flying)');
  });

  it("refuses a registry with no tools at all", () => {
    expect(configurationError(() => ToolRegistry.create([]))).toMatch(/No tools registered/);
  });

  it("accepts the travel toolkit", () => {
    const registry = ToolRegistry.create([travelKit()]);
    expect(registry.tools.size).toBe(9);
    expect(registry.workers.size).toBe(7);
  });
});

describe("grants", () => {
  const registry = ToolRegistry.create([kit()]);
  const names = (tools: readonly { name: string }[]) => tools.map((t) => t.name);

  it("a worker may use the tools of its categories", () => {
    expect(names(registry.grant("reader"))).toEqual(["read_file", "grep_text"]);
    expect(registry.isGranted("reader", "write_file")).toBe(false);
  });

  it("tools granted by name add to the categories", () => {
    expect(names(registry.grant("writer"))).toEqual(["read_file", "write_file"]);
    expect(registry.isGranted("writer", "grep_text")).toBe(false);
  });

  it("the '*' category grants every tool", () => {
    expect(names(registry.grant("general"))).toEqual(["read_file", "grep_text", "write_file", "deploy_app"]);
  });

  it("an unknown worker type is granted nothing", () => {
    expect(registry.grant("ghost")).toEqual([]);
    expect(registry.isGranted("ghost", "read_file")).toBe(false);
  });

  it("a step may use only the tools it lists that its worker is granted", () => {
    expect(names(registry.toolsForStep({ workerType: "reader", tools: ["grep_text", "write_file"] }))).toEqual([
      "grep_text",
    ]);
    expect(registry.toolsForStep({ workerType: "reader", tools: [] })).toEqual([]);
  });
});

describe("workerForTool and producersOf", () => {
  it("prefers a specialist over the fallback worker", () => {
    const registry = ToolRegistry.create([kit()]);
    expect(registry.workerForTool("read_file")?.name).not.toBe("general");
    expect(registry.workerForTool("deploy_app")?.name).toBe("general");
  });

  it("prefers the worker granted the tool by name among specialists", () => {
    const registry = ToolRegistry.create([kit([read, write], [reader, writer])]);
    const byName: WorkerType = { name: "librarian", description: "", categories: [], tools: ["read_file"] };
    const withByName = ToolRegistry.create([kit([read, write], [reader, byName])]);
    expect(registry.workerForTool("read_file")?.name).toBe("writer");
    expect(withByName.workerForTool("read_file")?.name).toBe("librarian");
  });

  it("is undefined for a tool no worker may use", () => {
    const registry = ToolRegistry.create([kit([read, deploy], [reader])]);
    expect(registry.workerForTool("deploy_app")).toBeUndefined();
  });

  it("finds every tool producing any of the outputs", () => {
    const registry = ToolRegistry.create([travelKit()]);
    expect(registry.producersOf(["flight"]).map((t) => t.name)).toEqual(["search_flights", "search_flights_backup"]);
    expect(registry.producersOf(["hotel", "itinerary"]).map((t) => t.name)).toEqual([
      "search_hotels",
      "build_itinerary",
    ]);
    expect(registry.producersOf(["nothing"])).toEqual([]);
  });

  it("maps every travel tool to its own agent, the backup search to the backup agent", () => {
    const registry = ToolRegistry.create([travelKit()]);
    expect(Object.fromEntries([...registry.tools.keys()].map((t) => [t, registry.workerForTool(t)?.name]))).toEqual({
      search_flights: "flight_agent",
      search_flights_backup: "backup_flight_agent",
      search_hotels: "hotel_agent",
      search_activities: "activities_agent",
      find_attractions: "activities_agent",
      plan_days: "activities_agent",
      check_budget: "budget_agent",
      build_itinerary: "itinerary_agent",
      book_trip: "booking_agent",
    });
  });
});

describe("optional inputs (optionalConsumes)", () => {
  const summarize = countingTool("summarize", {
    category: "reading",
    consumes: ["text", "matches"],
    optionalConsumes: ["matches"],
    produces: ["summary"],
  }).spec;

  it("refuses an optional input no registered tool produces: it would always be missing", () => {
    const message = configurationError(() => ToolRegistry.create([kit([read, summarize], [reader])]));
    expect(message).toContain(
      'Tool "summarize" declares "matches" as an optional input, but no registered tool produces it',
    );
  });

  it("splits a step's inputs into required and optional; an input another of the step's tools requires is required", () => {
    const strict = countingTool("summarize_strict", {
      category: "reading",
      consumes: ["text", "matches"],
      produces: ["summary"],
    }).spec;
    const registry = ToolRegistry.create([kit([read, grep, summarize, strict], [reader])]);
    expect(registry.inputsOf({ tools: ["summarize"] })).toEqual({ required: ["text"], optional: ["matches"] });
    expect(registry.inputsOf({ tools: ["summarize", "summarize_strict"] })).toEqual({
      required: ["text", "matches"],
      optional: [],
    });
    expect(registry.inputsOf({ tools: ["no_such_tool"] })).toEqual({ required: [], optional: [] });
  });

  it("the travel budget check and itinerary take the trip's parts as optional (a request may rule one out), the check's status as required", () => {
    const registry = ToolRegistry.create([travelKit()]);
    expect(registry.inputsOf({ tools: ["check_budget"] })).toEqual({
      required: [],
      optional: ["flight", "hotel", "activities"],
    });
    expect(registry.inputsOf({ tools: ["build_itinerary"] })).toEqual({
      required: ["budget_status"],
      optional: ["flight", "hotel", "activities"],
    });
    expect(registry.inputsOf({ tools: ["plan_days"] })).toEqual({ required: ["attractions"], optional: [] });
  });

  it("a step with side effects takes every input as required: a booking never acts on part of what was planned", () => {
    // Regression: after the optional-inputs merge, skipping the itinerary let book_trip run on the flight and hotel alone.
    const registry = ToolRegistry.create([travelKit()]);
    const booking = registry.inputsOf({ tools: ["book_trip"] });
    expect(booking.optional).toEqual([]);
    expect(booking.required).toEqual(expect.arrayContaining(["itinerary"]));
  });
});
