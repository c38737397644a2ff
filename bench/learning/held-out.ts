/**
 * Held-out users (issue 26): preferences of the kinds the hidden users have (a cheap place to sleep, a well-reviewed
 * one, an airline refused, one kind of outing, wishes no setting can meet, a control user), worded afresh in
 * English, Spanish, French and German. Written before the learning code was changed for issue 26 and never looked
 * at while tuning it: they measure whether what was built helps users no bench was written for. Reported beside
 * the hidden users, never tuned against; a phrasing that fails here is a finding, not something to add a word for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { compileAgent } from "../../graphs/agent.js";
import { travelToolkit } from "../../examples/travel/index.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { MIN_OCCURRENCES } from "../../src/reflection/patterns.js";
import {
  afterFirstAdjustment,
  couldLearn,
  preferenceRejectionsBeforeApplied,
  rejectionsBeforeApplied,
  simulateUser,
  type SimulatedUser,
} from "./simulate.js";
import { homeOf, requestsFor, rng, usualAirline, type Answer, type Judgement } from "./users.js";
import { wrongSubjectBench, type WrongSubjectRecord } from "./wrong-subject.js";

type HeldOutKind =
  | "lodgingCheap"
  | "lodgingReviews"
  | "airlineShun"
  | "cultureOnly"
  | "outdoorsOnly"
  | "foodOnly"
  | "noSetting"
  | "control";

interface HeldOutPreference {
  label: string;
  /** The setting that can express it; null when none can. */
  setting: string | null;
  /** Ways of saying it was not met; `airline` is the one the user avoids. */
  reasons: (airline: string) => readonly string[];
  /** Whether the answer meets it; a string names the missing part (rejected with "The plan has no … at all"). */
  meets: (a: Answer, airline: string) => boolean | string;
  /** The hotel complaints among the reasons, for the wrong-subject check (a model that blames the flights). */
  aboutHotel?: true;
}

const onlyKind =
  (wanted: string) =>
  (a: Answer): boolean | string => {
    if (!a.activities) return "activities";
    const kinds = a.activities.activities.flatMap((x) => (x.kind ? [x.kind] : []));
    return kinds.length > 0 && kinds.every((k) => k === wanted);
  };

export const HELD_OUT: Record<HeldOutKind, HeldOutPreference> = {
  lodgingCheap: {
    label: "a cheap place to sleep (3★ or fewer), other words",
    setting: "search_hotels priority",
    aboutHotel: true,
    reasons: () => [
      "The accommodation cost a fortune",
      "A simple guesthouse would have done, that lodging was a splurge",
      "We only sleep in the room, so get a budget-friendly one",
      "I don't need four stars to crash for the night",
      "El alojamiento salió carísimo",
      "La chambre était beaucoup trop chère",
      "Die Unterkunft war viel zu teuer",
    ],
    meets: (a) => (a.hotel ? a.hotel.stars <= 3 : "hotel"),
  },
  lodgingReviews: {
    label: "a well-reviewed place to stay (rated ≥ 8.5), other words",
    setting: "search_hotels priority, minRating",
    aboutHotel: true,
    reasons: () => [
      "The guesthouse had awful reviews",
      "Other travellers hated that lodging, check what they say",
      "Our room smelled of smoke and the sheets were stained",
      "Las opiniones de ese alojamiento son malísimas",
      "L'hôtel avait de très mauvais avis",
      "Das Zimmer war schmutzig und laut",
    ],
    meets: (a) => (a.hotel ? a.hotel.rating >= 8.5 : "hotel"),
  },
  airlineShun: {
    label: "an airline to avoid (the home city's usual one), other words",
    setting: "search_flights avoidAirlines",
    reasons: (airline) => [
      `Please keep me off ${airline}`,
      `${airline} again? No thanks`,
      `I'd rather take the train than board ${airline}`,
      "Not that airline, I told you before",
      `No quiero volar con ${airline} nunca más`,
      `Plus jamais ${airline}, s'il vous plaît`,
      `Bitte nicht mehr mit ${airline}`,
    ],
    meets: (a, airline) => (a.flight ? a.flight.airline.toLowerCase() !== airline.toLowerCase() : "flight"),
  },
  cultureOnly: {
    label: "cultural outings only, other words",
    setting: "search_activities focus",
    reasons: () => [
      "Show me paintings and old churches instead",
      "I wanted exhibitions and monuments, not boat rides and markets",
      "More sights with a story behind them",
      "Queremos visitar museos y el casco antiguo",
      "Nous voulions des musées et des visites historiques",
      "Mehr Kultur bitte: Museen und Altstadt",
    ],
    meets: onlyKind("culture"),
  },
  outdoorsOnly: {
    label: "outdoor outings only, other words",
    setting: "search_activities focus",
    reasons: () => [
      "Give us fresh air: gardens, beaches, viewpoints",
      "We'd rather be out walking in the open than stuck inside",
      "Less indoors, more trails",
      "Queremos naturaleza y senderismo",
      "On préfère la nature et les randonnées",
      "Wir wollen raus in die Natur, wandern",
    ],
    meets: onlyKind("outdoors"),
  },
  foodOnly: {
    label: "food outings only, other words",
    setting: "search_activities focus",
    reasons: () => [
      "Where's the street food?",
      "Book us a cooking class or a wine tasting instead",
      "We plan our days around lunch and dinner",
      "Queremos probar la comida local, mercados y tapas",
      "On voulait goûter la cuisine locale",
      "Wir wollen gut essen gehen",
    ],
    meets: onlyKind("food"),
  },
  noSetting: {
    label: "wishes no setting can meet (a balcony, a window seat, a dog)",
    setting: null,
    reasons: () => [
      "I wanted a room with a balcony",
      "Where is the window seat I always ask for?",
      "My dog has to come along",
      "Quería una habitación con vistas al mar",
      "Je voulais un siège côté hublot",
    ],
    meets: () => false,
  },
  control: { label: "control: accepts every answer", setting: null, reasons: () => [], meets: () => true },
};

const KINDS = Object.keys(HELD_OUT) as HeldOutKind[];

/** Pure. A held-out user's verdict on an answer, the reason drawn by `pick` (0–1). */
export function judgeHeldOut(kind: HeldOutKind, airline: string, a: Answer, pick: number): Judgement {
  const met = HELD_OUT[kind].meets(a, airline);
  if (met === true) return { verdict: "accepted" };
  if (typeof met === "string") return { verdict: "rejected", reason: `The plan has no ${met} at all` };
  const reasons = HELD_OUT[kind].reasons(airline);
  return { verdict: "rejected", reason: reasons[Math.floor(pick * reasons.length)]! };
}

interface HeldOutUser extends SimulatedUser {
  userId: string;
  kind: HeldOutKind;
}

export interface HeldOutBench {
  users: HeldOutUser[];
  wrongSubject: WrongSubjectRecord[];
}

/** Runs the held-out users on a store of their own, then their hotel complaints against a flight-blaming model. */
export async function heldOutBench(o: { seed: number; runs: number; users: number }): Promise<HeldOutBench> {
  const dir = mkdtempSync(join(tmpdir(), "candor-held-out-"));
  const persistence = openPersistence(join(dir, "held-out.db"));
  const toolkits = [travelToolkit({ latencyMs: 0 })];
  const ctx = { graph: compileAgent({ toolkits }, persistence), persistence, registry: ToolRegistry.create(toolkits) };
  const users: HeldOutUser[] = [];
  try {
    for (const [k, kind] of KINDS.entries())
      for (let u = 0; u < o.users; u++) {
        // Other seeds than the bench's users (which use seed*1000 + k*10 + u), so the trips differ too.
        const seed = o.seed * 1000 + 500 + k * 10 + u;
        const airline = usualAirline(homeOf(seed));
        const userId = `held-${kind}-${u + 1}`;
        const simulated = await simulateUser(ctx, {
          userId,
          requests: requestsFor(seed, o.runs, false),
          judge: (_trip, answer, pick) => judgeHeldOut(kind, airline, answer, pick),
          wording: rng(seed ^ 0xbeef),
        });
        users.push({ userId, kind, ...simulated });
      }
  } finally {
    persistence.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const hotel = KINDS.filter((k) => HELD_OUT[k].aboutHotel).flatMap((k) => HELD_OUT[k].reasons(""));
  const wishes = HELD_OUT.noSetting.reasons("").filter((r) => /room|habitaci/i.test(r));
  return { users, wrongSubject: await wrongSubjectBench([...hotel, ...wishes]) };
}

const pct = (n: number, d: number) => (d === 0 ? "—" : `${((100 * n) / d).toFixed(0)}%`);
const firsts = (xs: readonly (number | null)[]) => xs.map((x) => x ?? "never").join(", ");

/** The section: the same figures as the hidden users', on the held-out ones. */
export function heldOutSection(b: HeldOutBench): string {
  const expressible = KINDS.filter((k) => HELD_OUT[k].setting !== null);
  const rows = expressible.map((kind) => {
    const us = b.users.filter((u) => u.kind === kind);
    const runs = us.flatMap((u) => u.runs);
    const after = us.flatMap((u) => afterFirstAdjustment(u.runs));
    const ok = after.filter((r) => r.verdict === "accepted").length;
    const before = us.map((u) => rejectionsBeforeApplied(u.runs));
    const confirmed = runs.reduce((n, r) => n + r.confirmed, 0);
    const named = runs.filter((r) => r.wishNamed).length;
    return `| ${HELD_OUT[kind].label} | ${HELD_OUT[kind].setting} | ${runs.length} | ${pct(runs.filter((r) => r.verdict === "accepted").length, runs.length)} | ${firsts(before)} | ${ok}/${after.length} = ${pct(ok, after.length)} | ${confirmed} | ${named} |`;
  });
  const ex = b.users.filter((u) => expressible.includes(u.kind));
  const could = ex.filter((u) => couldLearn(u.runs));
  const helped = could.filter((u) => u.runs.some((r) => r.applied > 0));
  const within = helped.filter((u) => (rejectionsBeforeApplied(u.runs) ?? Infinity) <= MIN_OCCURRENCES);
  const withinAbout = helped.filter((u) => (preferenceRejectionsBeforeApplied(u.runs) ?? Infinity) <= MIN_OCCURRENCES);
  const after = ex.flatMap((u) => afterFirstAdjustment(u.runs));
  const ok = after.filter((r) => r.verdict === "accepted").length;
  const wishRuns = b.users.filter((u) => u.kind === "noSetting").flatMap((u) => u.runs);
  const wishRejected = wishRuns.filter((r) => r.verdict === "rejected");
  const control = b.users.filter((u) => u.kind === "control").flatMap((u) => u.runs);
  const refused = b.wrongSubject.filter((r) => r.refused).length;
  const stored = b.wrongSubject.filter((r) => !r.refused).map((r) => `"${r.reason}"`);
  return `
### Held-out users (issue 26): written before the change, never tuned against

${b.users.length} users (bench/learning/held-out.ts) with preferences of the hidden users' kinds worded afresh in English,
Spanish, French and German, on a store of their own.

| held-out preference | setting that can express it | runs | accepted | rejections before first applied | success after reflection | confirmed | named as unmet |
|---|---|---:|---:|---|---:|---:|---:|
${rows.join("\n")}

Users helped, of those Candor could learn for: ${helped.length} of ${could.length} = ${pct(helped.length, could.length)}; learned within ${MIN_OCCURRENCES} rejections: ${within.length} of ${helped.length} (${withinAbout.length} counting only rejections about the preference, not "The plan has no … at all"); success after reflection ${ok}/${after.length} = ${pct(ok, after.length)}.
No setting can express: ${wishRejected.filter((r) => r.wishNamed).length} of ${wishRejected.length} rejections named as an unmet wish, ${wishRuns.reduce((n, r) => n + r.applied, 0)} adjustments applied.
Control: ${control.length} runs, ${control.filter((r) => r.applied > 0).length} under an adjustment.
Wrong-subject reflections on the held-out hotel complaints: refused ${refused} of ${b.wrongSubject.length}${stored.length > 0 ? `; stored: ${stored.join(", ")}` : ""}.
`;
}

// `npx tsx bench/learning/held-out.ts` prints this section alone (BENCH_LEARNING_SEED, _RUNS, _USERS as the bench).
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain)
  process.stdout.write(
    heldOutSection(
      await heldOutBench({
        seed: Number(process.env.BENCH_LEARNING_SEED ?? 12),
        runs: Number(process.env.BENCH_LEARNING_RUNS ?? 10),
        users: Number(process.env.BENCH_LEARNING_USERS ?? 3),
      }),
    ),
  );
