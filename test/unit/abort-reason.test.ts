import { describe, expect, it } from "vitest";
import { abortReason, sleep } from "../../src/tools/sleep.js";

describe("abortReason (what a cancelled wait rejects with)", () => {
  it("is the abort's own reason when that is an Error, so callers can recognise it", () => {
    const reason = new Error("step s1 timed out");
    expect(abortReason(AbortSignal.abort(reason))).toBe(reason);
    expect(abortReason(AbortSignal.abort())).toMatchObject({ name: "AbortError" });
  });

  // A signal aborted with a string made sleep reject with that bare string: no message property, no stack.
  it("wraps a reason that is not an Error, keeping it as the cause", async () => {
    const signal = AbortSignal.abort("user left");
    const wrapped = abortReason(signal);
    expect(wrapped).toBeInstanceOf(Error);
    expect(wrapped.message).toBe("Aborted: user left");
    expect(wrapped.cause).toBe("user left");
    await expect(sleep(10, signal)).rejects.toThrow("Aborted: user left");
  });
});
