import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { readGivenFile } from "../safe-read.js";

/** USD per million input and output tokens. */
const TokenPrice = z.strictObject({
  input: z.number().min(0, "a price cannot be negative"),
  output: z.number().min(0, "a price cannot be negative"),
});
type TokenPrice = z.infer<typeof TokenPrice>;

/** Model name → price; "*" prices any model not listed. */
export const PriceTable = z.record(z.string().min(1, "a model name cannot be empty"), TokenPrice);
export type PriceTable = z.infer<typeof PriceTable>;

/**
 * List prices (USD per million tokens) when this was written. A model not listed is priced as "*", the dearest
 * listed, so a figure errs high rather than low; a local model you run yourself is free if you say so in a file.
 */
export const DEFAULT_PRICES: PriceTable = {
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1": { input: 2, output: 8 },
  "o4-mini": { input: 1.1, output: 4.4 },
  "o3-mini": { input: 1.1, output: 4.4 },
  "*": { input: 2.5, output: 10 },
};

/** The price of a model: its own entry, else a dated variant's base ("gpt-4o-mini-2024-07-18"), else "*". */
function priceOf(model: string, prices: PriceTable): TokenPrice {
  if (prices[model]) return prices[model];
  const base = Object.keys(prices)
    .filter((k) => k !== "*" && model.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return (base ? prices[base] : prices["*"]) ?? { input: 0, output: 0 };
}

/** USD of one call. */
export function costOf(
  usage: { model: string; inputTokens: number; outputTokens: number },
  prices: PriceTable,
): number {
  const p = priceOf(usage.model, prices);
  return (usage.inputTokens * p.input + usage.outputTokens * p.output) / 1_000_000;
}

const EXAMPLE = `{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "*": {"input": 2.5, "output": 10}}`;

/**
 * A price table read from JSON text (`where` names its source in messages), merged over the defaults: a file
 * lists only the models it changes. Throws CandorError CONFIGURATION saying what is wrong and how to write it.
 */
export function parsePriceTable(text: string, where: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CandorError(
      `${where} is not JSON (${errorMessage(e)}): write model names with their USD per million tokens, e.g. ${EXAMPLE}.`,
      ErrorCode.CONFIGURATION,
      { cause: e },
    );
  }
  const parsed = PriceTable.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.map(String).join(".") || "(the whole table)";
    throw new CandorError(
      `${where} is not a price table: at ${at}: ${issue?.message ?? "invalid"}. Each model needs {"input": n, "output": n} in USD per million tokens, e.g. ${EXAMPLE}.`,
      ErrorCode.CONFIGURATION,
      { details: { where, path: at } },
    );
  }
  return { ...DEFAULT_PRICES, ...parsed.data };
}

/**
 * The price table a run uses: CANDOR_PRICES_FILE (a JSON file) and then CANDOR_MODEL_PRICES (the same JSON inline)
 * over the defaults. Read from the environment, not a flag of `run`: `resume` and `feedback` price calls of the
 * same thread and must use the same table.
 */
export function pricesFrom(env: { CANDOR_PRICES_FILE?: string; CANDOR_MODEL_PRICES?: string }): PriceTable {
  let prices = DEFAULT_PRICES;
  if (env.CANDOR_PRICES_FILE !== undefined) {
    const text = readGivenFile(env.CANDOR_PRICES_FILE, {
      what: "CANDOR_PRICES_FILE (unset it to use the default prices)",
      code: ErrorCode.CONFIGURATION,
    });
    prices = parsePriceTable(text, `The price file "${env.CANDOR_PRICES_FILE}" (CANDOR_PRICES_FILE)`);
  }
  if (env.CANDOR_MODEL_PRICES !== undefined)
    prices = { ...prices, ...parsePriceTable(env.CANDOR_MODEL_PRICES, "CANDOR_MODEL_PRICES") };
  return prices;
}
