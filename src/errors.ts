/**
 * Coded errors. Every error Candor raises on purpose carries a stable `code`, a message that says what was
 * wrong and what to do, and optionally a `cause`. Recognise them with `CandorError.isInstance` rather than
 * `instanceof`, which breaks across duplicated module copies (tsx, Studio's bundler, test isolation).
 */
export const ErrorCode = {
  /** The request itself is unusable (empty intent, bad constraint values). Fault: user. */
  INVALID_REQUEST: "INVALID_REQUEST",
  /** No plan can be built from the tools available. Seed 002. Fault: user/config. */
  NO_VALID_PLAN: "NO_VALID_PLAN",
  /** A plan cannot fit the request's budget, step or time limits. Seed 002. Fault: user. */
  INSUFFICIENT_RESOURCES: "INSUFFICIENT_RESOURCES",
  /** A step depends on a step that does not exist. */
  PLAN_MISSING_DEPENDENCY: "PLAN_MISSING_DEPENDENCY",
  /** The step dependency graph has a cycle. */
  PLAN_CYCLE: "PLAN_CYCLE",
  /** Step `order` contradicts its dependencies. */
  PLAN_ORDER: "PLAN_ORDER",
  /** Two steps share an id, or a plan has no steps. */
  PLAN_INVALID: "PLAN_INVALID",
  /** A plan names a worker type or tool the registry does not have. */
  PLAN_UNKNOWN_REFERENCE: "PLAN_UNKNOWN_REFERENCE",
  /** buildAgentGraph / registry received inconsistent tools or worker types. Fault: developer. */
  CONFIGURATION: "CONFIGURATION",
  /** A worker tried to call a tool outside its grant. */
  TOOL_NOT_GRANTED: "TOOL_NOT_GRANTED",
  /** A tool's own failure, already classified. */
  TOOL_FAILED: "TOOL_FAILED",
  /** A step exceeded its time limit. */
  TIMEOUT: "TIMEOUT",
  /** A result broke a constraint of the request (budget, limits). */
  CONSTRAINT_VIOLATION: "CONSTRAINT_VIOLATION",
  /** A resource (seat, room, service) is not available. */
  RESOURCE_UNAVAILABLE: "RESOURCE_UNAVAILABLE",
  /** A human decision or resume value does not fit what the thread is waiting for. */
  INVALID_DECISION: "INVALID_DECISION",
  /** A thread id that has no checkpoints. */
  UNKNOWN_THREAD: "UNKNOWN_THREAD",
  /** A database path that cannot be opened or written. */
  STORAGE: "STORAGE",
  /**
   * The database is damaged (a page that does not make sense): found on open, before anything is written. Fault:
   * system; CLI exit 5.
   */
  STORAGE_DAMAGED: "STORAGE_DAMAGED",
  /** The disk (or the database's size limit) is full: nothing more can be written. Fault: system; CLI exit 5. */
  STORAGE_FULL: "STORAGE_FULL",
  /** The database, its folder or its -wal/-shm files cannot be written by this user. Fault: system; CLI exit 5. */
  STORAGE_READ_ONLY: "STORAGE_READ_ONLY",
  /** The disk reported an error reading or writing the database (SQLite's SQLITE_IOERR). CLI exit 5. */
  STORAGE_IO_ERROR: "STORAGE_IO_ERROR",
  /** Another process kept the database locked for longer than Candor waits (SQLITE_BUSY). CLI exit 5. */
  STORAGE_BUSY: "STORAGE_BUSY",
  /** The connection to PostgreSQL was lost (a restart, a network fault, a terminated backend). CLI exit 5. */
  STORAGE_CONNECTION_LOST: "STORAGE_CONNECTION_LOST",
  /**
   * The database (or a file beside it, such as the decision log) could not be closed after the command's work: what
   * was written before stays. CLI exit 5.
   */
  STORAGE_CLOSE_FAILED: "STORAGE_CLOSE_FAILED",
  /** A value is over one of Candor's bounds for stored data (steps per plan, bytes per value). Fault: input/model. */
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",
  /**
   * A thread's checkpoint was written by an earlier build of this 0.x package in a shape this build no longer reads
   * (no `next`). Fault: user (an old thread); CLI exit 2, saying to start the request again.
   */
  UNSUPPORTED_CHECKPOINT: "UNSUPPORTED_CHECKPOINT",
  /** Something a model returned could not be used. Fault: model. */
  MODEL_OUTPUT: "MODEL_OUTPUT",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const BRAND = Symbol.for("candor.error");

export class CandorError extends Error {
  readonly code: ErrorCode;
  /** Structured facts about the failure (e.g. the cycle's step ids, a constraint's limit and actual value). */
  readonly details: Record<string, unknown>;
  readonly [BRAND] = true;

  constructor(message: string, code: ErrorCode, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CandorError";
    this.code = code;
    this.details = options.details ?? {};
  }

  static isInstance(e: unknown): e is CandorError {
    return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }

  static hasCode(e: unknown, code: ErrorCode): e is CandorError {
    return CandorError.isInstance(e) && e.code === code;
  }
}

/** A short, human message for any thrown value (never a stack trace). */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
