import { CandorError, ErrorCode } from "./errors.js";

/**
 * Bounds on JSON a person passes on the command line (`--adjust`, `--set key=value`). JSON.parse itself copes with
 * any depth, but what handles the value next (zod, JSON.stringify, the checkpointer) recurses, and a value nested a
 * few thousand levels deep ends as "Maximum call stack size exceeded" far from the flag that caused it. So depth and
 * size are measured on the text first, without recursion, and a value over either limit is refused by name.
 */
export const CLI_JSON_LIMITS = {
  /** Most bytes of JSON one flag may carry: an edit of a plan is a few hundred. */
  maxBytes: 65_536,
  /** Deepest nesting of arrays and objects one flag may carry. */
  maxDepth: 32,
} as const;

/** Longest piece of a refused value a message shows. */
const PREVIEW_CHARS = 120;

/**
 * `text` as a message may show it: whole when short, else its start and how long it was, so a 10 MB value is not
 * printed back to the person who sent it.
 */
export function preview(text: string, maxChars = PREVIEW_CHARS): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… (${Buffer.byteLength(text, "utf8")} bytes in all)`;
}

/** How deeply arrays and objects nest in JSON text, counted without parsing (brackets inside strings do not count). */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Why `text` is over the command line's JSON limits (its size, or its nesting), or null when it is within them.
 * `what` names the flag ("--adjust").
 */
export function jsonLimitProblem(text: string, what: string, limits = CLI_JSON_LIMITS): string | null {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > limits.maxBytes)
    return `${what} is ${bytes} bytes of JSON; at most ${limits.maxBytes} bytes are accepted (it begins ${preview(text, 60).replace(/… \(.*$/, "…")})`;
  const depth = jsonDepth(text);
  if (depth > limits.maxDepth)
    return `${what} nests ${depth} levels deep; at most ${limits.maxDepth} levels of arrays and objects are accepted`;
  return null;
}

/**
 * Parses JSON a person passed on the command line, refused with INVALID_REQUEST when it is over the limits or not
 * JSON; `hint` says what to pass instead. The message never holds more than a preview of the text.
 */
export function parseCliJson(text: string, what: string, hint: string): unknown {
  const problem = jsonLimitProblem(text, what);
  if (problem) throw new CandorError(`${problem}. ${hint}`, ErrorCode.INVALID_REQUEST);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new CandorError(
      `${what} is not valid JSON (${preview((cause as Error).message)}). ${hint}`,
      ErrorCode.INVALID_REQUEST,
      { cause },
    );
  }
}
