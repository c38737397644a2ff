import { describe, expect, it } from "vitest";
import {
  CandorContextSchema,
  defaultStateSettings,
  mergeSettings,
  resolveRunSettings,
  RunSettingsPatch,
  settingsNote,
} from "../../src/domain/config.js";
import { CandorError } from "../../src/errors.js";

/** The state's settings after an input that gave `patch` (what the state's reducer makes of it). */
const afterInput = (patch: RunSettingsPatch) => mergeSettings(defaultStateSettings(), [patch]);

describe("resolveRunSettings: input over the assistant's context over its configurable over the defaults", () => {
  it("takes every default when neither the input nor the assistant says anything", () => {
    const r = resolveRunSettings({ state: defaultStateSettings(), context: {}, configurable: { thread_id: "t" } });
    expect(r.settings).toEqual({
      maxRevisions: 3,
      approvalThreshold: 0.5,
      abortBelow: 0.3,
      maxStepFailures: 3,
      planner: true,
      fixed: ["maxRevisions", "approvalThreshold", "abortBelow", "maxStepFailures", "planner"],
    });
    expect(Object.values(r.sources)).toEqual(Array(5).fill("default"));
    expect(settingsNote(r)).toBeNull();
  });

  it("takes the assistant's value for a field the input left out, and the input's for a field it gave", () => {
    const r = resolveRunSettings({
      state: afterInput({ approvalThreshold: 0.2 }),
      context: { approvalThreshold: 0.99, maxRevisions: 5 },
    });
    expect(r.settings).toMatchObject({ approvalThreshold: 0.2, maxRevisions: 5, abortBelow: 0.3 });
    expect(r.sources).toMatchObject({ approvalThreshold: "input", maxRevisions: "assistant", abortBelow: "default" });
    expect(settingsNote(r)).toBe("Settings from the assistant's configuration: maxRevisions 5.");
  });

  it("counts an input field equal to the default as given: it still beats the assistant", () => {
    const r = resolveRunSettings({
      state: afterInput({ approvalThreshold: 0.5 }),
      context: { approvalThreshold: 0.99 },
    });
    expect(r.settings.approvalThreshold).toBe(0.5);
    expect(r.sources.approvalThreshold).toBe("input");
  });

  it("prefers context over configurable, and reads settings from configurable beside LangGraph's own keys", () => {
    const r = resolveRunSettings({
      state: defaultStateSettings(),
      context: { abortBelow: 0.1 },
      configurable: { thread_id: "t", abortBelow: 0.4, maxStepFailures: 7 },
    });
    expect(r.settings).toMatchObject({ abortBelow: 0.1, maxStepFailures: 7 });
    expect(r.ignored).toEqual([]);
  });

  it("keeps settings already fixed (a resumed thread) whatever the assistant says now", () => {
    const fixed = resolveRunSettings({ state: defaultStateSettings(), context: { maxRevisions: 1 } }).settings;
    const again = resolveRunSettings({ state: fixed, context: { maxRevisions: 9 } });
    expect(again.settings.maxRevisions).toBe(1);
  });

  it("refuses a bad assistant setting with a coded error in plain words, naming every problem", () => {
    const bad = () =>
      resolveRunSettings({
        state: defaultStateSettings(),
        context: { approvalThreshold: 1.5 },
        configurable: { maxRevisions: "lots" },
      });
    expect(bad).toThrow(CandorError);
    try {
      bad();
    } catch (e) {
      expect(CandorError.hasCode(e, "CONFIGURATION")).toBe(true);
      expect((e as Error).message).toMatch(/context approvalThreshold is 1\.5: .*1/);
      expect((e as Error).message).toMatch(/configurable maxRevisions is "lots"/);
      expect((e as Error).message).toMatch(/nothing was run/);
    }
  });

  it("names context keys that are not settings (a typo, a model) instead of dropping them silently", () => {
    const r = resolveRunSettings({ state: defaultStateSettings(), context: { aprovalThreshold: 0.9, model: "x" } });
    expect(r.ignored).toEqual(["aprovalThreshold", "model"]);
    expect(settingsNote(r)).toMatch(/aprovalThreshold, model ignored: not settings this graph reads/);
  });

  it("treats a cleared (null) field as not said", () => {
    const r = resolveRunSettings({ state: defaultStateSettings(), context: { approvalThreshold: null } });
    expect(r.sources.approvalThreshold).toBe("default");
  });
});

describe("the state's settings reducer and the graph's context schema", () => {
  it("merges writes field by field and marks what they wrote as fixed", () => {
    const s = mergeSettings(defaultStateSettings(), [{ maxRevisions: 1 }, { abortBelow: 0.2, fixed: [] }]);
    expect(s).toMatchObject({ maxRevisions: 1, abortBelow: 0.2, approvalThreshold: 0.5 });
    expect(s.fixed).toEqual(["maxRevisions", "abortBelow"]);
  });

  it("refuses an unknown input setting rather than dropping it", () => {
    expect(RunSettingsPatch.safeParse({ aprovalThreshold: 0.9 }).success).toBe(false);
  });

  it("never throws on a bad value itself (LangGraph would throw a bare zod error): resolveRunSettings refuses it", () => {
    expect(CandorContextSchema.parse({ approvalThreshold: "high", thread_id: "t" })).toEqual({
      approvalThreshold: undefined,
      maxRevisions: undefined,
      abortBelow: undefined,
      maxStepFailures: undefined,
    });
  });
});
