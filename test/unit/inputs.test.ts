import { describe, expect, it } from "vitest";
import { describeInputs } from "../../src/transparency/inputs.js";

describe("describeInputs (what a tool approval shows besides the call's arguments)", () => {
  it("uses each consumed input's summary, else its JSON, and leaves out what the tool does not consume", () => {
    const inputs = {
      itinerary: { summary: "3-day itinerary Madrid → Paris, total $2,182", days: [] },
      flight: { price: 424 },
      hotel: { summary: "unused" },
    };
    expect(describeInputs(inputs, ["itinerary", "flight", "missing"])).toEqual({
      itinerary: "3-day itinerary Madrid → Paris, total $2,182",
      flight: '{"price":424}',
    });
  });

  it("shortens a long value so the question stays readable", () => {
    const text = describeInputs({ notes: "x".repeat(1000) }, ["notes"]).notes!;
    expect(text.length).toBe(240);
    expect(text.endsWith("…")).toBe(true);
  });
});
