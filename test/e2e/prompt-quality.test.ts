import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main, type PromptCheckRow } from "../../bench/prompt-quality.js";
import { SCENARIOS } from "../../bench/scenarios.js";
import { FakeOpenAIServer, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { childEnv, ROOT, STACK_LINE, tempDir } from "./helpers.js";

/** A recovery as a strict-mode model sends it (every field present, params as a JSON string). */
function proposal(
  strategy: string,
  confidence: number,
  modifications: Record<string, unknown> = {},
): { json: unknown } {
  return {
    json: {
      strategy,
      rationale: `${strategy} should get this step done.`,
      confidence,
      modifications: { paramsJson: null, tool: null, workerType: null, substeps: null, ...modifications },
    },
  };
}

/** Prose where JSON was asked for: sent three times, because the client retries once and Candor asks once more without a schema. */
const PROSE = "I would search another hotel provider and try again.";

/** In SCENARIOS order, one question per scenario (each scenario yields one failure at select_strategy). */
const SCRIPT: ScriptedResponse[] = [
  // timeout: a good answer that arrives after the 5 s limit.
  { ...proposal("SWAP_TOOL", 0.8, { tool: "search_flights_backup" }), delayMs: 6_500 },
  // agent_unavailable: the backup provider produces the same flights.
  proposal("SWAP_TOOL", 0.8, { tool: "search_flights_backup" }),
  // resource_unavailable: no JSON at all.
  PROSE,
  PROSE,
  PROSE,
  // constraint_violated: unsure, so below the 0.6 minimum.
  proposal("SKIP", 0.4),
  // invalid_parameters: items within the schema's maximum of 100.
  proposal("RETRY_WITH_PARAMS", 0.85, { paramsJson: JSON.stringify({ items: 50 }) }),
  // wrong_tool: the tool ops_main is granted.
  proposal("SWAP_TOOL", 0.75, { tool: "prepare", paramsJson: JSON.stringify({ items: 3 }) }),
  // too_complex: passes validation, but its first part summarises rows that nothing before it fetches.
  proposal("DECOMPOSE", 0.7, {
    substeps: [
      { description: "Summarise the rows into report data", tool: "summarize_rows", paramsJson: null },
      { description: "Prepare the report data", tool: "prepare", paramsJson: JSON.stringify({ items: 2 }) },
    ],
  }),
  // dependency_failed: a strategy only the rules may choose.
  proposal("FIX_DEPENDENCIES", 0.8),
  // policy_blocked: valid, but not what the rules would do (they only skip).
  proposal("RETRY_DIFFERENT_AGENT", 0.7, { workerType: "ops_alt" }),
];

function capture() {
  const lines = { out: "", err: "" };
  return { lines, io: { stdout: (t: string) => void (lines.out += t), stderr: (t: string) => void (lines.err += t) } };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("npm run prompt-check (bench/prompt-quality.ts)", () => {
  it("asks every bench failure through the real model path, validates as the graph does, and writes the report", async () => {
    expect(SCENARIOS).toHaveLength(9);
    const fake = new FakeOpenAIServer(SCRIPT);
    const server = await fake.start();
    cleanups.push(server.close);
    const tmp = tempDir("candor-prompt-check-");
    cleanups.push(tmp.cleanup);
    const outPath = path.join(tmp.dir, "nested", "PROMPT-QUALITY.md");
    const { io, lines } = capture();

    const result = await main(["--model", "fake-gpt-4"], {
      ...io,
      env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseUrl },
      outPath,
    });

    expect(lines.err).not.toMatch(STACK_LINE);
    expect(result.exitCode).toBe(0);
    fake.assertConsumed();
    expect(fake.requests).toHaveLength(SCRIPT.length);
    // The production request: strict structured output named "recovery", carrying the replan prompt.
    expect(fake.requests[0]!.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "recovery", strict: true },
    });
    expect(fake.requests[0]!.body.model).toBe("fake-gpt-4");
    expect(fake.promptOf(1)).toContain("<failed_step>\nid: flight");
    // The third try at the prose answer goes without a schema.
    expect(fake.requests[4]!.body.response_format).toBeUndefined();

    const report = result.report!;
    const byClass = Object.fromEntries(report.rows.map((r) => [r.cls, r])) as Record<string, PromptCheckRow>;
    expect(report.rows.map((r) => r.cls)).toEqual(SCENARIOS.map((s) => s.cls));
    expect(report.rows.map((r) => r.outcome)).toEqual([
      "late",
      "valid",
      "unusable",
      "refused",
      "valid",
      "valid",
      "refused",
      "refused",
      "valid",
    ]);

    expect(byClass.timeout).toMatchObject({ inTime: false, strategy: null, agrees: null, confidence: null });
    expect(byClass.timeout!.reason).toContain("did not answer within 5 s");
    expect(byClass.timeout!.latencyMs).toBeGreaterThanOrEqual(4_900);
    expect(byClass.timeout!.latencyMs).toBeLessThan(6_000);
    expect(byClass.agent_unavailable).toMatchObject({
      strategy: "SWAP_TOOL",
      agrees: true,
      confidence: 0.8,
      reason: null,
    });
    expect(byClass.resource_unavailable).toMatchObject({ inTime: true, strategy: null });
    expect(byClass.resource_unavailable!.reason).toContain("its answer has no usable JSON");
    expect(byClass.constraint_violated).toMatchObject({ strategy: "SKIP", agrees: true, confidence: 0.4 });
    expect(byClass.constraint_violated!.reason).toContain("confidence 0.4 is below 0.6");
    expect(byClass.too_complex).toMatchObject({ strategy: "DECOMPOSE", agrees: true, confidence: 0.7 });
    // Refused by validateProposal itself now (a part without its inputs), before select_strategy's guard.
    expect(byClass.too_complex!.reason).toContain(
      "summarize_rows, which needs rows that neither the failed step's inputs nor an earlier substep provide",
    );
    expect(byClass.dependency_failed).toMatchObject({ strategy: "FIX_DEPENDENCIES", agrees: true });
    expect(byClass.dependency_failed!.reason).toContain("FIX_DEPENDENCIES is not accepted from a model");
    expect(byClass.policy_blocked).toMatchObject({
      outcome: "valid",
      strategy: "RETRY_DIFFERENT_AGENT",
      agrees: false,
      rulesWouldUse: ["SKIP"],
    });

    expect(report.totals).toMatchObject({
      asked: 9,
      inTime: 8,
      valid: 4,
      refused: 3,
      unusable: 1,
      late: 1,
      unreachable: 0,
      proposed: 7,
      agreeing: 6,
      agreeingBySkip: 1,
    });
    expect(report.totals.validRate).toBeCloseTo(4 / 9);
    expect(report.totals.agreementRate).toBeCloseTo(6 / 7);
    expect(report.totals.medianLatencyMs).toBeLessThan(5_000);

    expect(result.outPath).toBe(outPath);
    expect(existsSync(outPath)).toBe(true);
    const md = readFileSync(outPath, "utf8");
    expect(md).toContain("with model **fake-gpt-4**");
    expect(md).toContain(`Generated by \`npm run prompt-check\` on ${report.date}`);
    expect(md).toContain("| policy_blocked | prepare | yes | valid | RETRY_DIFFERENT_AGENT | SKIP | no | 0.70 |");
    expect(md).toContain("| timeout | flight | no (late) | – | – |");
    expect(md).toContain("Valid: 4 of 9 (44%); refused: 3; not a usable proposal: 1");
    expect(md).toContain("Agreement with the rules' strategies: 6 of 7 proposals (86%)");
    expect(md).toContain(
      "constraint_violated (budget_status, refused): The model's proposal was refused: its confidence 0.4",
    );
    expect(lines.out).toContain("Valid: 4 of 9 (44%); refused: 3; not a usable proposal: 1");
    expect(lines.out).toMatch(/^class\s+step\s+in time\s+verdict\s+strategy/m);
  });

  it("stops after the first question when the model cannot be reached, and writes nothing", async () => {
    // A port that was just listening and is now closed: connection refused, with no network involved.
    const server = await new FakeOpenAIServer().start();
    await server.close();
    const tmp = tempDir("candor-prompt-check-");
    cleanups.push(tmp.cleanup);
    const outPath = path.join(tmp.dir, "PROMPT-QUALITY.md");
    const { io, lines } = capture();

    const result = await main([], {
      ...io,
      env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseUrl },
      outPath,
    });

    expect(result).toEqual({ exitCode: 1, report: null, outPath: null });
    expect(lines.err).toContain("The model could not be reached, so nothing was measured");
    expect(lines.err).toContain("the model could not be asked");
    expect(lines.err).not.toMatch(STACK_LINE);
    expect(existsSync(outPath)).toBe(false);
  });

  it("without OPENAI_API_KEY exits 2 with one paragraph: what to set, that it is paid, how many calls", async () => {
    const tmp = tempDir("candor-prompt-check-");
    cleanups.push(tmp.cleanup);
    const outPath = path.join(tmp.dir, "PROMPT-QUALITY.md");
    const { io, lines } = capture();

    const result = await main([], { ...io, env: { CANDOR_MODEL: "gpt-4o" }, outPath });

    expect(result).toEqual({ exitCode: 2, report: null, outPath: null });
    expect(lines.out).toBe("");
    expect(lines.err.trim().split("\n")).toHaveLength(1);
    expect(lines.err).toContain("OPENAI_API_KEY is not set");
    expect(lines.err).toContain("paid API call");
    expect(lines.err).toContain("about 9 requests");
    expect(lines.err).toContain("it uses gpt-4o unless");
    expect(lines.err).toContain("OPENAI_BASE_URL or pass --base-url");
    expect(existsSync(outPath)).toBe(false);
  });

  it("as a process without a key (even with one in a .env), prints the paragraph and exits 2, no stack trace", async () => {
    // An empty OPENAI_API_KEY wins over a .env in the repository, so this can never reach a paid model.
    const child = spawn(process.execPath, ["--import", "tsx", "bench/prompt-quality.ts"], {
      cwd: ROOT,
      env: childEnv({ OPENAI_API_KEY: "" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("prompt-check needs a chat model, but OPENAI_API_KEY is not set.");
    expect(stderr).not.toMatch(STACK_LINE);
  });
});
