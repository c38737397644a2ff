import { createInterface, type Interface } from "node:readline/promises";
import type { CandorEnv } from "../env.js";

/** Where the CLI writes and what it knows about its surroundings; injected so commands never touch globals. */
export interface CliIo {
  /** Results: the answer, the report, JSON. */
  out(text: string): void;
  /** Writes `text` to the results as it is, without ending the line: an answer printed as it is written. */
  outPart?(text: string): void;
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
  /**
   * Shows `prompt` and reads one line from the person at the terminal; null at end of input (Ctrl-D) or once
   * `signal` is aborted. Present only when stdin and stderr are terminals: a command without it (a script, a
   * pipe, CI) never waits for input. `--no-input` makes run and resume ignore it.
   */
  ask?: (prompt: string) => Promise<string | null>;
}

/**
 * Characters a terminal acts on instead of showing, or that change what is shown without being seen: C0 controls
 * but tab and newline, DEL, C1 controls, the bidirectional overrides and isolates that reorder what is shown
 * ("Trojan source") and the direction marks (LRM, RLM, ALM), the zero-width space and byte-order mark that hide a
 * difference between two words ("Par\u200bis" is not Paris), and the line and paragraph separators some terminals
 * break lines at. The zero-width joiner and non-joiner stay: emoji and Persian are written with them.
 */
const UNSHOWN =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * `text` with every character a terminal would act on made visible, so that untrusted text (a file, a tool's or a
 * model's output, the request) printed by the CLI cannot move the cursor, hide what follows, set the window title or
 * write the clipboard (OSC 52): a C0 control becomes its Unicode control picture (ESC → ␛, CR → ␍), anything else
 * the `\uXXXX` escape. Inside a JSON string that escape reads back as the same character, so `--json` output keeps
 * its values exactly. The CLI's own text holds none of these, so applying it to everything printed changes nothing
 * else.
 */
export function visible(text: string): string {
  return text.replace(UNSHOWN, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * Untrusted text set inside one line of the CLI's own (a step's description, a quote of the request, a reason, an
 * error): `visible`, and its line breaks shown as ␤ too, so that a request or a model's text cannot print lines
 * that look like Candor's own ("  2. book_trip … approved").
 */
export function inline(text: string): string {
  return visible(text).replace(/\r?\n/g, "␤");
}

/**
 * The CLI's output with everything it prints made visible (`visible`): the one place where text reaches the
 * terminal, so no command can forget it.
 */
export function visibleIo<T extends Pick<CliIo, "out" | "err" | "outPart" | "ask">>(io: T): T {
  const { outPart, ask } = io;
  return {
    ...io,
    out: (text: string) => io.out(visible(text)),
    err: (text: string) => io.err(visible(text)),
    ...(outPart ? { outPart: (text: string) => outPart(visible(text)) } : {}),
    ...(ask ? { ask: (prompt: string) => ask(visible(prompt)) } : {}),
  };
}

/** A line reader on a terminal; `close` lets the process exit (an open reader keeps stdin alive). */
export interface LineReader {
  ask(prompt: string): Promise<string | null>;
  close(): void;
}

/**
 * Reads answers line by line from `input`, writing prompts to `output`. The terminal stays in its normal
 * (cooked) mode, so the kernel echoes and edits the line, Ctrl-D ends the input and Ctrl-C still raises SIGINT
 * for the process's own handler (`signal`). Lines typed ahead of a question are kept for it. Input is paused
 * between questions, so keys typed while a run streams are not consumed by anyone until the next question.
 */
export function lineReader(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  signal?: AbortSignal,
): LineReader {
  let rl: Interface | null = null;
  let ended = false;
  const typedAhead: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
  const answer = (line: string | null) => {
    const w = waiting;
    waiting = null;
    w?.(line);
  };
  const end = () => {
    ended = true;
    answer(null);
  };
  signal?.addEventListener("abort", end, { once: true });
  const open = (): Interface => {
    if (rl) return rl;
    const created = createInterface({ input, output, terminal: false });
    created.on("line", (line) => {
      if (!waiting) {
        typedAhead.push(line);
        return;
      }
      created.pause();
      answer(line);
    });
    created.on("close", end);
    rl = created;
    return created;
  };
  return {
    ask(prompt) {
      if (ended || signal?.aborted) return Promise.resolve(null);
      const next = typedAhead.shift();
      if (next !== undefined) {
        output.write(`${prompt}${next}\n`);
        return Promise.resolve(next);
      }
      const r = open();
      return new Promise((resolve) => {
        waiting = resolve;
        r.setPrompt(prompt);
        r.prompt();
      });
    },
    close() {
      signal?.removeEventListener("abort", end);
      rl?.close();
      end();
    },
  };
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
  /** The database failed: damaged, full, read-only, or its PostgreSQL connection lost (src/memory/storage-faults.ts). */
  STORAGE: 5,
  INTERRUPTED: 130,
} as const;
export type Exit = (typeof Exit)[keyof typeof Exit];
