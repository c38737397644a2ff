/**
 * Fault injection for any toolkit, so every recovery path can be exercised on demand (demo, tests, benchmarks)
 * without a domain having to simulate its own failures. Domain-agnostic: a fault only replaces a tool's `run`.
 *
 * - `timeout`: the call hangs until its AbortSignal fires (the step's time limit), then rejects with the
 *   signal's reason. It never resolves on its own, so the caller's time limit is what ends it.
 * - `error`: the call throws a plain `Error("<tool> failed: simulated internal error (HTTP 500)")`, as an
 *   unclassified provider crash would.
 * - `unavailable`: the call throws CandorError RESOURCE_UNAVAILABLE ("<tool>: the requested option is fully
 *   booked / unavailable"), the case a workaround (wider search) can fix and a plain retry cannot.
 * - `slow`: the call waits five times the tool's `estimates.durationMs` (abortable) and then runs normally, so
 *   it succeeds unless the step's time limit is tighter.
 * - `garbage`: the call returns a nonsense string instead of the tool's structured output, for checking that
 *   consumers validate what they receive instead of trusting it.
 * - `complex`: the call throws CandorError TOOL_FAILED ("<tool>: the request is too complex to handle in one
 *   step"), declared too_complex, the case DECOMPOSE answers by splitting the step into smaller tools of the same
 *   worker's grant (`--fault search_activities=complex*1` shows it in the travel demo).
 *
 * The kinds live apart from the fault machinery (faults.ts) so the CLI's help names them without loading zod.
 */
export const FAULT_KINDS = ["timeout", "error", "unavailable", "slow", "garbage", "complex"] as const;
