/**
 * Python's `round(x, ndigits)` on a float, bit for bit.
 *
 * CPython rounds the exact binary value of x to ndigits decimals, ties to even (`_Py_dg_dtoa`
 * mode 3), then reads that decimal back as the nearest double. `Math.round(x * 1e4) / 1e4`
 * differs: the product is rounded before the tie is judged, and Math.round breaks ties upward.
 */

// Powers of ten that are exact doubles (10^22 is the last); literals parse exactly.
const EXACT_POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
  1e18, 1e19, 1e20, 1e21, 1e22,
];
const TWO_POW_50 = 2 ** 50;
const TWO_POW_52 = 2 ** 52;
const TWO_POW_MINUS_52 = 2 ** -52;

// CPython's float.__round__ bounds: beyond them x rounds to itself or to a signed zero.
const NDIGITS_MAX = 323;
const NDIGITS_MIN = -308;

export function pythonRound(x: number, ndigits: number): number {
  if (!Number.isInteger(ndigits)) throw new TypeError(`ndigits must be an integer: ${ndigits}`);
  if (!Number.isFinite(x)) return x;
  if (ndigits > NDIGITS_MAX) return x;
  if (ndigits < NDIGITS_MIN) return 0 * x;
  const fast = ndigits >= 0 && ndigits <= 22 ? roundWithDoubles(x, ndigits) : undefined;
  return fast ?? roundExactly(x, ndigits);
}

/**
 * The common case in plain double arithmetic, or undefined when the scaled value is too close
 * to a tie (or too large) to decide without exact arithmetic.
 */
function roundWithDoubles(x: number, ndigits: number): number | undefined {
  const negative = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  if (a >= TWO_POW_52) return x; // already an integer
  const scale = EXACT_POW10[ndigits] as number;
  const p = a * scale; // the exact product t, rounded: |t - p| <= ulp(p)/2 <= p * 2^-53
  if (p >= TWO_POW_50) return undefined;
  const floor = Math.floor(p);
  const frac = p - floor; // exact
  // frac - 0.5 is exact when frac >= 0.25 and otherwise far from the 2^-52-relative margin.
  if (Math.abs(frac - 0.5) <= p * TWO_POW_MINUS_52) return undefined;
  // t is on the same side of the half as p, and within half an ulp of p around integers.
  const q = frac > 0.5 ? floor + 1 : floor;
  // q < 2^53 and scale are exact, so IEEE division gives the double nearest to q / 10^ndigits,
  // which is what CPython's strtod of the rounded decimal gives.
  const result = q / scale;
  return negative ? -result : result;
}

const pow10Cache: bigint[] = [];
function bigPow10(n: number): bigint {
  let p = pow10Cache[n];
  if (p === undefined) {
    p = 10n ** BigInt(n);
    pow10Cache[n] = p;
  }
  return p;
}

const bitsView = new DataView(new ArrayBuffer(8));

/** x = mantissa * 2^exponent exactly, for finite x >= 0. */
function decompose(a: number): { mantissa: bigint; exponent: number } {
  bitsView.setFloat64(0, a);
  const hi = bitsView.getUint32(0);
  const lo = bitsView.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased === 0) return { mantissa: fraction, exponent: -1074 }; // subnormal or zero
  return { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/** Round num/den (both > 0 or num = 0) to an integer, ties to even. */
function divideHalfEven(num: bigint, den: bigint): bigint {
  const q = num / den;
  const twiceRem = (num - q * den) * 2n;
  if (twiceRem > den || (twiceRem === den && (q & 1n) === 1n)) return q + 1n;
  return q;
}

/** Exact decimal rounding with BigInt: any ndigits in CPython's range, any finite x. */
function roundExactly(x: number, ndigits: number): number {
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = decompose(Math.abs(x));
  let result: number;
  if (ndigits >= 0) {
    if (exponent >= 0) return x; // an integer already
    const shift = BigInt(-exponent);
    const q = divideHalfEven(mantissa * bigPow10(ndigits), 1n << shift);
    result = Number(`${q}e-${ndigits}`); // correctly rounded decimal-to-double
  } else {
    const num = exponent >= 0 ? mantissa << BigInt(exponent) : mantissa;
    const den = exponent >= 0 ? bigPow10(-ndigits) : bigPow10(-ndigits) << BigInt(-exponent);
    const q = divideHalfEven(num, den);
    result = Number(`${q}e${-ndigits}`);
    if (!Number.isFinite(result)) throw new RangeError('rounded value too large to represent');
  }
  return negative ? -result : result;
}
