export * from "./catalog.js";
export * from "./parse-request.js";
export * from "./tools.js";

/**
 * The demo trip. With the default choices (recommended flight, preferred central hotel, top activities) it
 * costs about 10% more than its budget, so a run shows a budget violation and an ADJUST_PARAMETERS recovery
 * alongside the injected faults; capping the two largest items (flight and hotel) makes it fit.
 */
export const DEMO_REQUEST = "Plan a 3-day trip from Madrid to Paris for 2 people under $2000";

/**
 * The demo's faults (see src/tools/faults.ts): the primary flight search always hangs until its step times out,
 * so the flight must come from backup_flight_agent; the first hotel search reports the hotel fully booked, so
 * the hotel must come from a widened search.
 */
export const DEMO_FAULTS: readonly string[] = ["search_flights=timeout", "search_hotels=unavailable*1"];
