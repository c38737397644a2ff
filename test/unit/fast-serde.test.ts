import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { Send } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { FastJsonPlusSerializer } from "../../src/memory/fast-serde.js";

const reference = new JsonPlusSerializer();
const fast = new FastJsonPlusSerializer();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Values a checkpoint holds: plain state, and every special value JsonPlusSerializer encodes as a record. */
const VALUES: Record<string, unknown> = {
  plain: { plan: { steps: [{ id: "s1", status: "done", result: { n: 1 } }] }, feedback: [], n: 3.5, ok: true },
  undefinedInside: { a: undefined, list: [1, undefined, 3], nested: { b: undefined } },
  topUndefined: undefined,
  nullish: { a: null, list: [null] },
  set: new Set(["a", "b"]),
  map: new Map<string, unknown>([["k", { v: 1 }]]),
  regexp: /a.b/gi,
  error: new Error("boom"),
  bytesInside: { raw: new Uint8Array([0, 1, 255]) },
  send: new Send("worker", { step: { id: "s1" }, inputs: {} }),
  delta: { channel: new DeltaSnapshot([{ id: "n1" }, { id: "n2" }]) },
  date: { at: new Date("2026-01-02T03:04:05.000Z") },
  lcLookalikes: { a: { lc: 2, type: "constructor", id: ["Function"], args: [] }, b: { lc: 2, type: "other" } },
  unicode: { s: 'café — ✓ \u2028 "quoted"' },
  // eslint-disable-next-line no-sparse-arrays -- a hole is written as an undefined record, not as null
  sparse: [1, , 3],
  sendLookalike: { lg_name: "Send", node: "n", args: 1, extra: 2 },
  nullPrototype: Object.assign(Object.create(null) as object, { a: 1 }),
  deep: Array.from({ length: 300 }).reduce<unknown>((inner) => ({ inner }), { leaf: undefined }),
  numbers: { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, negZero: -0 },
};

describe("FastJsonPlusSerializer", () => {
  it("writes every kind of value byte for byte as JsonPlusSerializer does", async () => {
    for (const [name, value] of Object.entries(VALUES)) {
      const [refType, refBytes] = await reference.dumpsTyped(value);
      const [type, bytes] = await fast.dumpsTyped(value);
      expect({ name, type, json: text(bytes) }).toEqual({ name, type: refType, json: text(refBytes) });
    }
  });

  it("reads back what JsonPlusSerializer reads back, from either serializer's bytes", async () => {
    for (const [name, value] of Object.entries(VALUES)) {
      const [type, bytes] = await reference.dumpsTyped(value);
      const expected: unknown = await reference.loadsTyped(type, bytes);
      expect({ name, value: await fast.loadsTyped(type, bytes) }).toEqual({ name, value: expected });
      expect({ name, value: await fast.loadsTyped(type, text(bytes)) }).toEqual({ name, value: expected });
    }
  });

  it("keeps the kinds of revived values: Set, Map, RegExp, Error, Uint8Array, DeltaSnapshot, undefined", async () => {
    const roundTrip = async (v: unknown) => fast.loadsTyped(...(await fast.dumpsTyped(v)));
    expect(await roundTrip(VALUES.set)).toBeInstanceOf(Set);
    expect(await roundTrip(VALUES.map)).toBeInstanceOf(Map);
    expect(await roundTrip(VALUES.regexp)).toBeInstanceOf(RegExp);
    expect(await roundTrip(VALUES.error)).toBeInstanceOf(Error);
    expect(((await roundTrip(VALUES.bytesInside)) as { raw: unknown }).raw).toBeInstanceOf(Uint8Array);
    expect(((await roundTrip(VALUES.delta)) as { channel: unknown }).channel).toBeInstanceOf(DeltaSnapshot);
    const withUndefined = (await roundTrip(VALUES.undefinedInside)) as { a: unknown; list: unknown[] };
    expect("a" in withUndefined && withUndefined.a === undefined).toBe(true);
    expect(withUndefined.list).toEqual([1, undefined, 3]);
    // An lc:2 record for a constructor outside the closed set stays inert data, never a call.
    expect(((await roundTrip(VALUES.lcLookalikes)) as { a: unknown }).a).toEqual({
      lc: 2,
      type: "constructor",
      id: ["Function"],
      args: [],
    });
  });

  it("revives LangChain messages (async load) as JsonPlusSerializer does", async () => {
    const value = {
      messages: [
        new HumanMessage("hi"),
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "t", args: { a: 1 } }] }),
      ],
    };
    const [type, bytes] = await reference.dumpsTyped(value);
    expect(text((await fast.dumpsTyped(value))[1])).toBe(text(bytes));
    const revived = (await fast.loadsTyped(type, bytes)) as { messages: unknown[] };
    expect(revived).toEqual(await reference.loadsTyped(type, bytes));
    expect(revived.messages[1]).toBeInstanceOf(AIMessage);
  });

  it('still writes a value with a cycle (as "[Circular]") instead of throwing', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const [, refBytes] = await reference.dumpsTyped(cyclic);
    expect(text((await fast.dumpsTyped(cyclic))[1])).toBe(text(refBytes));
  });
});
