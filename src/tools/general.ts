import type { Toolkit } from "./types.js";
import { ALL_CATEGORIES } from "./registry.js";

/**
 * The `general` worker of seed 004: the fallback with every tool. It ranks below specialists, so it is chosen
 * only when no specialist can do a step (or for the one-step fallback plan of an unusable model answer).
 */
export function generalToolkit(): Toolkit {
  return {
    name: "general",
    tools: [],
    workers: [
      {
        name: "general",
        description: "Fallback worker with access to every tool",
        categories: [ALL_CATEGORIES],
        fallback: true,
        keywords: [],
      },
    ],
  };
}
