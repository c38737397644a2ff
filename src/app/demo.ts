import { DEMO_FAULTS, DEMO_REQUEST } from "../../examples/travel/index.js";

/** What `candor` with no command runs: the travel example's demo trip, and the faults injected into it. */
export const DEMO = { request: DEMO_REQUEST, faults: DEMO_FAULTS };
