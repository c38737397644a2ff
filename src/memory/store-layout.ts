/*
 * How SqliteStore lays its items out in the file, apart from the store itself (which is a LangGraph BaseStore and
 * loads LangChain): records.ts reads thread records with these alone.
 */

/**
 * Joins namespace labels in the `namespace` column. BaseStore.put already refuses labels containing a period,
 * so no label written through the public API can contain it, and the file stays readable in the sqlite3 shell.
 */
export const NAMESPACE_SEPARATOR = ".";

/** The table SqliteStore keeps its items in; prefixed so it never collides with SqliteSaver's tables. */
export const STORE_TABLE = "candor_store";
