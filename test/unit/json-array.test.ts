import { describe, expect, it } from "vitest";
import { jsonArrayItems } from "../../examples/travel/json-array.js";

const items = (text: string, perSlice?: number) => [...jsonArrayItems(Buffer.from(text, "utf8"), perSlice)];

describe("jsonArrayItems: a JSON array parsed a slice at a time (the travel gazetteer's reader)", () => {
  const tricky = [
    { city: "São Paulo", note: 'commas, [brackets] and {braces} in "strings"', slash: "a\\b" },
    [1, [2, [3]], { deep: { er: [4, 5] } }],
    "Tōkyō",
    42,
    -1.5e3,
    true,
    null,
    {},
    [],
  ];
  const text = JSON.stringify(tricky, null, 2);

  it("gives every item JSON.parse gives, whatever the slice size", () => {
    for (const per of [1, 2, 3, 500]) expect(items(text, per)).toEqual(tricky);
    expect(items(JSON.stringify(tricky), 4)).toEqual(tricky);
    expect(items("  [ ]  ")).toEqual([]);
    expect(items("[7]")).toEqual([7]);
  });

  it("refuses what JSON.parse refuses, and what a cut at a comma could let through", () => {
    for (const per of [1, 2, 500]) {
      for (const bad of ["", "{}", "[1,]", "[,1]", "[1,,2]", "[1", "[1}", "[1] x", '["a]', "[1 2]", "[{]"])
        expect(() => items(bad, per), `${bad} (per ${per})`).toThrow(SyntaxError);
    }
  });
});
