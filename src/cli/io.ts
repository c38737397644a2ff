import type { CandorEnv } from "../env.js";

/** Where the CLI writes and what it knows about its surroundings; injected so commands never touch globals. */
export interface CliIo {
  /** Results: the answer, the report, JSON. */
  out(text: string): void;
  /** Narration: streamed notifications, hints, errors. */
  err(text: string): void;
  env: CandorEnv;
  /** How the user invoked the CLI, for the commands we print ("npm start --" or "candor"). */
  invokedAs: string;
  /** Aborted when the user presses Ctrl-C; long runs stop at the next step boundary. */
  signal?: AbortSignal;
  /**
   * Runs `fn` if the process exits before the returned function is called (a second Ctrl-C exits at once):
   * how a command gives back a thread's lease on the way out. Absent in tests that run commands in-process.
   */
  atExit?(fn: () => void): () => void;
}

/** Exit codes of every `candor` command. */
export const Exit = {
  COMPLETED: 0,
  INTERNAL: 1,
  USAGE: 2,
  /** The thread is busy in another process (its lease is held); same code as bad usage, documented apart. */
  BUSY: 2,
  WAITING: 3,
  NOT_COMPLETED: 4,
  INTERRUPTED: 130,
} as const;
export type Exit = (typeof Exit)[keyof typeof Exit];
