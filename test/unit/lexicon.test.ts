import { describe, expect, it } from "vitest";
import { analyzeRequest, contentWords } from "../../src/planning/lexicon.js";

const clauses = (t: string) => analyzeRequest(t).clauses.map((c) => c.text);
const negations = (t: string) => analyzeRequest(t).negations.map((n) => [n.cue.text, n.scope.text]);
const onlys = (t: string) => analyzeRequest(t).onlys.map((o) => [o.cue.text, o.scope.text]);
const numbers = (t: string) => analyzeRequest(t).numbers.map((n) => [n.text, n.value]);
const amounts = (t: string) => analyzeRequest(t).amounts.map((a) => [a.text, a.value, a.currency]);

describe("clauses", () => {
  it.each([
    [
      "find flights from Madrid to Paris and translate the menu into German",
      ["find flights from Madrid to Paris", "translate the menu into German"],
    ],
    ["Madrid to Paris then Rome, 6 days", ["Madrid to Paris", "Rome", "6 days"]],
    ["vuelos a Roma y luego un hotel; sin coche", ["vuelos a Roma", "un hotel", "sin coche"]],
    ["vol pour Rome puis un hôtel", ["vol pour Rome", "un hôtel"]],
  ])("%s", (text, expected) => {
    expect(clauses(text)).toEqual(expected);
  });

  it("never splits inside a number or a range", () => {
    expect(clauses("budget of 1,500 dollars")).toEqual(["budget of 1,500 dollars"]);
    expect(clauses("between 1000 and 1500 dollars")).toEqual(["between 1000 and 1500 dollars"]);
    expect(clauses("treinta y cinco euros")).toEqual(["treinta y cinco euros"]);
  });
});

describe("negation scope", () => {
  it.each([
    ["3 days in Paris, no hotel", [["no", "hotel"]]],
    ["Rome without flights please", [["without", "flights please"]]],
    ["we already have a place to stay", [["we already have", "a place to stay"]]],
    ["I don't want to go to Paris, take me to Rome", [["don't want", "to go to Paris"]]],
    ["Roma sin hotel", [["sin", "hotel"]]],
    ["Rome, pas d'hôtel", [["pas d'", "hôtel"]]],
    ["hotel not needed", [["not needed", "hotel"]]],
    ["no hotel but a flight", [["no", "hotel"]]],
  ])("%s", (text, expected) => {
    expect(negations(text)).toEqual(expected);
  });

  it.each([
    ["Wien, kein Hotel", [["kein", "Hotel"]]],
    ["Roma senza albergo", [["senza", "albergo"]]],
    ["Lisboa sem hotel", [["sem", "hotel"]]],
    ["Amsterdam, geen hotel", [["geen", "hotel"]]],
    ["Berlin ohne Auto, aber mit Hotel", [["ohne", "Auto"]]],
  ])("in German, Italian, Portuguese and Dutch: %s", (text, expected) => {
    expect(negations(text)).toEqual(expected);
  });

  it.each(["a non-stop flight to Rome", "a no-frills hotel"])("a prefix is not a negation: %s", (text) => {
    expect(negations(text)).toEqual([]);
  });

  it.each([
    ["We have no specific accommodation restrictions.", "no specific accommodation restrictions"],
    ["3 days in Rome, we have no preferences about food", "we have no preferences about food"],
    ["We don't mind the cuisine.", "We don't mind the cuisine"],
    ["no particular cuisine", "no particular cuisine"],
    ["the cuisine doesn't matter", "the cuisine doesn't matter"],
    ["sin preferencias de comida", "sin preferencias de comida"],
    ["keine besonderen Wünsche", "keine besonderen Wünsche"],
    ["peu importe l'hôtel", "peu importe l'hôtel"],
  ])("saying there is no constraint rules nothing out: %s", (text, waiver) => {
    const a = analyzeRequest(text);
    expect(a.negations).toEqual([]);
    expect(a.waivers.map((w) => w.text)).toEqual([waiver]);
  });

  it("a waiver stops at a contrast, and what follows can still be ruled out", () => {
    const a = analyzeRequest("no preferences about food, but no hotel");
    expect(a.waivers.map((w) => w.text)).toEqual(["no preferences about food"]);
    expect(negations("no preferences about food, but no hotel")).toEqual([["no", "hotel"]]);
  });

  it("a waiver never reaches back over the request's figures", () => {
    expect(analyzeRequest("Rome for 3 days we don't mind").waivers.map((w) => w.text)).toEqual(["don't mind"]);
  });

  it.each(["no more than $500", "not more than 3 days", "pas plus de 500 euros", "no más de 500 euros"])(
    "a limit is not a negation: %s",
    (text) => {
      expect(negations(text)).toEqual([]);
    },
  );
});

describe("only", () => {
  it.each([
    ["flight only from Paris to London", [["only", "flight"]]],
    ["just a hotel in Rome", [["just", "a hotel in Rome"]]],
    ["only flights", [["only", "flights"]]],
    ["solo vuelos a Roma", [["solo", "vuelos a Roma"]]],
    ["seulement l'hôtel", [["seulement", "l'hôtel"]]],
  ])("%s", (text, expected) => {
    expect(onlys(text)).toEqual(expected);
  });
});

describe("currencies named in other languages", () => {
  it.each([
    ["budget 500 dollars canadiens", "CAD"],
    ["500 dólares australianos", "AUD"],
  ])("%s", (text, currency) => {
    expect(amounts(text)[0]?.[2]).toBe(currency);
  });
});

describe("numbers", () => {
  it.each([
    ["two thousand dollars", [["two thousand", 2000]]],
    ["twenty-five people", [["twenty-five", 25]]],
    ["a hundred euros", [["a hundred", 100]]],
    ["dos mil quinientos euros", [["dos mil quinientos", 2500]]],
    ["treinta y cinco", [["treinta y cinco", 35]]],
    ["deux mille cinq cents euros", [["deux mille cinq cents", 2500]]],
    ["quatre-vingt-dix jours", [["quatre-vingt-dix", 90]]],
    ["vingt et un jours", [["vingt et un", 21]]],
    [
      "-2 people for 2.5 days",
      [
        ["-2", -2],
        ["2.5", 2.5],
      ],
    ],
    [
      "1,500 or 1.500 or 2,5",
      [
        ["1,500", 1500],
        ["1.500", 1500],
        ["2,5", 2.5],
      ],
    ],
    ["2k", [["2k", 2000]]],
  ])("%s", (text, expected) => {
    expect(numbers(text)).toEqual(expected);
  });

  it("articles and the French 'très' are not numbers", () => {
    expect(numbers("un hôtel très central, a flight, une nuit")).toEqual([]);
  });

  it("reads ranges", () => {
    const a = analyzeRequest("3-5 days, between 1000 and 1500 dollars, entre 3 y 5 noches");
    expect(a.ranges.map((r) => [r.min, r.max])).toEqual([
      [3, 5],
      [1000, 1500],
      [3, 5],
    ]);
  });
});

describe("money", () => {
  it.each([
    ["under $2000", [["$2000", 2000, "USD"]]],
    ["¥300000", [["¥300000", 300000, "JPY"]]],
    ["300000 yen", [["300000 yen", 300000, "JPY"]]],
    ["2000 CHF", [["2000 CHF", 2000, "CHF"]]],
    ["€1,500", [["€1,500", 1500, "EUR"]]],
    ["£900", [["£900", 900, "GBP"]]],
    ["under two thousand dollars", [["two thousand dollars", 2000, "USD"]]],
    ["dos mil euros", [["dos mil euros", 2000, "EUR"]]],
    ["2000 pesos", [["2000 pesos", 2000, null]]],
  ])("%s", (text, expected) => {
    expect(amounts(text)).toEqual(expected);
  });

  it("a count of people or days is not money", () => {
    expect(amounts("2 people for 3 days")).toEqual([]);
  });
});

describe("dates, task verbs and names", () => {
  it.each([
    ["next Friday or on 15 June", ["next Friday", "on 15 June"]],
    ["leaving 2025-07-01", ["2025-07-01"]],
    ["quiero ir mañana a Roma", ["mañana"]],
    ["je pars le 3 mai pour Rome", ["3 mai"]],
    ["vom 16. bis 18. März 2022 nach Wien, 4 Tage", ["16. bis 18. März 2022"]],
    ["dal 16 al 18 marzo 2022 a Parigi", ["16 al 18 marzo 2022"]],
    ["van 16 tot 18 maart 2022 naar Parijs", ["16 tot 18 maart 2022"]],
  ])("finds dates in the request's language (chrono-node): %s", (text, expected) => {
    expect(analyzeRequest(text).dates.map((d) => d.text)).toEqual(expected);
  });

  it("a range of dates carries its days, both ends counted; a length of time is no date", () => {
    const a = analyzeRequest("spanning 3 days from March 16th to March 18th, 2022, for 7 days");
    expect(a.dates.map((d) => [d.text, d.days])).toEqual([["March 16th to March 18th, 2022", 3]]);
  });

  it.each([
    ["Ich möchte 4 Tage nach Wien fahren, kein Hotel", "de", true],
    ["Vorrei andare a Parigi per tre giorni", "it", true],
    ["Quero ir a Lisboa com duas pessoas", "pt", true],
    ["Хочу поехать в Париж на три дня", "ru", false],
    ["東京に3日間行きたい", "ja", false],
    ["plan a trip to Rome", "en", true],
  ])("tells the request's language, and whether it is read: %s", (text, code, read) => {
    expect(analyzeRequest(text).language).toMatchObject({ code, read });
  });

  it("what a figure counts is no name, and a length counted in words is no date", () => {
    const a = analyzeRequest("Ich möchte 4 Tage nach Wien fahren, 2 Personen");
    expect(a.names.map((n) => n.text)).toEqual(["Wien"]);
    expect(analyzeRequest("Vorrei andare a Parigi per tre giorni").dates).toEqual([]);
    expect(analyzeRequest("Ich fliege nach Lissabon, eine Woche").names.map((n) => n.text)).toEqual(["Lissabon"]);
  });

  it("reads number words of a language only in a request written in it", () => {
    expect(numbers("Vorrei andare a Parigi per tre giorni con due amici")).toEqual([
      ["tre", 3],
      ["due", 2],
    ]);
    expect(numbers("the payment is due in two days")).toEqual([["two", 2]]);
  });

  it("names task verbs by their English infinitive", () => {
    expect(
      analyzeRequest("translate it, résume-moi ça, llama a Juan, compare prices, email me").taskVerbs.map(
        (v) => v.verb,
      ),
    ).toEqual(["translate", "summarize", "call", "compare", "email"]);
  });

  it("finds capitalised names, not a sentence's everyday first word", () => {
    expect(analyzeRequest("Plan a trip from Madrid to New York. Then Rome").names.map((n) => n.text)).toEqual([
      "Madrid",
      "New York",
      "Rome",
    ]);
    expect(analyzeRequest("Prague and Vienna").names.map((n) => n.text)).toEqual(["Vienna"]);
  });

  it("reads the tools' keywords as everyday words: a sentence's first starts no name, an -ing form is a verb", () => {
    const words = ["report", "posting"];
    expect(analyzeRequest("Report North Sales", words).names.map((n) => n.text)).toEqual(["North Sales"]);
    expect(analyzeRequest("Report North Sales").names.map((n) => n.text)).toEqual(["Report North Sales"]);
    expect(analyzeRequest("posting it", words).taskVerbs.map((v) => v.verb)).toEqual(["post"]);
    expect(analyzeRequest("posting it").taskVerbs).toEqual([]);
  });
});

describe("content words", () => {
  const words = (t: string) => contentWords(analyzeRequest(t)).map((w) => w.text);
  it.each([
    ["could you please order me a taxi to the airport", ["order", "taxi", "airport"]],
    ["read README.md and fix the typos", ["read", "README.md", "fix", "typos"]],
    ["quisiera contratar un seguro para el viaje", ["contratar", "seguro", "viaje"]],
    ["je voudrais changer de l'argent", ["changer", "argent"]],
    ["a 3-day trip for 2", ["3-day", "trip"]],
  ])("%s", (text, expected) => {
    expect(words(text)).toEqual(expected);
  });
});

describe("halves and signs", () => {
  it.each([
    ["two and a half days", [["two and a half", 2.5]]],
    ["3 and a half", [["3 and a half", 3.5]]],
    ["deux et demi", [["deux et demi", 2.5]]],
    ["under $-500", [["-500", -500]]],
  ])("%s", (text, expected) => {
    expect(numbers(text)).toEqual(expected);
  });
});
