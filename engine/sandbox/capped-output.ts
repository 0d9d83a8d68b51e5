// What a sandboxed process printed, kept within a fixed memory bound however much it prints: the
// first and last `cap` bytes, with a count of what fell between (a model reads head and tail).
export class CappedOutput {
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  total = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.#headBytes < this.cap) {
      const take = chunk.subarray(0, this.cap - this.#headBytes);
      this.#head.push(take);
      this.#headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0].length >= this.cap) {
      const first = this.#tail.shift()!;
      this.#tailBytes -= first.length;
      this.dropped += first.length;
    }
  }

  /** Everything kept; a marker stands where bytes were dropped. */
  text(): string {
    const head = Buffer.concat(this.#head).toString('utf8');
    const tail = Buffer.concat(this.#tail).toString('utf8');
    return this.dropped > 0 ? `${head}\n[... ${this.dropped} bytes omitted ...]\n${tail}` : head + tail;
  }
}
