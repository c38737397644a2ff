/**
 * Wrong-subject reflections (issue 26, "done when"): every complaint about the hotel, in every wording the bench's
 * users use (the seen ones and the hidden ones), is reflected on by a model that always blames the flight search,
 * fluently and in the seed's actionable forms. Measured: how many of those reflections the quality gate refuses (none
 * may be stored), and which complaints it could not tell were about something else.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileAgent } from "../../graphs/agent.js";
import { travelToolkit } from "../../examples/travel/index.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { userReflections } from "../../src/memory/learning.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { giveFeedback } from "../../src/reflection/feedback.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { CountingOpenAIServer } from "../fake-openai.js";
import { REASONS } from "./users.js";

/** A fluent reflection that blames search_flights, whatever the complaint was. */
const BLAMES_FLIGHTS = {
  whatHappened: "search_flights chose the recommended fare and the user rejected the trip.",
  why: "search_flights ran with priority 'recommended', the provider's own pick, so the fare was not the cheapest.",
  rootCause: "The strategy of trusting search_flights' default ranking assumed it suits every user; it does not.",
  patternsIdentified: [],
  strategyAdjustments: ["Change priority of search_flights from 'recommended' to 'price'"],
  learning: "For this user, rank flights by price next time, so that a costly flight is not chosen again.",
};

export interface WrongSubjectRecord {
  reason: string;
  /** No reflection of the model's was stored (the gate refused every attempt). */
  refused: boolean;
  /** The gate's violations of the model's first attempt, as announced. */
  said: string | null;
}

/** Every hotel complaint of the bench's users: the seen quality and rating wordings, the hidden cheap-bed and breakfast ones. */
const HOTEL_COMPLAINTS = [
  ...REASONS.quality({ kind: "quality" }),
  ...REASONS.rating({ kind: "rating" }),
  ...REASONS.cheapBed({ kind: "cheapBed" }),
  ...REASONS.breakfast({ kind: "breakfast" }),
];

/**
 * Rejects one trip per hotel complaint (`reasons`, the bench's own by default) with a model that blames the flights,
 * and records what the gate did.
 */
export async function wrongSubjectBench(reasons: readonly string[] = HOTEL_COMPLAINTS): Promise<WrongSubjectRecord[]> {
  const fake = new CountingOpenAIServer();
  fake.reply = (req) => (req.kind === "other" ? { content: JSON.stringify(BLAMES_FLIGHTS) } : undefined);
  const server = await fake.start();
  const dir = mkdtempSync(join(tmpdir(), "candor-wrong-subject-"));
  const persistence = openPersistence(join(dir, "ws.db"));
  const toolkits = [travelToolkit({ latencyMs: 0 })];
  const graph = compileAgent({ toolkits }, persistence);
  const model = createChatModel({ apiKey: "k", baseUrl: server.baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const deps = {
    store: persistence.store,
    registry: ToolRegistry.create(toolkits),
    reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
  };
  const out: WrongSubjectRecord[] = [];
  try {
    for (const [i, reason] of reasons.entries()) {
      const userId = `ws-${i + 1}`;
      const threadId = `${userId}-1`;
      await graph.invoke(
        { request: { userIntent: "Plan a 3-day trip from Madrid to Paris for 2 people", userContext: { userId } } },
        { configurable: { thread_id: threadId } },
      );
      const fb = await giveFeedback(graph, threadId, { verdict: "rejected", reason, comment: null }, deps);
      const stored = await userReflections(persistence.store, userId);
      const first = fb.messages.find((m) => m.startsWith("Reflection: Attempt 1:")) ?? null;
      out.push({ reason, refused: stored.every((r) => r.source !== "llm"), said: first });
    }
  } finally {
    persistence.close();
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
  return out;
}

/** The section: refused of all, and each complaint whose wrong-subject reflection was stored. */
export function wrongSubjectSection(records: readonly WrongSubjectRecord[]): string {
  const refused = records.filter((r) => r.refused);
  const stored = records.filter((r) => !r.refused);
  return `
### Wrong-subject reflections

Every hotel complaint the bench's users make (${records.length}: the seen quality and rating wordings, the hidden cheap-bed
and breakfast ones), each on a fresh user's trip, reflected on by a model that always blames search_flights in the
seed's actionable form (bench/learning/wrong-subject.ts): the quality gate refused ${refused.length} of ${records.length}
(nothing of the model's stored; the rules reflected instead).${
    stored.length === 0
      ? ""
      : ` Stored although about the hotel, because Candor's own reading of the complaint reaches search_flights (a price word points at every search the budget check adds up):\n\n${stored.map((r) => `- "${r.reason}"`).join("\n")}`
  }
`;
}
