import { describe, expect, it } from "vitest";
import { analyzeRequest } from "../../src/planning/lexicon.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defaultToolkits } from "../../src/app/toolkits.js";
import { readTrip } from "../../examples/travel/parse-request.js";

// Known misreads of the offline reader (issue 23): each pinned in the general case, with variants in the other
// languages the reader supports.

const numbers = (t: string) => analyzeRequest(t).numbers.map((n) => [n.text, n.value]);
const plan = (t: string) =>
  planWithRules(PlanningRequest.parse({ userIntent: t }), ToolRegistry.create(defaultToolkits()));
const said = (t: string) => {
  const u = plan(t).understanding;
  return [
    ...u.assumptions.map((a) => a.why),
    ...u.unaccounted.map((x) => `${x.text}: ${x.why}`),
    ...u.parts.filter((p) => p.status !== "served").map((p) => `${p.text}: ${p.why ?? ""}`),
  ].join("\n");
};

describe("a range of people is a party of that size, not a date", () => {
  it.each([
    ["Trip to Paris from Madrid for 3/4 people", 3, 4],
    ["Paris from Madrid, 2-3 travellers", 2, 3],
    ["3 or 4 of us going to Rome from Madrid", 3, 4],
    ["Voyage à Rome depuis Paris pour 3/4 personnes", 3, 4],
    ["Reise nach Wien von Berlin für 2-3 Personen", 2, 3],
    ["Viaje a Roma desde Madrid para 3 o 4 personas", 3, 4],
    ["Viaggio a Roma da Milano per 2-3 persone", 2, 3],
  ])("%s", (text, min, max) => {
    const r = readTrip(text);
    expect(r.facts.travellers).toBe(max);
    expect(r.facts.refused).not.toContain("travellers");
    const why = r.interpretation.assumptions.find((a) => a.name === "travellers")?.why ?? "";
    expect(why).toContain(`${min} to ${max}`);
    expect(why).toContain(`${max} is used`);
    // The record names no date where the request counted people.
    expect(plan(text).understanding.unaccounted.filter((u) => u.kind === "date")).toEqual([]);
  });
});

describe("when a trip starts is not its length", () => {
  it.each([
    "Fly to Paris from Madrid in 3 days",
    "Paris from Madrid 3 days from now",
    "Rome from Madrid a week from Friday",
    "Je veux aller à Paris depuis Madrid dans 3 jours",
    "Ich will in 3 Tagen von Berlin nach Wien",
    "Voglio andare a Roma da Milano tra 3 giorni",
    "Ik wil over 3 dagen van Amsterdam naar Parijs",
  ])("%s: the start, named as a date; the length is assumed", (text) => {
    const r = readTrip(text);
    expect(r.facts.assumed).toContain("days");
    expect(analyzeRequest(text).dates.length).toBe(1);
    expect(said(text)).toMatch(/starts/);
  });

  it.each([
    ["Fly to Paris from Madrid in 2 weeks for 4 days", 4],
    ["Paris from Madrid for 3 days", 3],
    ["a 5-day trip to Rome from Madrid", 5],
    ["Rome from Madrid, 3 nights", 4],
    ["Rome, Florence and Venice in 9 days from Paris", 9],
    ["Wien von Berlin für 3 Tage", 3],
    ["Rome depuis Paris pour 3 jours dans 2 semaines", 3],
  ])("%s: a length is still a length", (text, days) => {
    expect(readTrip(text).facts.days).toBe(days);
  });
});

describe("compound number words", () => {
  it.each([
    ["Reise nach Wien für dreihundert Euro", 300],
    ["Ich habe zweitausendfünfhundert Euro für die Reise", 2500],
    ["Wir bleiben fünfundzwanzig Tage in Wien", 25],
    ["Wir bleiben einundzwanzig Tage in Wien", 21],
    ["Wir möchten siebzehn Tage nach Berlin", 17],
    ["We willen vijfentwintig dagen naar Parijs", 25],
    ["We hebben tweeduizend euro voor de reis naar Parijs", 2000],
    ["Vorrei andare a Roma con duemilacinquecento euro", 2500],
    ["Vorrei restare venticinque giorni a Roma", 25],
  ])("%s", (text, value) => {
    expect(numbers(text).map(([, v]) => v)).toContain(value);
  });

  it("a German budget in words is read", () => {
    expect(
      readTrip("Reise von Berlin nach Wien für 3 Tage, Budget zweitausendfünfhundert Euro").facts.budgetAmount,
    ).toBe(2500);
  });
});

describe("a city that shares its name with its province", () => {
  it.each([
    "fly to Québec from Paris",
    "Quebec City from Paris",
    "vol pour Québec depuis Paris",
    "Flug nach Québec von Paris",
    "viaje a Quebec desde Madrid",
  ])("%s: the city, and the ambiguity said", (text) => {
    const r = readTrip(text);
    expect(r.facts.destination).toMatch(/Qu[eé]bec/);
    expect(r.facts.areas).toEqual([]);
  });

  it("says the name is also the province when it takes the city", () => {
    const why = readTrip("fly to Québec from Paris").interpretation.assumptions.map((a) => a.why);
    expect(why.join("\n")).toMatch(/province/);
  });

  it.each(["3 cities in Quebec from Paris", "a week in the province of Quebec from Paris"])(
    "%s: the province, when a word says so",
    (text) => {
      expect(readTrip(text).facts.areas).toEqual(["Quebec"]);
    },
  );
});

describe("invisible characters", () => {
  it.each([
    ["3 days in Pa\u200bris from Madrid", "Paris"],
    ["3 days in Ro\u00adme from Madrid", "Rome"],
    ["3 jours à Lis\ufeffbonne depuis Paris", "Lisbon"],
    ["3 Tage in Wi\u2060en von Berlin", "Vienna"],
  ])("are removed before reading: %j", (text, city) => {
    const a = analyzeRequest(text);
    expect(a.invisible.length).toBe(1);
    expect(a.text).not.toMatch(/\p{Cf}/u);
    expect(readTrip(a.text, a).facts.destination).toBe(city);
  });

  it("the record says the request held them", () => {
    const u = plan("3 days in Pa\u200bris from Madrid for 2").understanding;
    const note = u.assumptions.find((a) => a.name === "invisible characters");
    expect(note?.why).toMatch(/U\+200B/);
    expect(u.values.find((v) => v.name === "destination")?.value).toBe("Paris");
  });
});

describe("the language of a short request", () => {
  it.each(["Paris", "Roma", "Roma con amici", "Lisboa"])("is uncertain on thin evidence: %s", (text) => {
    expect(analyzeRequest(text).language.certain).toBe(false);
  });

  it.each([
    ["plan a trip to Rome", "en"],
    ["Vorrei andare a Parigi per tre giorni", "it"],
    ["zweitausendfünfhundert Euro, fünfundzwanzig Tage in Rom", "de"],
  ])("is certain when the words say so: %s", (text, code) => {
    expect(analyzeRequest(text).language).toMatchObject({ code, certain: true });
  });

  it("an uncertain language reads no word another language would read otherwise, and says so", () => {
    // "sei" is six in Italian, "I know" in Portuguese; "com" is Portuguese, "desde" Spanish: one word each.
    expect(analyzeRequest("Roma com sei amigos desde Madrid").language.certain).toBe(false);
    expect(numbers("Roma com sei amigos desde Madrid")).toEqual([]);
    expect(said("Roma com sei amigos desde Madrid")).toMatch(/uncertain.*"sei"/);
  });
});
