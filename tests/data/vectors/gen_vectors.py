#!/usr/bin/env python3
"""IEEE 754 add/min/max test vectors for f16, bf16 and f32, for `nvsvp rtl-check`.

Writes <dtype>_<op>.txt with lines `A B RESULT FLAGS` (hexadecimal encodings; FLAGS in the
Berkeley TestFloat convention: 01 inexact, 02 underflow, 04 overflow, 10 invalid).

The reference is independent of the project's code: operands are decoded to exact rationals
(fractions.Fraction), the exact sum is rounded to the format with round-to-nearest-even (overflow
to infinity, gradual underflow); min/max follow IEEE 754-2019 minimumNumber/maximumNumber
(-0 < +0; one NaN operand gives the other operand; two NaNs give NaN). NaN results are written as
the canonical quiet NaN (the unit's policy; rtl-check accepts only the canonical NaN wherever a
NaN is expected). f16 and f32 results are cross-checked against the host's conversions
(struct 'e' and 'f') wherever the double-precision sum is exact.

Standard library only. Deterministic: the same --seed writes the same files.
usage: gen_vectors.py [--out DIR] [--seed N] [--count N]
"""
import argparse
import os
import random
import struct
import sys
from fractions import Fraction

FLAG_INEXACT = 0x01
FLAG_UNDERFLOW = 0x02
FLAG_OVERFLOW = 0x04
FLAG_INVALID = 0x10


class Format:
    def __init__(self, name, exp_bits, frac_bits):
        self.name = name
        self.exp_bits = exp_bits
        self.frac_bits = frac_bits
        self.width = 1 + exp_bits + frac_bits
        self.bias = (1 << (exp_bits - 1)) - 1
        self.emin = 1 - self.bias  # exponent of the smallest normal
        self.emax = self.bias
        self.exp_all_ones = (1 << exp_bits) - 1
        self.sign_bit = 1 << (self.width - 1)
        self.canonical_nan = (self.exp_all_ones << frac_bits) | (1 << (frac_bits - 1))
        self.inf = self.exp_all_ones << frac_bits
        self.hex_digits = self.width // 4

    def fields(self, bits):
        sign = bits >> (self.width - 1)
        exp = (bits >> self.frac_bits) & self.exp_all_ones
        frac = bits & ((1 << self.frac_bits) - 1)
        return sign, exp, frac

    def is_nan(self, bits):
        _, exp, frac = self.fields(bits)
        return exp == self.exp_all_ones and frac != 0

    def is_signaling(self, bits):
        return self.is_nan(bits) and not (bits >> (self.frac_bits - 1)) & 1

    def is_inf(self, bits):
        _, exp, frac = self.fields(bits)
        return exp == self.exp_all_ones and frac == 0

    def value(self, bits):
        """Exact value of a finite encoding (zero is Fraction(0); its sign is read separately)."""
        sign, exp, frac = self.fields(bits)
        if exp == 0:
            magnitude = Fraction(frac) * Fraction(2) ** (self.emin - self.frac_bits)
        else:
            magnitude = Fraction((1 << self.frac_bits) | frac) * Fraction(2) ** (exp - self.bias - self.frac_bits)
        return -magnitude if sign else magnitude

    def round(self, exact):
        """Encoding and flags of a non-zero exact rational, rounded to nearest, ties to even."""
        sign = self.sign_bit if exact < 0 else 0
        magnitude = abs(exact)
        # floor(log2(magnitude)), from the bit lengths, then corrected.
        e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
        while Fraction(2) ** e > magnitude:
            e -= 1
        while Fraction(2) ** (e + 1) <= magnitude:
            e += 1
        tiny = e < self.emin
        e = max(e, self.emin)
        quantum = Fraction(2) ** (e - self.frac_bits)
        scaled = magnitude / quantum
        significand = round(scaled)  # Fraction.__round__ rounds half to even
        flags = 0 if significand == scaled else FLAG_INEXACT
        if significand == 1 << (self.frac_bits + 1):  # rounding carried into the next binade
            significand >>= 1
            e += 1
        if e > self.emax:
            return sign | self.inf, FLAG_OVERFLOW | FLAG_INEXACT
        if tiny and flags & FLAG_INEXACT:
            flags |= FLAG_UNDERFLOW
        if significand < 1 << self.frac_bits:  # subnormal (or zero after rounding)
            return sign | significand, flags
        return sign | ((e + self.bias) << self.frac_bits) | (significand - (1 << self.frac_bits)), flags


F16 = Format("f16", 5, 10)
BF16 = Format("bf16", 8, 7)
F32 = Format("f32", 8, 23)
FORMATS = [F16, BF16, F32]


def ref_add(fmt, a, b):
    invalid = FLAG_INVALID if fmt.is_signaling(a) or fmt.is_signaling(b) else 0
    if fmt.is_nan(a) or fmt.is_nan(b):
        return fmt.canonical_nan, invalid
    if fmt.is_inf(a) and fmt.is_inf(b):
        if (a ^ b) & fmt.sign_bit:
            return fmt.canonical_nan, FLAG_INVALID  # inf - inf
        return a, 0
    if fmt.is_inf(a):
        return a, 0
    if fmt.is_inf(b):
        return b, 0
    exact = fmt.value(a) + fmt.value(b)
    if exact == 0:
        # An exact zero sum is +0 under round-to-nearest, unless both operands are -0.
        both_negative_zero = a == fmt.sign_bit and b == fmt.sign_bit
        return (fmt.sign_bit if both_negative_zero else 0), 0
    return fmt.round(exact)


def less_than(fmt, a, b):
    """Total order of numbers for minimumNumber/maximumNumber: -0 < +0."""
    def key(bits):
        if fmt.is_inf(bits):
            return (Fraction(-1 if bits & fmt.sign_bit else 1) * 10 ** 100, 0)
        value = fmt.value(bits)
        return (value, -1 if (value == 0 and bits & fmt.sign_bit) else 0)
    return key(a) < key(b)


def ref_min_max(fmt, a, b, want_max):
    invalid = FLAG_INVALID if fmt.is_signaling(a) or fmt.is_signaling(b) else 0
    if fmt.is_nan(a) and fmt.is_nan(b):
        return fmt.canonical_nan, invalid
    if fmt.is_nan(a):
        return b, invalid
    if fmt.is_nan(b):
        return a, invalid
    a_first = less_than(fmt, b, a) if want_max else less_than(fmt, a, b)
    if a_first or a == b:
        return a, 0
    return b, 0


def reference(fmt, op, a, b):
    if op == "add":
        return ref_add(fmt, a, b)
    return ref_min_max(fmt, a, b, want_max=(op == "max"))


def host_cross_check(fmt, a, b, result):
    """f16/f32 add: the host's double sum, converted by struct, must agree where it is exact."""
    if fmt is BF16 or fmt.is_nan(a) or fmt.is_nan(b) or fmt.is_inf(a) or fmt.is_inf(b):
        return
    code, word = ("<e", "<H") if fmt is F16 else ("<f", "<I")
    fa = struct.unpack(code, struct.pack(word, a))[0]
    fb = struct.unpack(code, struct.pack(word, b))[0]
    total = fa + fb
    if Fraction(total) != fmt.value(a) + fmt.value(b):
        return  # the double sum rounded: the host would round twice
    try:
        host = struct.unpack(word, struct.pack(code, total))[0]
    except OverflowError:
        host = (fmt.sign_bit if total < 0 else 0) | fmt.inf
    if total == 0:
        return  # struct keeps the double's zero sign, which follows the same rule; checked above
    if host != result:
        sys.exit(f"cross-check failed: {fmt.name} {a:x} + {b:x}: reference {result:x}, host {host:x}")


def special_values(fmt):
    f = fmt.frac_bits
    one = fmt.bias << f
    values = [
        0,                                   # +0
        1,                                   # smallest subnormal
        (1 << f) - 1,                        # largest subnormal
        1 << f,                              # smallest normal
        (1 << f) + 1,
        one,                                 # 1.0
        one + 1,                             # 1 + ulp
        (fmt.bias - f - 1) << f,             # half an ulp of 1.0 (a tie when added to 1)
        (fmt.bias + 1) << f | (1 << (f - 1)),  # 3.0
        ((fmt.exp_all_ones - 1) << f) | ((1 << f) - 1),  # largest finite
        (fmt.exp_all_ones - 1) << f,         # smallest value of the top binade
        fmt.inf,
    ]
    values += [v | fmt.sign_bit for v in values]
    values += [
        fmt.canonical_nan,
        fmt.canonical_nan | fmt.sign_bit,
        fmt.inf | 1,                         # signaling NaN
        fmt.inf | (1 << (f - 1)) | 0x5,      # quiet NaN with a payload
    ]
    return values


def random_operand_pair(fmt, rng, op):
    f = fmt.frac_bits
    width_mask = (1 << fmt.width) - 1
    kind = rng.randrange(8)
    if kind == 0:  # any bit pattern
        return rng.getrandbits(fmt.width), rng.getrandbits(fmt.width)
    if kind == 1:  # same binade, opposite signs: cancellation, exact zeros
        a = rng.getrandbits(fmt.width) & ~fmt.sign_bit
        exp = rng.randrange(0, fmt.exp_all_ones)
        a = (exp << f) | (a & ((1 << f) - 1))
        b = (exp << f) | rng.getrandbits(f) if rng.random() < 0.7 else a
        return a, b | fmt.sign_bit
    if kind == 2:  # exponents about a significand apart: rounding, ties
        exp = rng.randrange(f + 3, fmt.exp_all_ones)
        a = (exp << f) | rng.getrandbits(f)
        delta = rng.randrange(f - 1, f + 4)
        frac_b = rng.choice([0, rng.getrandbits(f), (1 << f) - 1])
        b = (max(exp - delta, 0) << f) | frac_b
        sign = rng.getrandbits(2)
        return a | (fmt.sign_bit if sign & 1 else 0), b | (fmt.sign_bit if sign & 2 else 0)
    if kind == 3:  # near overflow
        top = fmt.exp_all_ones - 1
        a = (rng.randrange(top - 2, top + 1) << f) | rng.getrandbits(f)
        b = (rng.randrange(top - f - 2, top + 1) << f) | rng.getrandbits(f)
        return a, b | (fmt.sign_bit if rng.random() < 0.2 else 0)
    if kind == 4:  # subnormals and the normal boundary
        a = rng.randrange(0, 2 << f)
        b = rng.randrange(0, 2 << f)
        return a | (fmt.sign_bit if rng.random() < 0.5 else 0), b | (fmt.sign_bit if rng.random() < 0.5 else 0)
    if kind == 5:  # a special value against a random one
        specials = special_values(fmt)
        return rng.choice(specials), rng.getrandbits(fmt.width)
    if kind == 6:  # equal magnitudes, either sign (min/max of x and -x, x + x)
        a = rng.getrandbits(fmt.width) & ~fmt.sign_bit
        return a, a | (fmt.sign_bit if rng.random() < 0.5 else 0)
    # kind 7: random values of moderate, mixed exponents
    a = (rng.randrange(fmt.bias - 8, fmt.bias + 8) << f) | rng.getrandbits(f)
    b = (rng.randrange(fmt.bias - 8, fmt.bias + 8) << f) | rng.getrandbits(f)
    return a | (rng.getrandbits(1) * fmt.sign_bit), b & width_mask


def write_file(path, fmt, op, seed, count):
    rng = random.Random(f"{seed}-{fmt.name}-{op}")
    specials = special_values(fmt)
    pairs = [(a, b) for a in specials for b in specials]
    while len(pairs) < count:
        pairs.append(random_operand_pair(fmt, rng, op))
    digits = fmt.hex_digits
    with open(path, "w", encoding="ascii") as out:
        out.write(f"# IEEE 754 {op} vectors for {fmt.name}, generated by gen_vectors.py --seed {seed}"
                  f" --count {count} (exact rational reference, round-to-nearest-even).\n")
        out.write(f"# dtype: {fmt.name}\n")  # the type nvsvp rtl-check holds --dtype to
        out.write("# A B RESULT FLAGS (hex). FLAGS: 01 inexact, 02 underflow, 04 overflow, 10 invalid.\n")
        out.write("# NaN results are the canonical quiet NaN. The first block crosses the special values.\n")
        for a, b in pairs:
            result, flags = reference(fmt, op, a, b)
            if op == "add":
                host_cross_check(fmt, a, b, result)
            out.write(f"{a:0{digits}X} {b:0{digits}X} {result:0{digits}X} {flags:02X}\n")


def self_test():
    """Hand-checked anchors, so that a broken reference cannot write plausible files."""
    assert ref_add(F32, 0x3F800000, 0x3F800000) == (0x40000000, 0)          # 1 + 1 = 2
    assert ref_add(F32, 0x3F800000, 0x33800000) == (0x3F800000, 1)          # 1 + 2^-24: tie to even
    assert ref_add(F32, 0x3F800001, 0x33800000) == (0x3F800002, 1)          # tie to even, upwards
    assert ref_add(F32, 0x7F7FFFFF, 0x73000000) == (0x7F800000, 5)          # max + half ulp: inf
    assert ref_add(F32, 0x7F7FFFFF, 0x72FFFFFF) == (0x7F7FFFFF, 1)
    assert ref_add(F32, 0x00800000, 0x80000001) == (0x007FFFFF, 0)          # exact subnormal result
    assert ref_add(F32, 0x80000000, 0x80000000) == (0x80000000, 0)          # -0 + -0 = -0
    assert ref_add(F32, 0x3FC00000, 0xBFC00000) == (0x00000000, 0)          # x - x = +0
    assert ref_add(F32, 0x7F800000, 0xFF800000) == (0x7FC00000, 0x10)       # inf - inf
    assert ref_add(F16, 0x3C00, 0x1000) == (0x3C00, 1)                      # 1 + 2^-11: tie to even
    assert ref_add(F16, 0x3C01, 0x1000) == (0x3C02, 1)
    assert ref_add(F16, 0x7BFF, 0x4C00) == (0x7C00, 5)                      # 65504 + 16 = 65520: inf
    assert ref_add(F16, 0x7BFF, 0x4B80) == (0x7BFF, 1)                      # 65519 rounds down
    assert ref_add(BF16, 0x3F80, 0x3B80) == (0x3F80, 1)                     # 1 + 2^-8: tie to even
    assert ref_add(BF16, 0x3F81, 0x3B80) == (0x3F82, 1)
    assert ref_min_max(F32, 0x00000000, 0x80000000, False) == (0x80000000, 0)  # min(+0, -0) = -0
    assert ref_min_max(F32, 0x80000000, 0x00000000, True) == (0x00000000, 0)   # max(-0, +0) = +0
    assert ref_min_max(F16, 0x7D01, 0x4000, False) == (0x4000, 0x10)           # min(sNaN, 2) = 2
    assert ref_min_max(BF16, 0x7FC0, 0xFFC1, True) == (0x7FC0, 0)              # two NaNs: NaN


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--count", type=int, default=2500, help="lines per file (at least the special cross)")
    args = parser.parse_args()
    self_test()
    for fmt in FORMATS:
        for op in ("add", "min", "max"):
            path = os.path.join(args.out, f"{fmt.name}_{op}.txt")
            write_file(path, fmt, op, args.seed, args.count)
            print(path)


if __name__ == "__main__":
    main()
