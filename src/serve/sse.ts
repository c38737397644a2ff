/** One server-sent event as the run routes write them. */
export interface SseEvent {
  event: string;
  data: string;
}

/** The events of a complete server-sent-events body, in order (`event:` and `data:` lines; comments skipped). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) out.push({ event, data: data.join("\n") });
  }
  return out;
}

/**
 * JSON as the LangGraph server writes it: a LangChain message (anything with `toDict`) as its fields and its
 * `type` (`{type: "ai", content, id, …}`), not the constructor form JSON.stringify gives it, whose `id` is the
 * class path — the chat apps read messages in the first form, and a page that got the second went blank.
 */
export function toJson(value: unknown): string {
  return (
    JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
      const raw = this[key];
      if (raw !== null && typeof raw === "object" && "toDict" in raw && typeof raw.toDict === "function") {
        const { type, data } = (raw as { toDict(): { type: string; data: Record<string, unknown> } }).toDict();
        return { ...data, type };
      }
      return v;
    }) ?? "null"
  );
}

/** A JSON response written as `toJson` writes it. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(toJson(body), { status, headers: { "content-type": "application/json" } });
}

/** One event as bytes of a server-sent-events body. */
export function formatSse(event: string, data: unknown): string {
  const text = toJson(data);
  return `event: ${event}\n${text
    .split("\n")
    .map((l) => `data: ${l}`)
    .join("\n")}\n\n`;
}

/**
 * `response` whose body calls `onEnd` once when it has been read to its end, fails, or is cancelled (the client
 * went away): how a run's lease is given back exactly when its stream stops.
 */
export function onBodyEnd(response: Response, onEnd: () => void): Response {
  if (!response.body) {
    onEnd();
    return response;
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (e) {
        end();
        controller.error(e);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
