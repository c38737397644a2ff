import { z } from "zod";

/** A value the record says a step uses: the latest change's result when it was changed, with where it came from. */
export const RecordedValue = z.object({
  name: z.string(),
  value: z.unknown(),
  /** Where the value came from, in words: the request's text, an assumption, a change and why. */
  from: z.string(),
  /**
   * `change`: a value changed on the user's behalf (a conversion, a clamp, a strategy's correction), which the call
   * must carry; `read`: read from the request or assumed, which a step may legitimately derive from (a leg's
   * origin, half the days), so it only fills a parameter the call left out.
   */
  kind: z.enum(["read", "change"]).default("read"),
  /** A change's value before it (the call must not carry it instead). */
  previous: z.unknown().optional(),
});
export type RecordedValue = z.infer<typeof RecordedValue>;

/** What a step is run with beyond its definition: the values it must use and the request it belongs to. */
export const StepContext = z.object({
  values: z.array(RecordedValue).default([]),
  /** The request this run serves (a hash): a side effect recorded for another request is never reused. */
  lineage: z.string().default(""),
});
export type StepContext = z.infer<typeof StepContext>;
