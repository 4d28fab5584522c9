#!/usr/bin/env python3
"""Golden cases for src/protocol/{render,json,round}.ts, computed by Python itself.

Run (Python 3.9+, stdlib only; the output is deterministic for a given Python version):

    python3 tools/golden/render_golden.py test/fixtures/render-golden.json

The TypeScript tests read the file and never need python3. Sections:

- textCases  [text, render]: a JSON text as it arrives over HTTP; `render` is Python's
  json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"), sort_keys=True), or
  the string itself when the text is a JSON string (render() passes strings through).
  Test: renderValue(parseRequestJson(text)) === render.
- jsValueCases [text, render | null]: a value a page script holds, given as JSON text that the
  test turns into a JS value with JSON.parse. `render` is what Python renders for
  json.loads(JSON.stringify(value)), emulated here: JSON.parse reads each number as the
  correctly rounded double (as Python's float() does); JSON.stringify writes an integral double
  below 1e21 as the digits of its shortest round-trip form padded with zeros (Python then reads
  an int), anything else in a form Python reads back as the same float. Strings survive the
  round trip unchanged (JSON.stringify escapes lone surrogates; json.loads restores them).
  JSON.parse keeps the last value of a duplicate key, as json.loads does. `null` means the value
  holds ±Infinity (a number lexeme that overflows), which renderValue must refuse (NotJsonError).
- invalidTexts [text, pos]: texts json.loads rejects with JSONDecodeError; pos is where Python
  saw the error, as a UTF-16 index (information only: the two parsers may blame different
  characters, e.g. Python stops a number at "1." and blames the ".").
- floatRepr [bits, repr]: a double as its 16 hex digits (big-endian IEEE 754) and repr(x).
- round [bits, ndigits, bits]: x, ndigits and round(x, ndigits), doubles as hex bits.
"""
import json
import math
import random
import struct
import sys
from decimal import Decimal

SEED = 20261130


def dumps_py(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def render(v):
    return v if isinstance(v, str) else dumps_py(v)


def bits(x):
    return struct.pack(">d", x).hex()


def from_bits(h):
    return struct.unpack(">d", bytes.fromhex(h))[0]


# ---------------------------------------------------------------- JSON text generation

# Characters chosen to hit every branch of escaping and key sorting: C0 controls, quote,
# backslash, DEL, combining marks, U+2028, BMP chars above the surrogate block (E000..FFFF sort
# after astral chars in UTF-16 but before them by code point), astral chars.
CHAR_POOL = (
    [chr(c) for c in range(0x20)]
    + list('"\\/\x7f')
    + list("abcXYZ019 _.-é")
    + ["e\u0301", "\u0301", "\u0308", "\u2028", "\u2029", "\u00a0", "\ufeff"]
    + ["\u4e2d", "\uac00", "\ue000", "\uf8ff", "\uff5e", "\ufffd", "\uffff"]
    + ["\U00010000", "\U0001f600", "\U0001d400", "\U0010ffff", "\U00020000"]
)
LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"]

INT_LIKE_KEYS = ["0", "1", "2", "10", "9", "007", "-1", "1.5", "4294967294", "4294967295", "1e3"]
SPECIAL_KEYS = ["", "__proto__", "constructor", "toString", "a", "b", "B", "option_id",
                "description", "\ue000", "\U0001f600", "\uffff", "\U00010000", "é", "e\u0301"]


def encode_char(rng, ch):
    """One character as it may appear inside a JSON string literal."""
    cp = ord(ch)
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
             "\t": "\\t", "/": "\\/"}
    if 0xD800 <= cp <= 0xDFFF:
        return "\\u%04x" % cp if rng.random() < 0.5 else "\\u%04X" % cp
    if ch in short and (cp < 0x20 or ch in '"\\' or rng.random() < 0.5):
        return short[ch]
    if cp < 0x20 or rng.random() < 0.15:
        if cp > 0xFFFF:  # as a surrogate pair of escapes
            v = cp - 0x10000
            return "\\u%04x\\u%04x" % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
        return "\\u%04x" % cp if rng.random() < 0.5 else "\\u%04X" % cp
    return ch


def gen_string_value(rng, max_len=8):
    chars = []
    for _ in range(rng.randint(0, max_len)):
        chars.append(rng.choice(LONE_SURROGATES) if rng.random() < 0.04 else rng.choice(CHAR_POOL))
    return "".join(chars)


def string_literal(rng, s):
    return '"' + "".join(encode_char(rng, ch) for ch in s) + '"'


def gen_key(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(INT_LIKE_KEYS)
    if r < 0.5:
        return rng.choice(SPECIAL_KEYS)
    if r < 0.6:
        return str(rng.randint(0, 10**rng.randint(1, 12)))
    return gen_string_value(rng, 5)


def gen_float_lexeme(rng):
    r = rng.random()
    if r < 0.15:
        return rng.choice(["1.0", "-0.0", "0.5", "1e5", "1E+5", "1e-5", "0.1", "1.5e16", "1e16",
                           "1e15", "123456789012345678.0", "1e21", "1e22", "1e-7", "0.0001",
                           "0.00001", "1e400", "-1e400", "1e-400", "-1e-400", "2.5e-324",
                           "4.9406564584124654e-324", "2.4703282292062328e-324",
                           "1.7976931348623157e308", "1.7976931348623159e308", "0.000",
                           "9007199254740993.0", "0.1000000000000000055511151231257827021181583404541015625",
                           "100E-2", "5e-1", "0.03125", "2.00005"])
    if r < 0.45:
        return repr(random_double(rng))
    if r < 0.65:  # random decimal digits with a random exponent
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
        digits = digits.lstrip("0") or "0"
        cut = rng.randint(1, len(digits))
        mant = digits[:cut] + ("." + digits[cut:] if cut < len(digits) else "")
        exp = rng.randint(-340, 320)
        sign = "-" if rng.random() < 0.3 else ""
        e = rng.choice(["e", "E"])
        esign = rng.choice(["", "+"]) if exp >= 0 else "-"
        return f"{sign}{mant}{e}{esign}{abs(exp)}"
    if r < 0.8:  # plain decimals
        ip = str(rng.randint(0, 10**rng.randint(0, 20)))
        fp = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
        return ("-" if rng.random() < 0.3 else "") + ip + "." + fp
    # integral values with a fraction or an exponent (still floats for Python)
    n = rng.randint(0, 10**rng.randint(0, 25))
    return ("-" if rng.random() < 0.3 else "") + str(n) + rng.choice([".0", "e0", "E2", ".00e1"])


def gen_int_lexeme(rng):
    r = rng.random()
    if r < 0.2:
        return rng.choice(["0", "-0", "1", "-1", "9007199254740993", "9007199254740992",
                           "18446744073709551616", "12345678901234567890", "99999999999999999999",
                           "100000000000000000000", "999999999999999999999", "1000000000000000000000",
                           "73786976294838206464", "-9223372036854775809"])
    if r < 0.9:
        return ("-" if rng.random() < 0.3 else "") + str(rng.randint(0, 10**rng.randint(1, 30)))
    return str(rng.randint(10**60, 10**rng.randint(61, 400)))


def ws(rng):
    return rng.choice(["", "", "", " ", "\n", "\t", "\r\n  ", "  "])


def gen_value_text(rng, depth):
    r = rng.random()
    if depth <= 0 or r < 0.45:
        s = rng.random()
        if s < 0.3:
            return string_literal(rng, gen_string_value(rng))
        if s < 0.6:
            return gen_float_lexeme(rng)
        if s < 0.85:
            return gen_int_lexeme(rng)
        return rng.choice(["true", "false", "null"])
    if r < 0.7:
        items = [gen_value_text(rng, depth - 1) for _ in range(rng.randint(0, 5))]
        return "[" + ws(rng) + ("," + ws(rng)).join(items) + ws(rng) + "]"
    keys = []
    for _ in range(rng.randint(0, 6)):
        keys.append(rng.choice(keys) if keys and rng.random() < 0.15 else gen_key(rng))
    members = [ws(rng) + string_literal(rng, k) + ws(rng) + ":" + ws(rng)
               + gen_value_text(rng, depth - 1) + ws(rng) for k in keys]
    return "{" + ",".join(members) + ws(rng) + "}"


def gen_text(rng):
    return ws(rng) + gen_value_text(rng, rng.randint(0, 4)) + ws(rng)


# ---------------------------------------------------------------- doubles

def random_double(rng):
    r = rng.random()
    if r < 0.25:  # any finite double, exponents uniform
        while True:
            x = from_bits("%016x" % rng.getrandbits(64))
            if math.isfinite(x):
                return x
    if r < 0.35:  # subnormal
        return from_bits("%016x" % (rng.getrandbits(52) | (rng.getrandbits(1) << 63)))
    if r < 0.55:
        return rng.random()
    if r < 0.7:  # a float32 value, as a softmax in float32 produces
        return struct.unpack("f", struct.pack("f", rng.random()))[0]
    if r < 0.85:  # a short decimal at some magnitude
        return float("%.*e" % (rng.randint(0, 16), rng.random() * 10 ** rng.randint(-30, 30)))
    # around the repr thresholds and integer limits
    base = rng.choice([1e16, 1e-4, 1e-5, 1e21, 1e22, 2.0**53, 1e15, 0.1, 5e-324, 2.2250738585072014e-308,
                       1.7976931348623157e308, 1.0, 9999999999999998.0])
    for _ in range(rng.randint(0, 3)):
        base = math.nextafter(base, rng.choice([0.0, math.inf]))
    return base if math.isfinite(base) else 1.7976931348623157e308


def float_repr_cases(rng, count):
    cases = []
    for x in [0.0, -0.0, 1e16, 1e15, 1e-4, 1e-5, 1.5e16, 9999999999999998.0, 1e21, 1e22, 1e23,
              5e-324, 1.7976931348623157e308, 2.0**53 + 2, 2.0**66, 0.1, 1 / 3, 123456789.0]:
        cases.append([bits(x), repr(x)])
    while len(cases) < count:
        x = random_double(rng)
        x = -x if rng.random() < 0.3 else x
        cases.append([bits(x), repr(x)])
    return cases


def round_inputs_for(rng, n):
    """Exact ties at n decimals, their neighbours, decimal near-ties and random values."""
    out = []
    # x * 10^n = k + 1/2 exactly: x = (2k+1) / (2 * 10^n), exact in binary only when 5^n | 2k+1.
    if n >= 0:
        for _ in range(6):  # odd / 2^(n+1) times 10^n = odd * 5^n / 2: exactly half an integer
            tie = (2 * rng.randint(0, 2 ** rng.randint(1, 40)) + 1) / 2 ** (n + 1)
            out += [tie, math.nextafter(tie, 0.0), math.nextafter(tie, math.inf)]
        for _ in range(6):  # decimal strings ending in 5 at digit n+1: binary just above/below
            frac = "%0*d5" % (n, rng.randint(0, 10**n - 1)) if n > 0 else "5"
            out.append(float("%d.%s" % (rng.randint(0, 10 ** rng.randint(0, 8)), frac)))
    elif -n <= 300:
        for _ in range(6):  # (2k+1) * 10^-n / 2: a tie at -n digits left of the point
            tie = float((2 * rng.randint(0, 10**6) + 1) * 10 ** (-n) // 2)
            out += [tie, math.nextafter(tie, 0.0), math.nextafter(tie, math.inf)]
    for _ in range(6):
        out.append(random_double(rng))
    return [-x if rng.random() < 0.3 else x for x in out]


def round_cases(rng, count):
    cases = []
    fixed = [0.03125, 0.09375, 1 / 32 * 5, 0.00005, 1.00005, 2.675, 0.5, 1.5, 2.5, -0.00001,
             -0.0, 0.0, 1e-320, 5e-324, 1e300, 2.0**52 + 0.5, 2.0**53, 123456.78905, 0.99995]
    for x in fixed:
        cases.append([bits(x), 4, bits(round(x, 4))])
    # ndigits spread (mostly 4, the protocol's), including CPython's bounds and beyond.
    spread = [4] * 12 + [0, 1, 2, 3, 5, 6, 8, 10, 15, 16, 17, 22, 23, 30, 100, 300, 323, 324,
                         -1, -2, -5, -20, -300, -308, -309]
    while len(cases) < count:
        n = rng.choice(spread)
        for x in round_inputs_for(rng, n):
            try:
                r = round(x, n)
            except OverflowError:
                continue  # documented as a RangeError in TS; tested there directly
            cases.append([bits(x), n, bits(r)])
    return cases[:count]


# ---------------------------------------------------------------- JS-value emulation

# JSON.parse turns an overflowing lexeme into Infinity, which renderValue refuses; a duplicate key
# can still drop it (the last value wins), so mark it and look for survivors after loading.
OVERFLOW = object()


def js_number(lexeme):
    """What Python reads after JSON.parse then JSON.stringify of a number lexeme."""
    d = float(lexeme)
    if math.isinf(d):
        return OVERFLOW
    if d.is_integer() and abs(d) < 1e21:
        # shortest round-trip digits (repr == Number::toString digits), zero-padded: an int
        return int(Decimal(repr(d)))
    return d


def holds_overflow(v):
    if v is OVERFLOW:
        return True
    if isinstance(v, list):
        return any(holds_overflow(x) for x in v)
    if isinstance(v, dict):
        return any(holds_overflow(x) for x in v.values())
    return False


def js_value_render(text):
    v = json.loads(text, parse_float=js_number, parse_int=js_number)
    return None if holds_overflow(v) else render(v)


# ---------------------------------------------------------------- invalid texts

def utf16_index(text, pos):
    return len(text[:pos].encode("utf-16-le", "surrogatepass")) // 2


def invalid_texts(rng, count):
    fixed = ["", " ", "-", "+1", "01", "1.", ".5", "1e", "1e+", "0x10", "[1,]", "{\"a\":1,}",
             "{'a':1}", "[1 2]", "{\"a\" 1}", "{1:2}", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\t\"",
             "tru", "nul", "[", "]", "{", "}", "[1]]", "\ufeff1", "1 2", "\"a\"\"b\"", "--1",
             "-01", "1e1.5", "[.1]", "\"\\u00zz\"", "{\"a\":}", "[,]", "\u00a01", "True", "None"]
    out = []
    for t in fixed:
        try:
            json.loads(t)
        except json.JSONDecodeError as e:
            out.append([t, utf16_index(t, e.pos)])
    while len(out) < count:
        t = gen_text(rng)
        if len(t) < 2:
            continue
        i = rng.randrange(len(t))
        kind = rng.random()
        if kind < 0.4:
            t = t[:i]
        elif kind < 0.7:
            t = t[:i] + rng.choice(list(",:[]{}\"\\x-.e0 \x01")) + t[i:]
        else:
            t = t[:i] + t[i + 1:]
        if any(0xD800 <= ord(c) <= 0xDFFF for c in t):
            continue  # a cut surrogate pair is not text that can arrive as UTF-8
        try:
            json.loads(t)
        except json.JSONDecodeError as e:
            out.append([t, utf16_index(t, e.pos)])
        except ValueError:
            pass  # e.g. int digit limits: not a syntax error
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tools/golden/render_golden.py test/fixtures/render-golden.json")
    rng = random.Random(SEED)
    text_cases = []
    while len(text_cases) < 1500:
        t = gen_text(rng)
        text_cases.append([t, render(json.loads(t))])
    js_cases = []
    while len(js_cases) < 800:
        t = gen_text(rng)
        js_cases.append([t, js_value_render(t)])
    golden = {
        "generator": "tools/golden/render_golden.py",
        "python": sys.version.split()[0],
        "seed": SEED,
        "textCases": text_cases,
        "jsValueCases": js_cases,
        "invalidTexts": invalid_texts(rng, 400),
        "floatRepr": float_repr_cases(rng, 3000),
        "round": round_cases(rng, 6000),
    }
    with open(sys.argv[1], "w", encoding="ascii") as f:
        # ASCII output: lone surrogates survive as \uXXXX escapes that JSON.parse restores.
        json.dump(golden, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
