// A fixed-size ring of samples (time plus a few channels) in Float64Arrays: telemetry runs
// at 100 Hz all night, so the live plot must reuse the same memory instead of growing a
// list and trimming it.

export class Ring {
  constructor(capacity, channels) {
    this.capacity = capacity;
    this.t = new Float64Array(capacity);
    this.ch = Array.from({ length: channels }, () => new Float64Array(capacity));
    this.head = 0; // where the next sample goes
    this.size = 0;
  }

  push(t, values) {
    const i = this.head;
    this.t[i] = t;
    for (let c = 0; c < this.ch.length; c++) {
      const v = values[c];
      this.ch[c][i] = typeof v === "number" ? v : NaN;
    }
    this.head = (i + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  clear() {
    this.head = 0;
    this.size = 0;
  }

  /** The newest time, or NaN when empty. */
  last() {
    return this.size ? this.t[(this.head - 1 + this.capacity) % this.capacity] : NaN;
  }

  /**
   * Copies the samples with t >= tMin, oldest first, into the given arrays (x gets
   * t - tRef), and returns how many were copied. No allocation: called every frame.
   */
  copySince(tMin, tRef, xOut, chOut) {
    let n = 0;
    const start = (this.head - this.size + this.capacity) % this.capacity;
    for (let k = 0; k < this.size; k++) {
      const i = (start + k) % this.capacity;
      const t = this.t[i];
      if (t < tMin) continue;
      xOut[n] = t - tRef;
      for (let c = 0; c < chOut.length; c++) chOut[c][n] = this.ch[c][i];
      n++;
    }
    return n;
  }
}
