/**
 * The float32 product C = A·B as a WebAssembly SIMD kernel, its module written here byte by byte
 * (about 400 bytes, compiled where it runs: nothing is fetched). Four rows of A against eight
 * columns of B at a time: each step of k loads two vectors of B and one value of each A row, and
 * updates eight vector accumulators (64 multiply-adds per 6 loads), the accumulation in float32
 * as onnxruntime's CPU kernels do.
 *
 * The kernel wants M a multiple of 4 and N of 8: the caller copies A and B into the module's
 * memory padded with zeros, and copies C's real rows and columns back (gemm.ts).
 */

// --- a few opcodes (WebAssembly core and SIMD) ---------------------------------------------
const I32 = 0x7f;
const V128 = 0x7b;
const LOOP = 0x03;
const END = 0x0b;
const BR_IF = 0x0d;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const F32_LOAD = 0x2a;
const I32_CONST = 0x41;
const I32_LT_U = 0x49;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_MUL = 0x6c;
const I32_SHL = 0x74;
const SIMD = 0xfd;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const simd = (op: number) => [SIMD, ...uleb(op)];
const get = (i: number) => [LOCAL_GET, ...uleb(i)];
const set = (i: number) => [LOCAL_SET, ...uleb(i)];
const tee = (i: number) => [LOCAL_TEE, ...uleb(i)];
const i32 = (v: number) => [I32_CONST, ...sleb(v)];
/** memarg: alignment 2^2 (the values are float32, 4-byte aligned), then the offset. */
const mem = (offset: number) => [2, ...uleb(offset)];
const v128Load = (offset: number) => [...simd(0x00), ...mem(offset)];
const v128Store = (offset: number) => [...simd(0x0b), ...mem(offset)];
const v128Zero = [...simd(0x0c), ...new Array<number>(16).fill(0)];
const f32x4Splat = simd(0x13);
const f32x4Add = simd(0xe4);
const f32x4Mul = simd(0xe6);

// Locals: the six parameters, then i32 and v128 locals.
const [A, B, C, M, N, K] = [0, 1, 2, 3, 4, 5];
const [I, J, KK, PA0, PB, PC, KB, NB] = [6, 7, 8, 9, 13, 14, 15, 16];
const ACC = 17; // acc0 … acc7
const AV = 25;
const B0 = 26;
const B1 = 27;
const I32_LOCALS = 11; // i, j, kk, pa0..pa3, pb, pc, kb, nb
const V128_LOCALS = 11; // acc0..7, av, b0, b1

function body(): number[] {
  const code: number[] = [];
  const emit = (...parts: number[][]) => parts.forEach((p) => code.push(...p));
  // kb = k·4 (a row of A in bytes), nb = n·4 (a row of B and C).
  emit(get(K), i32(2), [I32_SHL], set(KB));
  emit(get(N), i32(2), [I32_SHL], set(NB));
  emit(i32(0), set(I));
  emit([LOOP, 0x40]); // rows of C, 4 at a time
  emit(i32(0), set(J));
  emit([LOOP, 0x40]); // columns of C, 8 at a time
  for (let r = 0; r < 8; r++) emit(v128Zero, set(ACC + r));
  emit(get(A), get(I), get(KB), [I32_MUL], [I32_ADD], set(PA0));
  for (let r = 1; r < 4; r++) emit(get(PA0 + r - 1), get(KB), [I32_ADD], set(PA0 + r));
  emit(get(B), get(J), i32(2), [I32_SHL], [I32_ADD], set(PB));
  emit(get(K), set(KK));
  emit([LOOP, 0x40]); // k
  emit(get(PB), v128Load(0), set(B0));
  emit(get(PB), v128Load(16), set(B1));
  for (let r = 0; r < 4; r++) {
    emit(get(PA0 + r), [F32_LOAD], mem(0), f32x4Splat, set(AV));
    emit(get(ACC + 2 * r), get(AV), get(B0), f32x4Mul, f32x4Add, set(ACC + 2 * r));
    emit(get(ACC + 2 * r + 1), get(AV), get(B1), f32x4Mul, f32x4Add, set(ACC + 2 * r + 1));
    emit(get(PA0 + r), i32(4), [I32_ADD], set(PA0 + r));
  }
  emit(get(PB), get(NB), [I32_ADD], set(PB));
  emit(get(KK), i32(1), [I32_SUB], tee(KK), [BR_IF, 0]);
  emit([END]);
  // pc = c + i·nb + j·4; store the four rows.
  emit(
    get(C),
    get(I),
    get(NB),
    [I32_MUL],
    [I32_ADD],
    get(J),
    i32(2),
    [I32_SHL],
    [I32_ADD],
    set(PC),
  );
  for (let r = 0; r < 4; r++) {
    emit(get(PC), get(ACC + 2 * r), v128Store(0));
    emit(get(PC), get(ACC + 2 * r + 1), v128Store(16));
    emit(get(PC), get(NB), [I32_ADD], set(PC));
  }
  emit(get(J), i32(8), [I32_ADD], tee(J), get(N), [I32_LT_U], [BR_IF, 0]);
  emit([END]);
  emit(get(I), i32(4), [I32_ADD], tee(I), get(M), [I32_LT_U], [BR_IF, 0]);
  emit([END]);
  emit([END]); // the function
  const locals = [2, ...uleb(I32_LOCALS), I32, ...uleb(V128_LOCALS), V128];
  return [...locals, ...code];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function name(s: string): number[] {
  return [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
}

/** The module's bytes: one function `gemm(a, b, c, m, n, k)` and its memory, both exported. */
export function gemmModuleBytes(): Uint8Array<ArrayBuffer> {
  const code = body();
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 6, I32, I32, I32, I32, I32, I32, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [2, ...name('gemm'), 0, 0, ...name('memory'), 2, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
  ]; // prettier-ignore
  return Uint8Array.from(bytes);
}

export interface WasmGemm {
  /** C[m4, n8] = A[m4, k] · B[k, n8] at byte offsets of `memory` (m4 % 4 = 0, n8 % 8 = 0, k ≥ 1). */
  gemm(a: number, b: number, c: number, m4: number, n8: number, k: number): void;
  memory: WebAssembly.Memory;
}

let instance: WasmGemm | null | undefined;

/**
 * The compiled kernel, or null where WebAssembly or its SIMD is missing (the caller then runs
 * the JavaScript kernel). Compiled once per thread, synchronously (a few hundred bytes).
 */
export function wasmGemm(): WasmGemm | null {
  if (instance !== undefined) return instance;
  try {
    const bytes = gemmModuleBytes();
    const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
    if (!wasm || !wasm.validate(bytes)) {
      instance = null;
    } else {
      const exports = new wasm.Instance(new wasm.Module(bytes)).exports as unknown as WasmGemm;
      instance = { gemm: exports.gemm, memory: exports.memory };
    }
  } catch {
    instance = null;
  }
  return instance;
}

/** Forgets the compiled kernel (tests: the JavaScript path). */
export function setWasmGemmForTests(value: WasmGemm | null | undefined): void {
  instance = value;
}
