/**
 * A pass-through response body that says when it is over. It pulls from the
 * inner body only when the client pulls (highWaterMark 0, like the relay it
 * wraps: no chunk is read ahead, backpressure reaches the backend), hands each
 * chunk on untouched, and calls `onEnd` exactly once: when the inner body is
 * done, when it errors, or when the client cancels (which is passed inward, so
 * the relay still aborts the upstream fetch).
 */

export type BodyEnd = "done" | "error" | "cancel";

export function onBodyEnd(
  body: ReadableStream<Uint8Array>,
  onEnd: (how: BodyEnd) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  // An inner body that errors rejects `closed` too; the error reaches the client through pull, not here.
  reader.closed.catch(() => {});
  let ended = false;
  const end = (how: BodyEnd) => {
    if (ended) return;
    ended = true;
    onEnd(how);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            end("done");
            return;
          }
          controller.enqueue(value);
        } catch (err) {
          controller.error(err);
          end("error");
        }
      },
      async cancel(reason) {
        end("cancel");
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
