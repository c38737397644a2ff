import { describe, expect, it } from "vitest";
import { analyzeRequest, foldCase } from "../../src/planning/lexicon.js";
import { CURRENCY_SIGNS, LANGUAGE_CODES, LANGUAGES, TASK_VERB_NAMES } from "../../src/planning/languages/index.js";
import { LanguageWords } from "../../src/planning/languages/types.js";

/** Every word of a table, with where it sits, except `notNumbers` (written as in the request, accents and all). */
function wordsOf(table: LanguageWords): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: unknown, path: string): void => {
    if (path === "numbers.notNumbers") return;
    if (typeof value === "string") out.push([path, value]);
    else if (Array.isArray(value)) value.forEach((v) => walk(v, path));
    else if (value !== null && typeof value === "object")
      for (const [k, v] of Object.entries(value)) {
        // The keys of a table of values (number words, currency names) are words too.
        if (/^(?:units|multipliers|currencies)$/.test(k)) Object.keys(v as object).forEach((w) => out.push([k, w]));
        else walk(v, path ? `${path}.${k}` : k);
      }
  };
  walk(table, "");
  return out;
}

describe("the offline reader's language tables", () => {
  it.each(LANGUAGE_CODES)("%s has every list the reader needs to read it", (code) => {
    const parsed = LanguageWords.safeParse(LANGUAGES[code]);
    expect(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([]);
  });

  it("refuses a table that leaves out a list the reader needs", () => {
    const missing = { ...LANGUAGES.en, negation: { ...LANGUAGES.en.negation, cues: [] } };
    expect(LanguageWords.safeParse(missing).success).toBe(false);
  });

  it.each(LANGUAGE_CODES)("%s writes its words folded, as the reader compares them", (code) => {
    const unfolded = wordsOf(LANGUAGES[code]).filter(([, w]) => foldCase(w) !== w);
    expect(unfolded).toEqual([]);
  });

  it.each(LANGUAGE_CODES)("a request of %s's own frequent words is read as written in it", (code) => {
    const language = analyzeRequest(LANGUAGES[code].telling.join(" ")).language;
    expect([language.code, language.certain, language.read]).toEqual([code, true, true]);
  });

  it("a currency name means one currency in every language that names it", () => {
    const seen = new Map<string, string | null>(Object.entries(CURRENCY_SIGNS));
    const conflicts: string[] = [];
    for (const code of LANGUAGE_CODES)
      for (const [name, iso] of Object.entries(LANGUAGES[code].currencies)) {
        if (seen.has(name) && seen.get(name) !== iso) conflicts.push(`${code} ${name}`);
        seen.set(name, iso);
      }
    expect(conflicts).toEqual([]);
  });

  it("a number word means one number in every language read everywhere", () => {
    const seen = new Map<string, number>();
    const conflicts: string[] = [];
    for (const code of LANGUAGE_CODES.filter((c) => LANGUAGES[c].numbers.readEverywhere))
      for (const [w, v] of Object.entries({
        ...LANGUAGES[code].numbers.units,
        ...LANGUAGES[code].numbers.multipliers,
      })) {
        if (seen.has(w) && seen.get(w) !== v) conflicts.push(`${code} ${w}`);
        seen.set(w, v);
      }
    expect(conflicts).toEqual([]);
  });

  it.each(LANGUAGE_CODES.flatMap((code) => TASK_VERB_NAMES.map((verb) => [code, verb] as const)))(
    "every form %s lists for '%s' is read as that task",
    (code, verb) => {
      for (const form of LANGUAGES[code].taskVerbs[verb] ?? [])
        expect([form, analyzeRequest(`${form} it`).taskVerbs.map((t) => t.verb)]).toEqual([form, [verb]]);
    },
  );
});
