import { DEFAULT_STORAGE_BOUNDS, type StorageBounds } from "../domain/config.js";

/** How a database is opened; every field is optional and its absence keeps today's behaviour. */
export interface OpenOptions {
  /**
   * Bounds the stores enforce. Only `maxStoredValueBytes` applies to opening a database (the SQLite and PostgreSQL
   * stores refuse a larger put); the others are enforced where tool calls and plans are handled.
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
