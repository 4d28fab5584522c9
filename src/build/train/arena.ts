/**
 * Scratch vectors for one example's forward and backward pass, cut from one buffer. Allocating a
 * Float64Array gives it a backing store of its own outside the JavaScript heap, and a fit asks
 * for some twenty of them per example per evaluation: on CLINC150 (15,000 examples) the
 * collector's share of an evaluation was over a third (measured with --cpu-prof). Views of one
 * buffer cost an object each and no backing store.
 */
export class Arena {
  private buffer: Float64Array;
  private used = 0;

  constructor(capacity = 1 << 14) {
    this.buffer = new Float64Array(capacity);
  }

  /** A zeroed vector of `length` values, valid until the next `reset`. */
  take(length: number): Float64Array {
    if (this.used + length > this.buffer.length) {
      // Views already handed out keep the old buffer alive until the reset.
      this.buffer = new Float64Array(Math.max(2 * this.buffer.length, length));
      this.used = 0;
    }
    const view = this.buffer.subarray(this.used, this.used + length);
    view.fill(0);
    this.used += length;
    return view;
  }

  /** Hands every vector back: call between examples, when none is still read. */
  reset(): void {
    this.used = 0;
  }
}
