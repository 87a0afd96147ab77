/** ES2024's resizable `ArrayBuffer`, which Node 20 and 22 have (this project's TypeScript lib is ES2023). */
const ResizableBuffer = ArrayBuffer as unknown as new (
  bytes: number,
  options: { maxByteLength: number },
) => ArrayBuffer & { readonly resizable: boolean; resize(bytes: number): void };

/**
 * `bytes` of memory that `release` gives back at once: a resizable buffer, resized to nothing. A
 * typed array that is let go is freed only when V8 collects it, which a phase that allocates
 * little on V8's heap (a snapshot's end, its upload) makes rare: at 1,000,000 users a digest's
 * 36 MB stayed resident through the upload, and the written ids' sets (about 30 MB) beside it.
 */
export function releasableBuffer(bytes: number): ArrayBuffer {
  return new ResizableBuffer(bytes, { maxByteLength: bytes });
}

/**
 * Gives the memory under `view` back to the system now, when it is a `releasableBuffer`'s: every
 * view of it is then empty. Memory in any other buffer is left to V8 to collect.
 */
export function release(view: ArrayBufferView): void {
  const buffer = view.buffer as InstanceType<typeof ResizableBuffer>;
  if (buffer.resizable) buffer.resize(0);
}
