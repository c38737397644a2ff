/** "Did it apply, and if not why": the one result shape for new code (STYLE 12). */
export type Result<T> = { ok: true; value: T } | { ok: false; reason: string };
