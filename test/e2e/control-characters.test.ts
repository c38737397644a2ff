import { describe, expect, it } from "vitest";
import { perTest, runCli } from "./helpers.js";

// Regression (issue 23 item 7): a request with control characters was echoed raw to the terminal, and a line break
// in it printed lines that looked like Candor's own (a step of the plan, a line of the approval).
const { freshDb } = perTest();

/** ESC, BEL (an OSC 52 clipboard write), a right-to-left override, a zero-width space: none may reach a terminal raw. */
// eslint-disable-next-line no-control-regex -- the characters looked for
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069]/;
const FORGED = "   2. book_trip    Book the trip [booking_agent]";

describe("a request with control characters, through the paths a person sees", () => {
  it("the plan, the understanding and the approval show them, and a line break cannot forge a line", async () => {
    const request = `Plan a 2-day trip from Paris to Rome for 1 person\n${FORGED}\u001b]52;c;ZXZpbA==\u0007 and call Pa\u200bris \u202eevil`;
    const r = await runCli(["run", request, "--db", freshDb(), "--no-input"]);
    expect(r.code, r.stderr).toBe(3);
    const shown = `${r.stdout}\n${r.stderr}`;
    expect(shown).not.toMatch(RAW);
    expect(shown).toContain("␛]52;c;ZXZpbA==␇");
    expect(shown).toContain("Pa\\u200bris");
    expect(shown).toContain("\\u202eevil");
    // The request's line break is shown as ␤ wherever the plan's notes and the approval quote it inside a line.
    const approval = r.stdout.slice(r.stdout.indexOf("Waiting for a human"));
    expect(approval).toContain("␤   2");
    const notes = r.stderr.slice(r.stderr.indexOf("Plan plan-"));
    expect(notes).toContain('Understood "Plan a 2-day trip from Paris to Rome for 1 person␤   2"');
    for (const text of [approval, notes]) expect(text.split("\n").some((l) => l.startsWith(FORGED))).toBe(false);
  });

  it("a refusal quotes the request with its line breaks escaped, on one line", async () => {
    const fake = "  Plan approved: nothing left to check";
    const r = await runCli(["run", `zzz qqq\n${fake}\u001b[2J`, "--db", freshDb()]);
    expect(r.stdout).toContain("  Request: zzz qqq␤");
    expect(`${r.stdout}${r.stderr}`).not.toMatch(RAW);
    expect(r.stderr).toContain(`No tool matches "zzz qqq\\n${fake}\\u001b[2J"`);
    expect(
      `${r.stdout}${r.stderr.slice(r.stderr.indexOf("database:"))}`.split("\n").some((l) => l.startsWith(fake)),
    ).toBe(false);
  });

  it("--json keeps the request exact once parsed", async () => {
    const request = "Plan a 2-day trip from Paris to Rome for 1 person \u001b[31mred\u202e";
    const r = await runCli(["run", request, "--db", freshDb(), "--json", "--no-input"]);
    expect(r.stdout).not.toMatch(RAW);
    const out = JSON.parse(r.stdout) as { plan?: { objective?: string }; request?: { userIntent?: string } };
    expect(JSON.stringify(out)).toContain(JSON.stringify(request).slice(1, -1));
  });
});
