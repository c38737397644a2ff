#!/usr/bin/env node
// Runs the compiled CLI in dist/, which an installed package always has (`npm pack` builds it). A clone that has
// not run `npm run build` has no dist/: there the TypeScript source runs through tsx, a devDependency, so an
// installed package never loads tsx. In a clone that has built once, dist/ is what runs: `npm start` always runs
// the source, and `npm run build` brings dist/ up to date.
import { existsSync } from "node:fs";
import process from "node:process";
import { URL } from "node:url";

const compiled = new URL("../dist/src/cli/main.js", import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch (e) {
    process.stderr.write(
      `Candor is not built (no ${compiled.pathname}) and tsx, which runs its source, is not installed (${e instanceof Error ? e.message : String(e)}). In a clone, run npm ci, then npm run build or npm start.\n`,
    );
    process.exit(1);
  }
  register();
  await import("../src/cli/main.ts");
}
