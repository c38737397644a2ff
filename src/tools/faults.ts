import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import { sleep, waitForAbort } from "./sleep.js";
import type { ToolContext, ToolSpec, Toolkit } from "./types.js";

import { FAULT_KINDS } from "./fault-kinds.js";

export { FAULT_KINDS };

const FaultKind = z.enum(FAULT_KINDS);
type FaultKind = z.infer<typeof FaultKind>;

/** One injected fault: which tool, what goes wrong, and for how many calls. */
export const FaultSpec = z.object({
  tool: z.string().min(1),
  kind: FaultKind,
  /** Calls that fail before the tool behaves again; null: every call fails. */
  times: z.number().int().positive().nullable(),
});
export type FaultSpec = z.infer<typeof FaultSpec>;

/** How much longer than its estimate a `slow` call takes. */
export const SLOW_FACTOR = 5;

const FORM = `expected tool=kind[*N] with kind one of ${FAULT_KINDS.join(", ")} and N a positive count (e.g. read_file=timeout*1)`;
const SPEC = /^([A-Za-z][A-Za-z0-9_]*)\s*=\s*([A-Za-z]+)\s*(?:\*\s*(\d+))?$/;

/** Parses `tool=kind` (every call fails) or `tool=kind*N` (the first N calls fail). Throws INVALID_REQUEST. */
export function parseFaultSpec(spec: string): FaultSpec {
  const match = SPEC.exec(spec.trim());
  const kind = FaultKind.safeParse(match?.[2]?.toLowerCase());
  const times = match?.[3] === undefined ? null : Number(match[3]);
  if (!match || !kind.success || times === 0) {
    throw new CandorError(`Fault "${spec}" is malformed: ${FORM}.`, ErrorCode.INVALID_REQUEST, { details: { spec } });
  }
  return { tool: match[1] ?? "", kind: kind.data, times };
}

/** Parses several specs; each entry may itself be a comma-separated list (as a CLI flag value often is). */
export function parseFaultSpecs(specs: readonly string[]): FaultSpec[] {
  return specs
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(parseFaultSpec);
}

/**
 * Returns copies of the toolkits whose named tools misbehave as specified. Several faults on one tool apply in
 * order: `t=timeout*1` then `t=error*1` makes the first call hang, the second throw, and later calls behave.
 * Counters live in the returned tools, so they persist for as long as those tools are used (one process, any
 * number of runs). Throws INVALID_REQUEST for a tool name no toolkit has.
 */
export function withFaults(toolkits: readonly Toolkit[], faults: readonly FaultSpec[]): Toolkit[] {
  const known = new Set(toolkits.flatMap((k) => k.tools.map((t) => t.name)));
  for (const fault of faults) {
    if (!known.has(fault.tool)) {
      throw new CandorError(
        `Fault targets unknown tool "${fault.tool}". Known tools: ${[...known].sort().join(", ")}.`,
        ErrorCode.INVALID_REQUEST,
        { details: { tool: fault.tool, known: [...known].sort() } },
      );
    }
  }
  return toolkits.map((kit) => ({
    ...kit,
    tools: kit.tools.map((tool) => {
      const mine = faults.filter((f) => f.tool === tool.name);
      return mine.length === 0 ? tool : faulty(tool, mine);
    }),
  }));
}

function faulty(tool: ToolSpec, faults: readonly FaultSpec[]): ToolSpec {
  const remaining = faults.map((f) => f.times ?? Number.POSITIVE_INFINITY);
  const next = (): FaultKind | null => {
    const i = remaining.findIndex((n) => n > 0);
    if (i < 0) return null;
    remaining[i] = (remaining[i] ?? 0) - 1;
    return faults[i]?.kind ?? null;
  };
  return {
    ...tool,
    // Marks the copy, so a run using it is known to be simulated (its outcome is kept apart from real runs').
    injectedFaults: [
      ...(tool.injectedFaults ?? []),
      ...faults.map((f) => `${f.kind}${f.times === null ? "" : `*${f.times}`}`),
    ],
    run: async (args: unknown, ctx: ToolContext) => {
      const kind = next();
      if (kind === null) return tool.run(args, ctx);
      return inject(kind, tool, args, ctx);
    },
  };
}

async function inject(kind: FaultKind, tool: ToolSpec, args: unknown, ctx: ToolContext): Promise<unknown> {
  switch (kind) {
    case "timeout":
      return waitForAbort(ctx.signal);
    case "error":
      throw new Error(`${tool.name} failed: simulated internal error (HTTP 500)`);
    case "unavailable":
      throw new CandorError(
        `${tool.name}: the requested option is fully booked / unavailable`,
        ErrorCode.RESOURCE_UNAVAILABLE,
        {
          details: { tool: tool.name, injected: true },
        },
      );
    case "slow":
      await sleep(tool.estimates.durationMs * SLOW_FACTOR, ctx.signal);
      return tool.run(args, ctx);
    case "garbage":
      return garbage(tool.name);
    case "complex":
      throw new CandorError(
        `${tool.name}: the request is too complex to handle in one step (simulated); split it into smaller steps`,
        ErrorCode.TOOL_FAILED,
        {
          details: { tool: tool.name, injected: true, failureClass: "too_complex" },
        },
      );
  }
}

function garbage(name: string): string {
  return `<!DOCTYPE html>\u00a4\u00a4 ${name} 0x7f3a ~~ qwzx flrgn ]]}{ \ufffd\ufffd lorem ipsum NaN undefined <<EOF`;
}
