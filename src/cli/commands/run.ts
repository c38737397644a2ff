import type { CliIo, Exit } from "../io.js";
import { startRun } from "../start-run.js";

/**
 * `candor run "<request>"`: plans and executes a request on a new thread. When it waits for a person, it asks at
 * the terminal (`io.ask`, unless --no-input), else exits 3 with the commands that answer it.
 */
export async function runCommand(requestText: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  return (await startRun(requestText, rawFlags, io)).exit;
}
