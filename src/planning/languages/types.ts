import { z } from "zod";

/**
 * The words the offline reader (src/planning/lexicon.ts) reads a language with: one table per language, so that the
 * reading code is the same for every language and adding a language is adding a table (docs/understanding.md, "Adding
 * a language"). Every word is written folded — lower case, accents removed, "ß" as "s", "’" as "'" — as the reader
 * compares it with the request folded the same way (foldCase).
 *
 * A list that must hold words for the reader to read the language at all is `Words` (at least one); a list a language
 * may leave empty, because the reader does without it, is `MaybeWords` — it must still be written, empty, so that a
 * new language states what it lacks instead of forgetting it. test/unit/languages.test.ts checks every table.
 */

const Words = z.array(z.string().min(1)).min(1);
const MaybeWords = z.array(z.string().min(1));
const Values = z.record(z.string().min(1), z.number());

/** The tasks a request may ask for, by their English infinitive: each language lists the forms it asks them with. */
export const TASK_VERB_NAMES = [
  "translate",
  "summarize",
  "email",
  "send",
  "call",
  "text",
  "compare",
  "book",
  "buy",
  "pay",
  "cancel",
  "rent",
  "find",
  "plan",
  "write",
  "read",
  "count",
  "list",
  "analyze",
  "convert",
  "calculate",
  "remind",
  "schedule",
  "check",
  "post",
  "delete",
] as const;

const NumberWords = z.object({
  /**
   * Whether this language's number words are read in a request of any language. True only where they collide with
   * no other language's ordinary words; otherwise ("due", "sei", "elf", "vier") only in a request written in it.
   */
  readEverywhere: z.boolean(),
  /** Words for numbers that add ("three": 3, "vingt": 20, "doscientos": 200). */
  units: Values.refine((v) => Object.keys(v).length > 0, "at least one number word"),
  /** Words that multiply the number before them ("hundred": 100, "mil": 1000). */
  multipliers: Values,
  /** Multipliers that are a number on their own ("mil euros", "cent euros"; "grand hotel" is not). */
  standalone: MaybeWords,
  /** Multipliers read after digits ("2 thousand", "3 mil"). */
  afterDigits: MaybeWords,
  /** Words that join the parts of one number written apart ("treinta y cinco", "vingt et un"). */
  glue: MaybeWords,
  /** Words for "one" that are usually articles: never a number on their own ("un", "a"). */
  articleOnes: MaybeWords,
  /** Articles that count as one before a multiplier ("a hundred"). */
  articleBeforeMultiplier: MaybeWords,
  /** "and a half" after a number: half more ("dos y medio"). */
  half: MaybeWords,
  /** Words for twenty that multiply a smaller number before them (French "quatre-vingts" is 4 × 20). */
  twenties: MaybeWords,
  /**
   * Words of this language, as written (lower case, accented), that fold to another language's number word and are
   * none ("très", very, folds to Spanish "tres").
   */
  notNumbers: MaybeWords,
  /**
   * For a language that writes a number as one word ("zweitausendfünfhundert", "vijfentwintig"), the parts such a
   * word is made of besides the number words above: "one" as a prefix ("einundzwanzig"), the "and" between a unit and
   * its tens, tens that drop their vowel ("ventotto"). Null where the language writes numbers apart.
   */
  compound: z.object({ units: Values, glue: MaybeWords }).nullable(),
});

export const LanguageWords = z.object({
  /** Frequent words that tell a request is written in this language (see guessLanguage). */
  telling: Words,
  /** Words that join two clauses ("and then", "y luego", "und dann"), tried in the order listed. */
  joiners: Words,
  /** Words that ask for nothing by themselves: what a clause says beyond them is what it asks about. */
  stopWords: Words,
  negation: z.object({
    /** Cues whose scope follows them ("without", "sin", "pas de", "kein", "we already have"). */
    cues: Words,
    /** Cues that negate what comes before them ("hotel not needed"), tried in the order listed. */
    after: MaybeWords,
    /** Phrases that look negative but state a limit ("no more than", "pas plus de"): no negation. */
    limits: Words,
    /** Words that end a negation's scope: what follows is wanted again ("but", "pero", "aber"). */
    contrasts: Words,
  }),
  waiver: z.object({
    /** Qualifiers and nouns of preference that make a negation a waiver ("no specific restrictions"). */
    qualifiers: Words,
    /** Phrases that waive a constraint by themselves ("we don't mind", "da igual", "egal"). */
    phrases: Words,
  }),
  only: z.object({
    /** Cues of "only" ("just", "solamente", "uniquement"). */
    cues: MaybeWords,
    /** Articles an "only" reads forward past ("just a hotel"). */
    articles: MaybeWords,
    /** Function words after which a postfix "only" still looks back ("flights only from Madrid"). */
    functionWords: MaybeWords,
  }),
  names: z.object({
    /** Everyday words that open a sentence: never the start of a name. */
    sentenceStarters: MaybeWords,
    /** Capitalised words that are no name even mid-sentence ("I", "Please"). */
    notNames: MaybeWords,
    /** Small words inside a name ("Isle of Man", "Puerto de la Cruz"). */
    connectors: MaybeWords,
    /** Articles after which a capitalised word is a noun, not a name (German capitalises every noun). */
    nounArticles: MaybeWords,
  }),
  numbers: NumberWords,
  ranges: z.object({
    /** Words between two numbers of a range ("3 to 5", "3 o 5"). */
    joiners: MaybeWords,
    /** "between" of "between 3 and 5", with its "and" below. */
    between: MaybeWords,
    betweenAnd: MaybeWords,
    /** "from" of "from 3 to 5": part of the range's span. */
    from: MaybeWords,
  }),
  /** Names of currencies, with their ISO 4217 code, or null where the name is no one currency ("pesos", "francs"). */
  currencies: z.record(z.string().min(1), z.string().length(3).nullable()),
  dates: z.object({
    /** Weekends and seasons the date recognizer does not read ("this weekend", "este verano"). */
    relative: MaybeWords,
    /** Verbs of setting off before "in 3 days": then it says when ("fly to Paris in 3 days"). */
    departing: MaybeWords,
    /** Units of time after a figure that give a length ("days", "noches", "semaines"). */
    lengthUnits: MaybeWords,
  }),
  /** Forms of each task verb a request uses (imperative, infinitive, "-ing"). */
  taskVerbs: z.partialRecord(z.enum(TASK_VERB_NAMES), Words),
});
export type LanguageWords = z.infer<typeof LanguageWords>;
