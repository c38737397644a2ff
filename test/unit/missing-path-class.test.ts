import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { classifyFailure } from "../../src/replanning/classify.js";
import { ConfinedRoot } from "../../src/tools/builtin/confine.js";
import { errorMessage } from "../../src/errors.js";

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function failureOf(relative: string): Promise<{ message: string; cls: string }> {
  const root = await ConfinedRoot.open(dir);
  const error = await root.readText(relative, 1000).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).not.toBeNull();
  return { message: errorMessage(error), cls: classifyFailure(errorMessage(error), error) };
}

describe("a path the step got wrong is the step's parameters, not the tool misbehaving", () => {
  it("a file that does not exist is invalid_parameters, and the message says where it looked and what to do", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "candor-missing-"));
    const { message, cls } = await failureOf("README.md");
    expect(cls).toBe("invalid_parameters");
    expect(message).toMatch(
      /no such file or directory in .*Check the name, or start Candor in the folder that holds it/,
    );
  });

  it("a folder where a file was expected is invalid_parameters too", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "candor-missing-"));
    mkdirSync(path.join(dir, "notes"));
    expect((await failureOf("notes")).cls).toBe("invalid_parameters");
  });
});
