import { describe, expect, it } from "vitest";
import { locateQuote, misread } from "../../src/planning/record-claims.js";

// A model's understanding record is untrusted input: its quotes and the values it says it read are checked against the
// request's own text (issue: a model's record that quotes words the request does not say, or misreads a number or a
// date, went unchecked).
describe("locateQuote", () => {
  const request = "Plan a 3-day trip from Madrid to Paris, for 2 people under $2000";

  it("finds a quote as a person would: case, accents, spacing and punctuation aside", () => {
    expect(locateQuote(request, "plan a 3 day trip")?.text).toBe("Plan a 3-day trip");
    expect(locateQuote(request, "from Madrid to Paris for 2 people")?.text).toBe("from Madrid to Paris, for 2 people");
    expect(locateQuote("Un viaje a Málaga", "a malaga")?.text).toBe("a Málaga");
  });

  it('reads "…" as words left out, and keeps the marks the quote and the request share', () => {
    expect(locateQuote(request, "trip … Paris")?.text).toBe("trip from Madrid to Paris");
    expect(locateQuote(request, "under $2000")?.text).toBe("under $2000");
  });

  it("finds nothing the request does not say, nor a word inside another word", () => {
    expect(locateQuote(request, "for 20 people")).toBeNull();
    expect(locateQuote(request, "for two guests")).toBeNull();
    expect(locateQuote(request, "Par")).toBeNull();
    expect(locateQuote(request, "…")).toBeNull();
  });
});

describe("misread", () => {
  it("accepts a value its source states, however it is written", () => {
    expect(misread("for 2 people", "2")).toBeNull();
    expect(misread("for two people", 2)).toBeNull();
    expect(misread("zwei Personen", "2")).toBeNull();
    expect(misread("under $2000", "2000 USD")).toBeNull();
    expect(misread("1,000,000 yen", "1000000 JPY")).toBeNull();
    expect(misread("a pair", "2")).toBeNull();
    expect(misread("Madrid", "Madrid")).toBeNull();
  });

  it("names a figure the source does not state", () => {
    expect(misread("for 2 people", "3")).toMatch(/3 is not what "for 2 people" says \(the reader finds 2\)/);
    expect(misread("two nights", 3)).toMatch(/finds 2/);
    expect(misread("under $2000", "200")).toMatch(/200 is not what/);
  });

  it("names a currency other than the source's", () => {
    expect(misread("under $2000", "2000 EUR")).toMatch(/in EUR, but "under \$2000" is in USD/);
  });

  it("reads dates with chrono-node: the days a range spans count, a day it does not name is named", () => {
    const range = "from March 16th to March 18th, 2022";
    expect(misread(range, "2022-03-16")).toBeNull();
    expect(misread(range, "3")).toBeNull();
    expect(misread(range, "2")).toBeNull();
    expect(misread(range, "2022-03-17")).toMatch(/names a day that/);
    expect(misread("du 16 au 18 mars", "2022-03-19")).toMatch(/names a day that/);
    expect(misread("del 16 al 18 de marzo", "2022-03-16")).toBeNull();
  });
});
