import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * What a toolkit says about a tool parameter that a person's feedback may steer, registered on the parameter's
 * schema with `learnable(schema, {...})`. The words that point at a parameter belong to the toolkit's domain, so
 * they live with its tools, never in src/. A registry of its own (not zod's global one) keeps this out of the JSON
 * schemas models are shown.
 *
 * - `choice`: a ranking or mode; each option lists the words that ask for it ("expensive" → `price`) and may name
 *   the result field that shows an answer already met it.
 * - `minimum`: a lower bound on a result field (`rating`), raised above what the rejected answer had.
 * - `flag`: a boolean filter the words ask to turn on ("layover" → `nonstop: true`); `satisfiedWhen` names the
 *   result field that shows an answer already met it.
 * - `exclude`: a list of result-field values to avoid; the rejected answer's value is added ("that airline").
 *
 * Every kind may list `subject`: the words people use for the thing the tool's results are (a hotel: "room", "bed",
 * "place to stay", "alojamiento"), so that a complaint naming it is read as about that tool and no other, and a
 * price word in it ("a more affordable place to sleep") attaches to that tool's settings alone.
 */
const Subject = z.array(z.string()).optional();

/** Words whose direction the clause decides, and the option they then ask for (absent: none of this setting's). */
const Turn = z.object({ asks: z.string().optional(), terms: z.array(z.string()) });

export const Learnable = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("choice"),
    about: z.string(),
    subject: Subject,
    default: z.string(),
    options: z.record(
      z.string(),
      z.object({
        terms: z.array(z.string()),
        says: z.string(),
        /**
         * The result field that shows how well an answer already met this option, and which way is better (quality:
         * the guest `rating`, higher). An accepted answer better than every answer rejected for the option says
         * nothing against it: the preference was not at stake in that run.
         */
        shows: z.object({ field: z.string(), better: z.enum(["higher", "lower"]) }).optional(),
        /**
         * Words of this option that, said as too much of it ("why so fancy?", "not a palace", "I don't need four
         * stars"), ask for another option instead (`asks`): the answer had more of this than the person wants.
         */
        excess: z.object({ asks: z.string(), terms: z.array(z.string()) }).optional(),
        /**
         * Words of this option that point the other way when said of the answer shown (after a verb of being or
         * seeming, or "too"/"so": "it felt cheap", "the room looked basic", "too cheap for us"): the person
         * complains the answer had them, so they ask for `asks` instead, or for nothing this setting has when
         * `asks` is absent. Asked for ("somewhere cheap", "a cheap room"), they ask for this option.
         */
        described: Turn.optional(),
        /**
         * Words of this option that point the other way when said as what is wanted ("a basic room is all we
         * need", "something basic"): they ask for `asks` instead (or nothing). Said of the answer, this option.
         */
        wished: Turn.optional(),
      }),
    ),
  }),
  z.object({
    kind: z.literal("minimum"),
    about: z.string(),
    subject: Subject,
    terms: z.array(z.string()),
    /**
     * Words that count for the bound only when said of the answer shown ("it felt cheap" asks for a better place;
     * "somewhere cheap" asks for a lower price and raises no bound).
     */
    described: z.array(z.string()).optional(),
    /** The result field the bound applies to. */
    field: z.string(),
    /** The least value learned; `step` above the rejected answer's value otherwise, never above `max`. */
    floor: z.number(),
    step: z.number().positive(),
    max: z.number(),
  }),
  z.object({
    kind: z.literal("flag"),
    about: z.string(),
    subject: Subject,
    terms: z.array(z.string()),
    /**
     * The result field that shows whether an answer already was what the flag asks for, and that value (nonstop:
     * `stops` 0). Lets a pattern tell an answer that suited the user by chance from one that went against it.
     */
    satisfiedWhen: z.object({ field: z.string(), equals: z.union([z.string(), z.number(), z.boolean()]) }).optional(),
  }),
  z.object({
    kind: z.literal("exclude"),
    about: z.string(),
    subject: Subject,
    terms: z.array(z.string()),
    field: z.string(),
  }),
]);
export type Learnable = z.infer<typeof Learnable>;

const LEARNABLE = z.registry<Learnable>();

/**
 * Marks a tool parameter as steerable by feedback; returns the same schema, so it goes last in the chain:
 * `minRating: learnable(z.number().min(0).max(10).nullish(), { kind: "minimum", … })`.
 * @throws ZodError when `learn` is not a Learnable, CandorError CONFIGURATION when an option's `excess` asks for an
 *   option the choice does not have (a toolkit's mistakes, found when the toolkit is built).
 */
export function learnable<S extends z.ZodType>(schema: S, learn: Learnable): S {
  const parsed = Learnable.parse(learn);
  if (parsed.kind === "choice")
    for (const [value, o] of Object.entries(parsed.options))
      for (const [turn, says] of [
        [o.excess, "too much of it"],
        [o.described, "said of the answer"],
        [o.wished, "asked for"],
      ] as const)
        if (turn?.asks !== undefined && !(turn.asks in parsed.options))
          throw new CandorError(
            `learnable "${parsed.about}": option '${value}' says ${says} asks for '${turn.asks}', which is not one of its options (${Object.keys(parsed.options).join(", ")}); name an option.`,
            ErrorCode.CONFIGURATION,
          );
  LEARNABLE.add(schema, parsed);
  return schema;
}

/** The words that name what a knob's tool returns (its `subject`), empty when the toolkit gave none. */
export function subjectWords(k: Knob): string[] {
  return k.learn.subject ?? [];
}

/** One steerable parameter of one tool. */
export interface Knob {
  tool: string;
  param: string;
  learn: Learnable;
  /** The parameter's own schema: a learned value must pass it. */
  schema: z.ZodType;
}

/** The key patterns and evaluations use for a knob ("search_hotels.priority"). */
export function knobKey(k: Pick<Knob, "tool" | "param">): string {
  return `${k.tool}.${k.param}`;
}

/** Every parameter of the registry's tools that was marked `learnable`. */
export function knobsOf(registry: ToolRegistry): Knob[] {
  const out: Knob[] = [];
  for (const tool of registry.tools.values()) {
    const shape = (tool.schema as { shape?: Record<string, z.ZodType> }).shape;
    if (!shape) continue;
    for (const [param, schema] of Object.entries(shape)) {
      const learn = LEARNABLE.get(schema);
      if (learn) out.push({ tool: tool.name, param, learn, schema });
    }
  }
  return out;
}

/** The knob of a tool's parameter, if it has one. */
export function knobFor(knobs: readonly Knob[], tool: string, param: string): Knob | undefined {
  return knobs.find((k) => k.tool === tool && k.param === param);
}

/** One line per knob for a prompt or a message: what it steers and the values it takes. */
export function describeKnob(k: Knob): string {
  const l = k.learn;
  switch (l.kind) {
    case "choice":
      return `${knobKey(k)} (${l.about}): one of ${Object.entries(l.options)
        .map(([v, o]) => `'${v}' (${o.says})`)
        .join(", ")}; default '${l.default}'`;
    case "minimum":
      return `${knobKey(k)} (${l.about}): a minimum of the result's ${l.field}, up to ${l.max}`;
    case "flag":
      return `${knobKey(k)} (${l.about}): true or false`;
    case "exclude":
      return `${knobKey(k)} (${l.about}): a list of ${l.field} values to leave out`;
  }
}

/** A setting's value in words: text as it is, anything else as JSON. */
export function show(v: unknown): string {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? String(v));
}
