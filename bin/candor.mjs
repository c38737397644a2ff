#!/usr/bin/env node
// Runs the TypeScript CLI directly: tsx compiles it on the fly, so `npx candor` works without a build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
