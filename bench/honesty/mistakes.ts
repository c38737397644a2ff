import type { ModelReply, ModelRequest, RequestKind, WireCall } from "./fake-model.js";
import { mulberry32 } from "../chaos/prng.js";

/**
 * The mistakes of a real, imperfect model, injected into a perfect policy's replies at a given rate. Which request
 * gets which mistake is decided by a PRNG seeded from the seed and the request's identity (what it asks for, the
 * step, how long the conversation is, and how many such requests came before), not from the order requests
 * arrive: steps that run in parallel reach the server in any order, and a run must be the same run every time.
 */
const MISTAKES = [
  "fenced_json",
  "partial_json",
  "invented_tool",
  "wrong_types",
  "prose",
  "done_no_call",
  "could_not",
  "repeat_call",
  "http_429",
  "http_500",
] as const;
type Mistake = (typeof MISTAKES)[number];

/** The mistakes a request of each kind can show (a plan has no call to repeat; a plain answer no tool to invent). */
const APPLICABLE: Record<RequestKind, readonly Mistake[]> = {
  plan: MISTAKES.filter((m) => m !== "repeat_call"),
  worker: MISTAKES,
  synthesis: ["fenced_json", "partial_json", "prose", "done_no_call", "could_not", "http_429", "http_500"],
  review: ["fenced_json", "partial_json", "wrong_types", "prose", "done_no_call", "could_not", "http_429", "http_500"],
  recovery: ["fenced_json", "partial_json", "prose", "http_429", "http_500"],
  reflection: ["partial_json", "prose", "http_429", "http_500"],
  other: ["prose", "http_429", "http_500"],
};

/** FNV-1a over a string: the seed of one request's PRNG. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** What a reply became: the mistake made (null when the perfect reply went out) and the request it answered. */
export interface Injection {
  kind: RequestKind;
  stepId: string | null;
  mistake: Mistake | null;
}

/**
 * Wraps a perfect policy: each request, with probability `rate`, gets one mistake (uniform over those its kind can
 * show) instead of the perfect reply. `made` lists what each request got, in arrival order.
 */
export class MistakeInjector {
  readonly made: Injection[] = [];
  private readonly occurrences = new Map<string, number>();

  constructor(
    private readonly rate: number,
    /** The seed, with what sets this run apart (request and mode), so runs draw independently. */
    private readonly seed: string,
    private readonly perfect: (req: ModelRequest) => ModelReply,
  ) {}

  reply(req: ModelRequest): ModelReply {
    const identity = `${req.kind}|${req.schemaName ?? ""}|${req.stepId ?? ""}|${req.messages.length}`;
    const n = (this.occurrences.get(identity) ?? 0) + 1;
    this.occurrences.set(identity, n);
    const rng = mulberry32(hash32(`${this.seed}|${identity}|${n}`));
    const good = this.perfect(req);
    if (this.rate <= 0 || rng() >= this.rate) {
      this.made.push({ kind: req.kind, stepId: req.stepId, mistake: null });
      return good;
    }
    const options = APPLICABLE[req.kind];
    const mistake = options[Math.floor(rng() * options.length)]!;
    this.made.push({ kind: req.kind, stepId: req.stepId, mistake });
    return mistaken(mistake, req, good, rng);
  }
}

/** The text a perfect reply carries: its content, or its first call's arguments (a structured answer by function). */
function payloadOf(good: ModelReply): string {
  if (good.type === "text") return good.content;
  if (good.type === "calls") return good.calls[0]?.arguments ?? good.content ?? "";
  return "";
}

const INVENTED_TOOLS = ["search_web", "get_file_contents", "run_shell", "lookup_price", "book_flight"];

/** The reply a mistake turns the perfect one into. */
function mistaken(mistake: Mistake, req: ModelRequest, good: ModelReply, rng: () => number): ModelReply {
  const text = payloadOf(good);
  const firstCall = good.type === "calls" && req.kind === "worker" ? good.calls[0] : undefined;
  switch (mistake) {
    case "http_429":
      return { type: "http", status: 429, message: "Rate limit reached for requests. Please try again later." };
    case "http_500":
      return { type: "http", status: 500, message: "The server had an error while processing your request." };
    case "fenced_json":
      // A worker writes its call as JSON text instead of calling; a structured answer comes wrapped in a fence.
      return {
        type: "text",
        content: firstCall
          ? `\`\`\`json\n${JSON.stringify({ name: firstCall.name, arguments: safeParse(firstCall.arguments) })}\n\`\`\``
          : `\`\`\`json\n${text}\n\`\`\``,
      };
    case "partial_json": {
      // Cut short, as a model that hit its output limit: a call's argument text, or the answer's text.
      if (firstCall)
        return { type: "calls", calls: [{ ...firstCall, arguments: cutHalf(firstCall.arguments) }], content: null };
      if (good.type === "calls" && good.calls[0])
        return {
          type: "calls",
          calls: [{ ...good.calls[0], arguments: cutHalf(good.calls[0].arguments) }],
          content: null,
        };
      return { type: "text", content: cutHalf(text) };
    }
    case "invented_tool": {
      const name = INVENTED_TOOLS[Math.floor(rng() * INVENTED_TOOLS.length)]!;
      if (req.kind === "worker")
        return { type: "calls", calls: [{ name, arguments: firstCall?.arguments ?? "{}" }], content: null };
      return { type: "text", content: withInventedTool(text, name) };
    }
    case "wrong_types":
      if (firstCall)
        return {
          type: "calls",
          calls: [{ ...firstCall, arguments: JSON.stringify(wrongTypes(safeParse(firstCall.arguments))) }],
          content: null,
        };
      return replaceText(
        good,
        req.kind === "plan" ? withWrongParamTypes(text) : JSON.stringify(wrongTypes(safeParse(text))),
      );
    case "prose":
      return {
        type: "text",
        content:
          req.kind === "worker"
            ? "To do this I will look at the data with the right tool and then report back with what I find."
            : "Sure! I looked into this for you and everything went as planned.",
      };
    case "done_no_call":
      return { type: "text", content: "Done, everything looks good." };
    case "could_not":
      return { type: "text", content: "I could not complete this step." };
    case "repeat_call": {
      const last = lastCall(req);
      if (last) return { type: "calls", calls: [{ name: last.name, arguments: last.arguments }], content: null };
      // Nothing called yet: the same call twice in one answer.
      if (firstCall) return { type: "calls", calls: [firstCall, firstCall], content: null };
      return good;
    }
    default:
      return good;
  }
}

function replaceText(good: ModelReply, text: string): ModelReply {
  if (good.type === "calls" && good.calls[0])
    return { type: "calls", calls: [{ ...good.calls[0], arguments: text }], content: null };
  return { type: "text", content: text };
}

function lastCall(req: ModelRequest): WireCall | undefined {
  return req.messages.flatMap((m) => m.toolCalls).at(-1);
}

function cutHalf(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (_e) {
    return text;
  }
}

/** Every value in the wrong type: numbers as words, strings as lists, lists as text, booleans as "yes". */
function wrongTypes(value: unknown): unknown {
  if (typeof value === "number") return `${value} (approx.)`;
  if (typeof value === "string") return [value];
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(String).join(", ");
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = wrongTypes(v);
    // An empty object has nothing to get wrong: give it an argument of no type at all.
    return Object.keys(out).length > 0 ? out : { value: null };
  }
  return value;
}

/** A plan whose steps' arguments have the wrong types, or, when it leaves them to the workers, its confidence. */
function withWrongParamTypes(text: string): string {
  const plan = safeParse(text);
  if (plan === null || typeof plan !== "object" || !("steps" in plan) || !Array.isArray(plan.steps)) return text;
  const steps = plan.steps as Record<string, unknown>[];
  if (steps.every((s) => typeof s.paramsJson !== "string")) return JSON.stringify({ ...plan, confidence: "high" });
  const wrong = steps.map((s) =>
    typeof s.paramsJson === "string" ? { ...s, paramsJson: JSON.stringify(wrongTypes(safeParse(s.paramsJson))) } : s,
  );
  return JSON.stringify({ ...plan, steps: wrong });
}

/** A plan whose first step names a tool that does not exist. */
function withInventedTool(text: string, name: string): string {
  const plan = safeParse(text);
  if (plan === null || typeof plan !== "object" || !("steps" in plan) || !Array.isArray(plan.steps)) return text;
  const steps = (plan.steps as Record<string, unknown>[]).map((s, i) => (i === 0 ? { ...s, tools: [name] } : s));
  return JSON.stringify({ ...plan, steps });
}
