import { renderReport } from "../../transparency/report.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { CommonFlags, parseFlags } from "../options.js";
import { dbArgFor, dbFlagFor } from "../present.js";
import { resumeCommands, shellArg, waitingLines } from "../render.js";
import { readOutcome } from "../session.js";
import { openThread } from "../open-thread.js";

/** `candor report <thread> [--json]`: the post-execution report, or what an unfinished run is waiting for. */
export async function reportCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(CommonFlags, rawFlags);
  const { threadId, session, dbPath, started } = await openThread(rawId, flags.db, io, "read", { readOnly: true });
  return closing(
    session,
    async () => {
      if (!started) {
        const start = `${io.invokedAs} resume ${threadId}${dbFlagFor(dbPath)}`;
        if (flags.json)
          io.out(
            JSON.stringify(
              {
                threadId,
                status: null,
                started: false,
                finished: false,
                answer: null,
                report: null,
                waitingFor: null,
                resumeCommands: [start],
              },
              null,
              2,
            ),
          );
        else
          io.out(
            `Thread ${threadId} stopped before its first checkpoint: nothing ran, so there is no report. Start it from its recorded request with: ${start}`,
          );
        return Exit.NOT_COMPLETED;
      }
      const outcome = await readOutcome(session.graph, threadId);
      const { report, status, answer } = outcome.values;
      const dbArg = dbArgFor(dbPath);
      const commands = outcome.waitingFor
        ? resumeCommands(threadId, outcome.waitingFor, { commandPrefix: io.invokedAs, dbArg })
        : [];
      const ready = outcome.finished && report !== null;
      if (flags.json) {
        io.out(
          JSON.stringify(
            {
              threadId,
              status,
              finished: outcome.finished,
              answer,
              report: ready ? report : null,
              waitingFor: outcome.waitingFor,
              resumeCommands: commands.map((c) => c.command),
            },
            null,
            2,
          ),
        );
      } else if (ready) {
        io.out(renderReport(report));
      } else if (outcome.waitingFor) {
        io.out(
          [
            `Thread ${threadId} has not finished (status ${status}), so there is no report yet.`,
            ...waitingLines(outcome.waitingFor, commands),
          ].join("\n"),
        );
      } else {
        const db = dbArg ? ` --db ${shellArg(dbArg)}` : "";
        io.out(
          `Thread ${threadId} has not finished (status ${status}, next: ${outcome.next.join(", ") || "none"}), so there is no report yet. Continue it with: ${io.invokedAs} resume ${threadId}${db}`,
        );
      }
      if (ready) return Exit.COMPLETED;
      return outcome.waitingFor ? Exit.WAITING : Exit.NOT_COMPLETED;
    },
    { where: session.persistence.dbPath },
  );
}
