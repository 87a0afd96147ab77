// diff's output to a reader that goes away (`diff OLD NEW | head`): the rest is dropped quietly, as
// diff(1) stops, while any other failure of the stream is thrown.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ChunkedOutput } from "../../lib/diff";

function failingStream(code: string) {
  const written: string[] = [];
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk, _encoding, callback) {
      written.push(String(chunk));
      callback(Object.assign(new Error(`write ${code}`), { code }));
    },
  });
  return { stream, written };
}

describe("ChunkedOutput", () => {
  it("stops printing, without an error, once the reader closed the pipe (EPIPE)", async () => {
    const { stream, written } = failingStream("EPIPE");
    const out = new ChunkedOutput(stream);
    for (let i = 0; i < 3; i++) {
      await out.write(`${"x".repeat(70_000)}\n`);
    }
    await out.flush();
    expect(written).toHaveLength(1);
  });

  it("throws any other failure of the stream", async () => {
    const { stream } = failingStream("EIO");
    const out = new ChunkedOutput(stream);
    await expect(
      (async () => {
        for (let i = 0; i < 3; i++) await out.write(`${"x".repeat(70_000)}\n`);
        await out.flush();
      })(),
    ).rejects.toThrow("write EIO");
  });
});
