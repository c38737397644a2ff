import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { paramText } from "../../src/tools/types.js";

describe("paramText (a parameter in a step's description)", () => {
  it("shows strings, numbers and booleans as they are, and the fallback when the value is missing", () => {
    expect(paramText("Paris", "?")).toBe("Paris");
    expect(paramText(3, "?")).toBe("3");
    expect(paramText(false, "?")).toBe("false");
    expect(paramText(undefined, "?")).toBe("?");
    expect(paramText(null, "a file")).toBe("a file");
  });

  it("shows an object or array as JSON, never as [object Object]", () => {
    expect(paramText({ name: "Paris" }, "?")).toBe('{"name":"Paris"}');
    expect(paramText(["a", "b"], "?")).toBe('["a","b"]');
  });

  // A param set to an object (a model's plan, a --set edit) used to read "Find a hotel in [object Object]".
  it("a travel step's description shows an object-valued param as JSON", () => {
    const hotels = travelToolkit().tools.find((t) => t.name === "search_hotels");
    expect(hotels?.describeStep?.({ city: { name: "Paris" }, nights: 3 })).toBe(
      'Find a hotel in {"name":"Paris"} for 3 night(s)',
    );
  });
});
