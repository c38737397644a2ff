import { randomUUID } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { GRAPH_ID } from "./threads.js";

/** Where the API keeps the assistants it was asked to create: the one graph with a context of its own. */
const ASSISTANTS_NAMESPACE = ["candor", "api_assistants"];

const Json = z.record(z.string(), z.unknown());

/** An assistant as the Agent Protocol shows it. */
const Assistant = z.object({
  assistant_id: z.string(),
  graph_id: z.literal(GRAPH_ID),
  name: z.string(),
  description: z.string().nullable(),
  config: z.looseObject({ configurable: Json.optional() }),
  context: Json,
  metadata: Json,
  version: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
type Assistant = z.infer<typeof Assistant>;

/** What `assistants.create` sends that Candor reads. */
const AssistantCreate = z.looseObject({
  graph_id: z.string(),
  assistant_id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().nullish(),
  config: z.looseObject({ configurable: Json.optional() }).optional(),
  context: Json.optional(),
  metadata: Json.optional(),
});

/** The built-in assistant: the graph itself, under its own name. */
const BUILT_IN: Assistant = {
  assistant_id: GRAPH_ID,
  graph_id: GRAPH_ID,
  name: GRAPH_ID,
  description: "Candor: a planner-executor agent that never hides a failure",
  config: {},
  context: {},
  metadata: { created_by: "system" },
  version: 1,
  created_at: new Date(0).toISOString(),
  updated_at: new Date(0).toISOString(),
};

type Store = Pick<BaseStore, "get" | "put" | "search">;

/**
 * Assistants over Candor's store: the built-in one, and those created through the API, each the one graph with its
 * own context (run settings such as `approvalThreshold`; `config.configurable` is read the same way, the older
 * place). A run names one by id; its context is the run's, under the run's own.
 */
export function assistants(store: Store) {
  const find = async (id: string): Promise<Assistant | null> => {
    if (id === GRAPH_ID) return BUILT_IN;
    const parsed = Assistant.safeParse((await store.get(ASSISTANTS_NAMESPACE, id))?.value);
    return parsed.success ? parsed.data : null;
  };
  return {
    find,
    async create(body: unknown): Promise<{ ok: true; value: Assistant } | { ok: false; reason: string }> {
      const parsed = AssistantCreate.safeParse(body);
      if (!parsed.success)
        return { ok: false, reason: `the assistant is malformed: ${parsed.error.issues[0]?.message}` };
      if (parsed.data.graph_id !== GRAPH_ID)
        return {
          ok: false,
          reason: `there is one graph here, "${GRAPH_ID}"; graph_id "${parsed.data.graph_id}" is not it`,
        };
      const now = new Date().toISOString();
      const a: Assistant = {
        assistant_id: parsed.data.assistant_id ?? randomUUID(),
        graph_id: GRAPH_ID,
        name: parsed.data.name ?? "Untitled",
        description: parsed.data.description ?? null,
        config: parsed.data.config ?? {},
        context: parsed.data.context ?? {},
        metadata: parsed.data.metadata ?? {},
        version: 1,
        created_at: now,
        updated_at: now,
      };
      await store.put(ASSISTANTS_NAMESPACE, a.assistant_id, a);
      return { ok: true, value: a };
    },
    async list(): Promise<Assistant[]> {
      const items = await store.search(ASSISTANTS_NAMESPACE, { limit: 10_000 });
      const own = items.flatMap((i) => {
        const parsed = Assistant.safeParse(i.value);
        return parsed.success ? [parsed.data] : [];
      });
      return [BUILT_IN, ...own];
    },
  };
}

/**
 * A run's body with its assistant resolved: the graph's id in `assistant_id` (the embed server runs the graph that
 * id names) and the assistant's context under the run's own.
 */
export function resolveRun(body: Record<string, unknown>, assistant: Assistant): Record<string, unknown> {
  const own = z.record(z.string(), z.unknown()).safeParse(body.context);
  return {
    ...body,
    assistant_id: GRAPH_ID,
    context: { ...assistant.config.configurable, ...assistant.context, ...(own.success ? own.data : {}) },
  };
}
