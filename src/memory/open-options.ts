import { DEFAULT_STORAGE_BOUNDS, type StorageBounds } from "../domain/config.js";

/** How a database is opened; every field is optional and its absence keeps today's behaviour. */
export interface OpenOptions {
  /**
   * Bounds the database's parts enforce: `maxStoredValueBytes` (the SQLite and PostgreSQL stores refuse a larger put),
   * `maxToolResultBytes` (what the effect ledger keeps of a result) and `maxLogLineBytes` (the decision log's lines).
   * Plans and tool calls are held to theirs where they are handled.
   */
  bounds?: Partial<StorageBounds>;
  /**
   * Open for reading only, as the commands that only read do: nothing is created, upgraded, swept or written, and a
   * SQLite file or folder this process may not write is read all the same. Any write fails as STORAGE_READ_ONLY.
   * PostgreSQL creates nothing when opened anyway; a server or role that refuses writes says so on the first write.
   */
  readOnly?: boolean;
}

/** The bound on one stored value's bytes that `options` sets, or the default. */
export function storedValueLimit(options: OpenOptions): number {
  return options.bounds?.maxStoredValueBytes ?? DEFAULT_STORAGE_BOUNDS.maxStoredValueBytes;
}

/** The bound on one kept tool result's bytes that `options` sets (the effect ledger's), or the default. */
export function toolResultLimit(options: OpenOptions): number {
  return options.bounds?.maxToolResultBytes ?? DEFAULT_STORAGE_BOUNDS.maxToolResultBytes;
}

/** The bound on one decision-log line's bytes that `options` sets, or the default. */
export function logLineLimit(options: OpenOptions): number {
  return options.bounds?.maxLogLineBytes ?? DEFAULT_STORAGE_BOUNDS.maxLogLineBytes;
}
