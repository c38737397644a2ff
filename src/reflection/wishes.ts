import { randomBytes } from "node:crypto";
import type { UnmetWish, UserConfig } from "../domain/reflection.js";
import { normalize } from "./diagnose.js";
import type { Knob } from "./knobs.js";

/**
 * Wishes no tool setting can meet. A rejection whose reason points at no learnable setting of the run's tools is not
 * a lesson Candor can apply, but it is still the user's preference: it is named back to them ("No tool setting can
 * choose 'a window seat'"), kept in their memory and counted, so that what Candor cannot learn is visible rather
 * than lost. Reading the wish out of a reason uses plain English phrasing only (no domain words: those are the
 * toolkit's).
 */

/** Longest wish kept, in characters: a phrase, not the whole complaint. */
const MAX_WISH_CHARS = 60;
/** Reasons kept per wish. */
const MAX_REASONS = 5;

/** Phrases that introduce what the person wants, in order of how directly they say it. */
const WANTS: readonly RegExp[] = [
  /\b(?:i|we)\s*(?:'d|would)\s+(?:like|prefer|rather have)\s+(.+)/i,
  /\b(?:i|we)\s+(?:want(?:ed)?|need(?:ed)?|prefer(?:red)?|expected|asked for|wish(?:ed)? for|like)\s+(.+)/i,
  /\b(?:give me|get me|find me|book me|pick|choose)\s+(.+)/i,
  /\b(?:no|without|lacked|lacks|lacking|missing)\s+(.+)/i,
];

/**
 * Pure. The wish a reason states, as a short phrase: what follows "I want", "we'd like", "no", "without" …, up to
 * the end of its clause; the reason's first clause when it has none of those.
 */
export function wishOf(reason: string): string {
  const text = reason.trim();
  const hit = WANTS.map((p) => p.exec(text)?.[1]).find((x) => x !== undefined && x.trim() !== "");
  const clause = (hit ?? text).split(/[.;!?,]|\s+(?:but|because|since|so)\s+/i)[0]!.trim();
  const phrase = clause.replace(/^(?:to\s+(?:have|get)\s+)/i, "").trim() || text;
  return phrase.length <= MAX_WISH_CHARS ? phrase : `${phrase.slice(0, MAX_WISH_CHARS - 1).trimEnd()}…`;
}

/** What was recorded: the user's config with the wish, the wish itself, and whether it had been said before. */
export interface RecordedWish {
  config: UserConfig;
  wish: UnmetWish;
  again: boolean;
}

/**
 * Pure. The config with a wish recorded: a wish already kept (the same words, case and punctuation aside, from the
 * same kind of run, real or practice) is counted again; a new one is added.
 */
export function recordWish(
  config: UserConfig,
  said: { wish: string; reason: string; tools: readonly string[]; threadId: string | null; at: string },
  simulated: boolean,
): RecordedWish {
  const wishes = [...(config.wishes ?? [])];
  const key = normalize(said.wish);
  const i = wishes.findIndex((w) => normalize(w.wish) === key && (w.simulated === true) === simulated);
  if (i >= 0) {
    const old = wishes[i]!;
    const wish: UnmetWish = {
      ...old,
      reasons: [...old.reasons, said.reason].slice(-MAX_REASONS),
      tools: [...new Set([...old.tools, ...said.tools])],
      threadIds: said.threadId ? [...new Set([...old.threadIds, said.threadId])] : old.threadIds,
      times: old.times + 1,
      lastAt: said.at,
    };
    wishes[i] = wish;
    return { config: { ...config, wishes }, wish, again: true };
  }
  const wish: UnmetWish = {
    id: `wish-${randomBytes(4).toString("hex")}`,
    wish: said.wish,
    reasons: [said.reason],
    tools: [...said.tools],
    threadIds: said.threadId ? [said.threadId] : [],
    times: 1,
    firstAt: said.at,
    lastAt: said.at,
    ...(simulated ? { simulated: true } : {}),
  };
  return { config: { ...config, wishes: [...wishes, wish] }, wish, again: false };
}

/**
 * Pure. The sentence that names an unmet wish to the user: that no setting of the run's tools can choose it, what
 * their settings can choose instead (so a reason that does point at one can be given), and where it is kept. When
 * the reason names tools that do have settings (`named`) and still matched none of their words, Candor cannot claim
 * no setting could choose it: it says instead that it could not tell which one was meant.
 */
export function unmetWishMessage(r: RecordedWish, knobs: readonly Knob[], named: readonly string[] = []): string {
  const kept = `Kept as an unmet wish (${r.wish.id}${r.again ? `, said ${r.wish.times} times` : ""}), shown in candor memory and counted in candor metrics; nothing was changed for it.`;
  const steerable = named.filter((t) => knobs.some((k) => k.tool === t));
  if (steerable.length > 0) {
    const abouts = [...new Set(knobs.filter((k) => steerable.includes(k.tool)).map(choosable))];
    return `Not read as a setting: "${r.wish.wish}" is about ${steerable.join(", ")}, whose settings choose ${abouts.join("; ")}, but it shares no word with any of them, so Candor cannot tell which you mean. Say it with the setting's words to have it learned. ${kept}`;
  }
  const tools = r.wish.tools;
  const abouts = [...new Set(knobs.filter((k) => tools.includes(k.tool)).map(choosable))];
  const can =
    abouts.length > 0
      ? `the settings of ${tools.join(", ")} choose only ${abouts.join("; ")}`
      : `${tools.join(", ") || "the run's tools"} have no setting feedback may change`;
  return `No tool setting can choose "${r.wish.wish}": ${can}. ${kept}`;
}

/** What a setting chooses, in words: its subject, and a choice's options ("hotel quality (price, quality, rating)"). */
function choosable(k: Knob): string {
  return k.learn.kind === "choice" ? `${k.learn.about} (${Object.keys(k.learn.options).join(", ")})` : k.learn.about;
}
