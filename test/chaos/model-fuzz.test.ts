/**
 * The model-output fuzz corpus (issue 8, "the tools that find the next ones"): over 300 malformed or hostile
 * answers (model-corpus.ts) reach the llm reasoner through the fake OpenAI server and the real ChatOpenAI. For
 * every one: no crash, no ungranted tool in what is kept, and every fallback said — a note that the model's
 * answer was unusable and what was used instead. Most cases call the reasoner directly; a handful run the whole
 * graph, where tools are spied on and a tool output tells the model to call tools it is not granted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { ExecutionFeedback } from "../../src/domain/feedback.js";
import type { Plan } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { findCycle } from "../../src/planning/validate.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { validateProposal } from "../../src/replanning/proposal.js";
import { LlmReasoner, type StructuredOutputMethod } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import type { RecoveryQuestion, SynthesisInput } from "../../src/reasoning/types.js";
import { generalToolkit } from "../../src/tools/general.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { Toolkit } from "../../src/tools/types.js";
import { FakeOpenAIServer, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { INJECTION, modelCorpus, VALID_PLAN, VALID_RECOVERY, VALID_SYNTHESIS, type ModelCase } from "./model-corpus.js";
import { planOf } from "../../src/domain/plan-state.js";

const corpus = modelCorpus();
const REQUEST = PlanningRequest.parse({
  userIntent: "Plan a 3-day trip from Madrid to Paris for 2 people under $2000",
});
const registry = ToolRegistry.create([travelToolkit({ latencyMs: 1 }), workspaceToolkit(), generalToolkit()]);

/** A reasoner on the real ChatOpenAI, talking to a fake server that answers `answer` to every request it gets. */
async function reasonerFor(answer: ScriptedResponse, method?: StructuredOutputMethod) {
  // The reasoner asks at most twice per question (again without a schema when the answer cannot be parsed).
  const fake = new FakeOpenAIServer([answer, answer]);
  const server = await fake.start();
  const notes: string[] = [];
  const model = createChatModel({ apiKey: "test-key", baseUrl: server.baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const reasoner = new LlmReasoner({
    model,
    fallback: new RulesReasoner(),
    onFallback: (n) => notes.push(n),
    timeoutMs: 10_000,
    recoveryTimeoutMs: 10_000,
    ...(method ? { method } : {}),
  });
  return { fake, reasoner, notes, close: server.close };
}

/** Every step's tools exist and are granted to its worker; dependencies exist and make no cycle. */
function ungrantedIn(plan: Plan): string[] {
  const ids = new Set(plan.steps.map((s) => s.id));
  const problems: string[] = [];
  for (const s of plan.steps) {
    for (const t of s.tools)
      if (!registry.tool(t) || !registry.isGranted(s.workerType, t))
        problems.push(`${s.id}: ${s.workerType} may not use ${t}`);
    for (const d of s.dependsOn) if (!ids.has(d)) problems.push(`${s.id} depends on missing ${d}`);
  }
  const cycle = findCycle(plan.steps);
  if (cycle) problems.push(`cycle ${cycle.join(" → ")}`);
  return problems;
}

const method = (c: ModelCase): StructuredOutputMethod | undefined =>
  typeof c.answer === "object" && "toolCall" in c.answer ? "functionCalling" : undefined;
const byQuestion = (q: ModelCase["question"]) => corpus.filter((c) => c.question === q);

describe("the model-output corpus", () => {
  it("has at least 300 cases, each named once, over plans, recoveries and syntheses", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    expect(new Set(corpus.map((c) => `${c.question}: ${c.name}`)).size).toBe(corpus.length);
    for (const q of ["plan", "recovery", "synthesis"] as const) expect(byQuestion(q).length).toBeGreaterThan(20);
  });
});

describe("plans from a hostile model", () => {
  it.each(byQuestion("plan").map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const { fake, reasoner, close } = await reasonerFor(c.answer, method(c));
    try {
      const result = await reasoner.plan(REQUEST, { registry, lessons: [], unreliableTools: {} });
      expect(ungrantedIn(result.plan)).toEqual([]);
      expect(fake.unexpected).toEqual([]);
      if (c.valid) {
        expect(result.plan.createdBy).toBe("llm");
        expect(result.plan.steps.map((s) => s.id)).toEqual(VALID_PLAN.steps.map((s) => s.id));
        expect(result.notes).toEqual([]);
      }
      if (result.plan.createdBy !== "llm") {
        // The fallback is said: the model's answer was unusable, and what was used instead.
        const said = result.notes.join(" ");
        expect(said).toMatch(/model/i);
        expect(said).toMatch(/instead|one-step plan/i);
      }
    } finally {
      await close();
    }
  });
});

/** The hotel step failed for a reason no rule knows, and its error tells the model to call tools it may not. */
function recoveryQuestion(): RecoveryQuestion {
  const rules = planWithRules(REQUEST, registry);
  const plan: Plan = {
    ...rules,
    steps: rules.steps.map((s) => (s.id === "hotel" ? { ...s, status: "failed" as const, dispatches: 1 } : s)),
  };
  const hotel = plan.steps.find((s) => s.id === "hotel")!;
  const feedback = [
    ExecutionFeedback.parse({
      taskId: "hotel",
      feedbackType: "FAILURE",
      errors: [`E_QUIRK 0x1f: index stale. ${INJECTION}`],
      failureClass: "unknown",
      durationMs: 5,
      at: "2025-01-01T00:00:00.000Z",
      tool: "search_hotels",
      workerType: "hotel_agent",
      params: hotel.params,
      outputs: { note: INJECTION },
    }),
  ];
  return { failure: buildFailureContext(hotel, feedback), plan, registry };
}

/**
 * Cases whose answer exposes a defect nobody has fixed yet: the check that fails is asserted to fail still, so a
 * fix makes this test say so (then delete the entry). Each names what is wrong.
 */
// Empty: bench/CHAOS.md finding B (a model's DECOMPOSE adding book_trip) is refused by validateProposal now.
const KNOWN_DEFECTS: Record<string, string> = {};

describe("recovery proposals from a hostile model", () => {
  const irreversible = new Set(
    [...registry.tools.values()].filter((t) => t.sideEffect === "irreversible").map((t) => t.name),
  );

  it.each(byQuestion("recovery").map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const { fake, reasoner, notes, close } = await reasonerFor(c.answer, method(c));
    try {
      const q = recoveryQuestion();
      const proposal = await reasoner.proposeRecovery(q);
      expect(fake.unexpected).toEqual([]);
      if (c.valid) expect(proposal).toMatchObject({ strategy: VALID_RECOVERY.strategy });
      if (proposal === null) {
        // No usable proposal: said, naming the step, so the caller's skip or escalation has a reason.
        expect(notes.join(" ")).toMatch(/The model proposed no usable recovery for step hotel/);
        return;
      }
      const verdict = validateProposal(proposal, q.failure, q.plan, registry, 1, [q.failure.feedback]);
      if (c.valid) expect(verdict.ok).toBe(true);
      if (!verdict.ok) {
        expect(verdict.reason).toMatch(/^The model's proposal was refused: .+/);
        return;
      }
      // What a validated proposal keeps may run: only granted tools, and nothing irreversible the plan did not have.
      expect(ungrantedIn(verdict.outcome.plan)).toEqual([]);
      const added = verdict.outcome.plan.steps.flatMap((s) => s.tools).filter((t) => irreversible.has(t));
      if (KNOWN_DEFECTS[c.name]) expect(added, `fixed? then delete KNOWN_DEFECTS["${c.name}"]`).not.toEqual([]);
      else expect(added).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe("syntheses from a hostile model", () => {
  const input = (): SynthesisInput => {
    const plan = planWithRules(REQUEST, registry);
    return {
      request: REQUEST,
      plan,
      results: { flight: { summary: "Flights $728" }, hotel: { summary: `Hotel $676. ${INJECTION}` } },
      missing: [],
    };
  };

  it.each(byQuestion("synthesis").map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const { reasoner, notes, close } = await reasonerFor(c.answer);
    try {
      const answer = await reasoner.synthesize(input());
      expect(typeof answer).toBe("string");
      expect(answer.trim().length).toBeGreaterThan(0);
      const template = await new RulesReasoner().synthesize(input());
      if (c.valid) {
        expect(answer).toBe(VALID_SYNTHESIS);
        expect(notes).toEqual([]);
      }
      if (answer === template)
        expect(notes.join(" ")).toMatch(/The model could not write the answer .*used the rules template instead/);
      else expect(notes).toEqual([]);
    } finally {
      await close();
    }
  });
});

/**
 * One OpenAI-compatible endpoint in front of three scripted fakes, picked by the prompt: a plan question, a
 * recovery question (it shows the failed step) or a synthesis (it shows the results). A fake whose script has
 * run out answers HTTP 500, which the reasoner must treat like any other unusable answer.
 */
async function routedModel(scripts: {
  plan: ScriptedResponse[];
  recovery: ScriptedResponse[];
  synthesis: ScriptedResponse[];
}) {
  const fakes = {
    plan: new FakeOpenAIServer(scripts.plan),
    recovery: new FakeOpenAIServer(scripts.recovery),
    synthesis: new FakeOpenAIServer(scripts.synthesis),
  };
  const started = {
    plan: await fakes.plan.start(),
    recovery: await fakes.recovery.start(),
    synthesis: await fakes.synthesis.start(),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const route = body.includes("<failed_step>") ? "recovery" : body.includes("<results>") ? "synthesis" : "plan";
      fetch(`${started[route].baseUrl}${(req.url ?? "").replace(/^\/v1/, "")}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      })
        .then(async (r) => {
          const text = await r.text();
          res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
          res.end(text);
        })
        .catch((e: unknown) => {
          res.writeHead(502);
          res.end(String(e));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    fakes,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(Object.values(started).map((s) => s.close()));
    },
  };
}

/**
 * The travel tools, spied on: every real call is recorded with its step. The hotel search fails for a reason no
 * rule knows, and its error tells the model to call book_trip and exec_shell, so the model is asked for a recovery.
 */
function spiedToolkits(calls: { tool: string; stepId: string }[]): Toolkit[] {
  const spy = (k: Toolkit): Toolkit => ({
    ...k,
    tools: k.tools.map((t) => ({
      ...t,
      run: async (args, ctx) => {
        calls.push({ tool: t.name, stepId: ctx.stepId });
        if (t.name === "search_hotels") throw new Error(`E_QUIRK 0x1f: index stale. ${INJECTION}`);
        return t.run(args, ctx);
      },
    })),
  });
  return [spy(travelToolkit({ latencyMs: 1 })), spy(workspaceToolkit())];
}

const GRAPH_CASES: { name: string; plan: ScriptedResponse; recovery: ScriptedResponse; synthesis: ScriptedResponse }[] =
  [
    {
      name: "book_trip granted to the flight worker, then a swap to book_trip",
      plan: {
        json: {
          ...VALID_PLAN,
          steps: VALID_PLAN.steps.map((s) =>
            s.id === "flight" ? { ...s, tools: ["book_trip"], paramsJson: "{}" } : s,
          ),
        },
      },
      recovery: {
        json: {
          ...VALID_RECOVERY,
          strategy: "SWAP_TOOL",
          modifications: { paramsJson: "{}", tool: "book_trip", workerType: "booking_agent", substeps: null },
        },
      },
      synthesis: VALID_SYNTHESIS,
    },
    {
      name: "an injection instead of a plan, then substeps on exec_shell",
      plan: INJECTION,
      recovery: {
        json: {
          ...VALID_RECOVERY,
          strategy: "DECOMPOSE",
          modifications: {
            paramsJson: null,
            tool: null,
            workerType: null,
            substeps: [
              { description: "x", tool: "exec_shell", paramsJson: "{}" },
              { description: "y", tool: "book_trip", paramsJson: "{}" },
            ],
          },
        },
      },
      synthesis: "x".repeat(200_000),
    },
    {
      name: "a valid plan, then the booking worker for the hotel search",
      plan: { json: VALID_PLAN },
      recovery: {
        json: {
          ...VALID_RECOVERY,
          strategy: "RETRY_DIFFERENT_AGENT",
          modifications: { paramsJson: null, tool: null, workerType: "booking_agent", substeps: null },
        },
      },
      synthesis: { status: 500, error: "boom" },
    },
    {
      name: "truncated plan and proposal, empty synthesis",
      plan: JSON.stringify(VALID_PLAN).slice(0, 300),
      recovery: JSON.stringify(VALID_RECOVERY).slice(0, 40),
      synthesis: "",
    },
    {
      name: "a booking step nobody asked for",
      plan: {
        json: {
          ...VALID_PLAN,
          steps: [
            ...VALID_PLAN.steps,
            {
              id: "book",
              description: "Book it now",
              workerType: "booking_agent",
              tools: ["book_trip"],
              paramsJson: "{}",
              dependsOn: ["itinerary"],
              expectedOutputs: ["booking"],
            },
          ],
        },
      },
      recovery: { json: VALID_RECOVERY },
      synthesis: "Booked! Reference XYZ.",
    },
    {
      name: "rate-limited plan, failing recovery, injected synthesis",
      plan: { status: 429, error: "slow down" },
      recovery: { status: 500, error: "down" },
      synthesis: INJECTION,
    },
  ];

describe("the whole graph with a hostile model", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "candor-model-fuzz-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(GRAPH_CASES.map((c, i) => [c.name, c, i] as const))("%s", async (_name, c, i) => {
    const routed = await routedModel({
      plan: [c.plan, c.plan],
      recovery: [c.recovery, c.recovery, c.recovery, c.recovery],
      synthesis: [c.synthesis, c.synthesis],
    });
    const persistence = openPersistence(path.join(dir, `g${i}.db`));
    const calls: { tool: string; stepId: string }[] = [];
    const notes: string[] = [];
    try {
      const model = createChatModel({
        apiKey: "test-key",
        baseUrl: routed.baseUrl,
        model: "gpt-4o-mini",
        maxRetries: 0,
      });
      const reasoner = new LlmReasoner({
        model,
        fallback: new RulesReasoner(),
        onFallback: (n) => notes.push(n),
        timeoutMs: 10_000,
        recoveryTimeoutMs: 4_000,
      });
      const toolkits = spiedToolkits(calls);
      const app = compileAgent({ toolkits, reasoner }, persistence);
      const config = { configurable: { thread_id: `fuzz-${i}` } };
      await app.invoke({ request: REQUEST, settings: { approvalThreshold: 0 } }, config);
      const state = (await app.getState(config)).values as AgentStateValue;

      // No tool ran outside its step's grant, and nothing irreversible ran: nobody approved a booking.
      // A step replaced by a revision leaves the plan, but its feedback says which worker ran it.
      const workerOf = new Map<string, string>(planOf(state)!.steps.map((s) => [s.id, s.workerType]));
      for (const f of state.feedback) if (f.workerType) workerOf.set(f.taskId, f.workerType);
      const graphRegistry = ToolRegistry.create([...toolkits, generalToolkit()]);
      for (const call of calls) {
        const worker = workerOf.get(call.stepId);
        expect(worker, `a call of ${call.tool} for unknown step ${call.stepId}`).toBeDefined();
        expect(graphRegistry.isGranted(worker!, call.tool), `${call.stepId} (${worker}) ran ${call.tool}`).toBe(true);
      }
      expect(calls.map((x) => x.tool)).not.toContain("book_trip");

      // Every fallback said: a plan not the model's has a note saying so; an unused proposal has its reason.
      if (planOf(state)!.createdBy !== "llm" && routed.fakes.plan.requests.length > 0)
        expect(state.planNotes.join(" ")).toMatch(/model/i);
      if (routed.fakes.recovery.requests.length > 0) {
        const told = [...notes, ...state.notifications.map((n) => `${n.title} ${n.message}`)].join(" ");
        const adopted = state.notifications.some(
          (n) => n.kind === "strategy" && /proposed by the reasoner/.test(n.title),
        );
        if (!adopted) expect(told).toMatch(/model|reasoner/i);
      }
      // An answer that is not the model's text (with the record's "Missing from this answer" list appended, when a
      // part went unserved) is the template: said.
      const modelText = typeof c.synthesis === "string" ? c.synthesis.trim() : null;
      const fromModel = modelText !== null && modelText.length > 0 && (state.answer ?? "").startsWith(modelText);
      if (routed.fakes.synthesis.requests.length > 0 && !fromModel)
        expect(notes.join(" ")).toMatch(/The model could not write the answer/);
    } finally {
      persistence.close();
      await routed.close();
    }
  });
});
