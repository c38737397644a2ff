import type { AgentStateValue } from "../../../nodes/state.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { HistoryFlags, parseFlags } from "../options.js";
import { dbFlagFor } from "../present.js";
import { clock } from "../render.js";
import { threadConfig } from "../session.js";
import { openThread } from "../open-thread.js";

/** `candor history <thread>`: the thread's checkpoints, newest first. */
export async function historyCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(HistoryFlags, rawFlags);
  const { threadId, session, started, dbPath } = await openThread(rawId, flags.db, io, "read", { readOnly: true });
  return closing(
    session,
    async () => {
      const rows: {
        checkpointId: string;
        step: number | null;
        source: string | null;
        next: string[];
        status: string | null;
        createdAt: string | null;
      }[] = [];
      for await (const snapshot of session.graph.getStateHistory(
        threadConfig(threadId),
        flags.limit ? { limit: flags.limit } : undefined,
      )) {
        const values = snapshot.values as Partial<AgentStateValue>;
        rows.push({
          checkpointId: String(snapshot.config.configurable?.checkpoint_id ?? "?"),
          step: snapshot.metadata?.step ?? null,
          source: snapshot.metadata?.source ?? null,
          next: [...snapshot.next],
          status: values.status ?? null,
          createdAt: snapshot.createdAt ?? null,
        });
      }
      if (flags.json) {
        io.out(JSON.stringify({ threadId, checkpoints: rows }, null, 2));
        return Exit.COMPLETED;
      }
      if (!started) {
        io.out(
          `Thread ${threadId} has no checkpoints: it stopped before its first one, so nothing ran. Start it from its recorded request with: ${io.invokedAs} resume ${threadId}${dbFlagFor(dbPath)}`,
        );
        return Exit.COMPLETED;
      }
      io.out(`Checkpoints of thread ${threadId}, newest first (${rows.length}):`);
      io.out(`  ${"time".padEnd(8)}  ${"step".padStart(4)}  ${"status".padEnd(17)}  ${"next".padEnd(28)}  checkpoint`);
      for (const r of rows) {
        const next = r.next.length > 0 ? r.next.join(", ") : "(end)";
        io.out(
          `  ${r.createdAt ? clock(r.createdAt) : "--:--:--"}  ${String(r.step ?? "?").padStart(4)}  ${(r.status ?? "-").padEnd(17)}  ${next.padEnd(28)}  ${r.checkpointId}`,
        );
      }
      return Exit.COMPLETED;
    },
    { where: session.persistence.dbPath },
  );
}
