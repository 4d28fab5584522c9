/**
 * exp and log from + − × ÷ alone (fdlibm's algorithms: range reduction, then their minimax
 * polynomials), for the trainer. JavaScript engines' Math.exp and Math.log are within an ulp of
 * the truth but not the same ulp everywhere: Node 20 and Chromium 156 differ on ~half of random
 * inputs. A fit of hundreds of L-BFGS iterations carries such a difference into the float32
 * weights, so the same file trained in the page and in Node gave different package bytes. IEEE
 * 754 makes the four operations (and sqrt) exact everywhere, so these give the same bits in
 * every engine. Accuracy: within 1 ulp of the true value (fdlibm's bound), checked against
 * Math.exp/Math.log in test/unit/build/train/portable-math.test.ts.
 */

const LN2_HI = 6.9314718036912381649e-1;
const LN2_LO = 1.90821492927058770002e-10;
const INV_LN2 = 1.442695040888963387;
const P1 = 1.66666666666666019037e-1;
const P2 = -2.77777777770155933842e-3;
const P3 = 6.61375632143793436117e-5;
const P4 = -1.6533902205465251539e-6;
const P5 = 4.13813679705723846039e-8;

const LG1 = 6.66666666666673513e-1;
const LG2 = 3.999999999940941908e-1;
const LG3 = 2.857142874366239149e-1;
const LG4 = 2.222219843214978396e-1;
const LG5 = 1.818357216161805012e-1;
const LG6 = 1.531383769920937332e-1;
const LG7 = 1.479819860511658591e-1;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // little-endian: word 1

/**
 * 2^k for every integer k in [−1022, 1023], by exact doublings and halvings: a table lookup
 * costs a quarter of writing the exponent's bits through a typed array (measured).
 */
const POW2 = (() => {
  const table = new Float64Array(2046);
  table[1022] = 1;
  for (let i = 1023; i < 2046; i++) table[i] = 2 * (table[i - 1] as number);
  for (let i = 1021; i >= 0; i--) table[i] = (table[i + 1] as number) / 2;
  return table;
})();

/** 2^k exactly, for an integer k in [−1022, 1023]. */
function pow2(k: number): number {
  return POW2[k + 1022] as number;
}

/** e^x, the same bits in every JavaScript engine. */
export function exp(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x > 709.782712893383973096) return Infinity;
  if (x < -745.13321910194110842) return 0;
  if (Math.abs(x) < 3.725290298461914e-9) return 1 + x;
  const k = Math.floor(x * INV_LN2 + 0.5);
  const hi = x - k * LN2_HI;
  const lo = k * LN2_LO;
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1 - (lo - (r * c) / (2 - c) - hi);
  // Scale by 2^k in two exact steps where 2^k alone would leave the normal range.
  if (k > 1023) return y * pow2(1023) * pow2(k - 1023);
  if (k < -1021) return y * pow2(k + 1000) * pow2(-1000);
  return y * pow2(k);
}

/** ln x, the same bits in every JavaScript engine. */
export function log(x: number): number {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  let k = 0;
  let m = x;
  if (m < 2.2250738585072014e-308) {
    m *= 18014398509481984; // 2^54: subnormals into the normal range
    k -= 54;
  }
  f64[0] = m;
  const high = u32[HIGH] as number;
  k += (high >>> 20) - 1023;
  // m in [1, 2), then in [√2/2, √2).
  u32[HIGH] = (high & 0x000fffff) | 0x3ff00000;
  m = f64[0] as number;
  if (m > Math.SQRT2) {
    m /= 2;
    k += 1;
  }
  const f = m - 1;
  const hfsq = 0.5 * f * f;
  const s = f / (2 + f);
  const z = s * s;
  const w = z * z;
  const t1 = w * (LG2 + w * (LG4 + w * LG6));
  const t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
  const R = t2 + t1;
  return k * LN2_HI - (hfsq - (s * (hfsq + R) + k * LN2_LO) - f);
}

/** e^x − 1 without the cancellation near 0: the Taylor series below |x| = 0.5 (to 2^−60). */
function expm1(x: number): number {
  if (Math.abs(x) >= 0.5) return exp(x) - 1;
  let term = 1;
  let sum = 0;
  // Horner form of x + x²/2! + … + x^18/18!: the terms past x^18/18! are below 2^−60 here.
  for (let n = 18; n >= 1; n--) {
    term = 1 + (x / (n + 1)) * sum;
    sum = term;
  }
  return x * sum;
}

/** tanh x from exp (the same bits everywhere). */
export function tanh(x: number): number {
  if (x > 22) return 1;
  if (x < -22) return -1;
  const e = expm1(2 * x);
  return e / (e + 2);
}

/** cosh x from exp (the same bits everywhere). */
export function cosh(x: number): number {
  const e = exp(Math.abs(x));
  return 0.5 * e + 0.5 / e;
}

/** A standard normal draw from `rng` (Marsaglia's polar method: log and sqrt only). */
export function normal(rng: { uniform(): number }): number {
  for (;;) {
    const u = 2 * rng.uniform() - 1;
    const v = 2 * rng.uniform() - 1;
    const s = u * u + v * v;
    if (s > 0 && s < 1) return u * Math.sqrt((-2 * log(s)) / s);
  }
}
