/** Longest summary of one input shown in an approval question; the full value is in the thread's state. */
const MAX_INPUT_CHARS = 240;

/**
 * One line per input a tool call consumes, for approval requests: the value's own `summary` when it has one (the
 * travel tools' outputs do), else its JSON, shortened. Inputs the tool does not consume are left out.
 */
export function describeInputs(inputs: Record<string, unknown>, consumes: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of consumes) {
    if (!(key in inputs)) continue;
    const value = inputs[key];
    const summary =
      value && typeof value === "object" && typeof (value as { summary?: unknown }).summary === "string"
        ? (value as { summary: string }).summary
        : JSON.stringify(value);
    out[key] = summary.length > MAX_INPUT_CHARS ? `${summary.slice(0, MAX_INPUT_CHARS - 1)}…` : summary;
  }
  return out;
}
