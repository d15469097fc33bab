// Arithmetic of the multimem reduction unit: the package reduce_alu, combinational functions.
//
// widen turns a first contribution into a 256-bit accumulator slot, combine folds a 16-byte
// contribution into a slot, finish turns a slot into the 16-byte result beat. Accumulator layout:
// f16/bf16 keep lane i as an f32 at bits [32i+31:32i] (8 lanes); f32 and the integer types keep
// the 128-bit value at bits [127:0] with bits [255:128] zero. Floats follow IEEE 754 binary32 with
// round-to-nearest-even and no flush-to-zero; every NaN produced is the canonical quiet NaN.
// min/max are IEEE 754-2019 minimumNumber/maximumNumber. The bit-exact C++ twin is
// tlm_models/src/reduction/reduce_alu.cpp (same names; combine here also takes `first` and then
// returns widen(operand)): a change here must be made there too
// (tests/reduction/test_reduce_alu_rtl.cpp compares them through tests/reduction/alu_harness.sv).
//
// The unit calls these functions inside its clocked ALU and FINISH stages
// (rtl/reduction_unit.sv): they are the combinational logic in front of those stages' registers.
// Each of widen, combine and finish selects the datapath of the beat's type (and op) with a case
// statement and calls the lane functions only inside the selected branch. In hardware that is the
// usual set of lane datapaths and output multiplexers; in the Verilated model only the branch in
// use runs (an integer beat never runs a float adder, f32 runs 4 lanes rather than 8). See
// "Speed" in docs/models/reduction_unit.md.
package reduce_alu;
  import reduce_pkg::*;

  localparam logic [31:0] CanonicalNan = 32'h7FC0_0000;

  // ---------------------------------------------------------------------------------------------
  // Lane functions.

  function automatic logic is_nan_f32(input logic [30:0] magnitude);
    is_nan_f32 = magnitude[30:23] == 8'hFF && magnitude[22:0] != 23'd0;
  endfunction

  function automatic logic [31:0] canonical_f32(input logic [31:0] value);
    canonical_f32 = is_nan_f32(value[30:0]) ? CanonicalNan : value;
  endfunction

  // Leading zeros of a 27-bit value, 27 when it is zero: a logarithmic leading-zero counter on
  // {value, 5'b11111} (the five ones stop the count at 27).
  function automatic logic [4:0] leading_zeros27(input logic [26:0] value);
    logic [31:0] x;
    logic [4:0] count;
    x = {value, 5'b11111};
    count[4] = x[31:16] == 16'd0;
    x = count[4] ? {x[15:0], 16'd0} : x;
    count[3] = x[31:24] == 8'd0;
    x = count[3] ? {x[23:0], 8'd0} : x;
    count[2] = x[31:28] == 4'd0;
    x = count[2] ? {x[27:0], 4'd0} : x;
    count[1] = x[31:30] == 2'd0;
    x = count[1] ? {x[29:0], 2'd0} : x;
    count[0] = !x[31];
    leading_zeros27 = count;
  endfunction

  // Leading zeros of a non-zero 10-bit f16 fraction (0 .. 9): the same counter on
  // {fraction, 6'b111111}.
  function automatic logic [3:0] leading_zeros10(input logic [9:0] fraction);
    logic [15:0] x;
    logic [3:0] count;
    x = {fraction, 6'b111111};
    count[3] = x[15:8] == 8'd0;
    x = count[3] ? {x[7:0], 8'd0} : x;
    count[2] = x[15:12] == 4'd0;
    x = count[2] ? {x[11:0], 4'd0} : x;
    count[1] = x[15:14] == 2'd0;
    x = count[1] ? {x[13:0], 2'd0} : x;
    count[0] = !x[15];
    leading_zeros10 = count;
  endfunction

  // Exact f16 -> f32. A subnormal f16 becomes a normal f32: its leading one turns into the
  // hidden bit.
  function automatic logic [31:0] widen_f16(input logic [15:0] half);
    logic [3:0] leading_zeros;
    logic [9:0] fraction;
    if (half[14:10] == 5'h1F) begin
      widen_f16 = (half[9:0] != 10'd0) ? CanonicalNan : {half[15], 8'hFF, 23'd0};
    end else if (half[14:10] != 5'd0) begin
      widen_f16 = {half[15], {3'b000, half[14:10]} + 8'd112, half[9:0], 13'd0};
    end else if (half[9:0] == 10'd0) begin
      widen_f16 = {half[15], 31'd0};
    end else begin
      leading_zeros = leading_zeros10(half[9:0]);
      fraction  = half[9:0] << (leading_zeros + 4'd1);
      widen_f16 = {half[15], 8'd112 - {4'd0, leading_zeros}, fraction, 13'd0};
    end
  endfunction

  // Exact bf16 -> f32: bf16 is the top half of an f32.
  function automatic logic [31:0] widen_bf16(input logic [15:0] brain);
    widen_bf16 = canonical_f32({brain, 16'd0});
  endfunction

  // minimumNumber (want_max = 0) / maximumNumber (want_max = 1). The sign-magnitude encodings map
  // to keys whose unsigned order is the numeric order with -0 < +0.
  function automatic logic [31:0] f32_min_max(input logic [31:0] x, input logic [31:0] y,
                                               input logic want_max);
    logic x_is_nan, y_is_nan;
    logic [31:0] x_key, y_key;
    x_is_nan = is_nan_f32(x[30:0]);
    y_is_nan = is_nan_f32(y[30:0]);
    x_key = x[31] ? ~x : {1'b1, x[30:0]};
    y_key = y[31] ? ~y : {1'b1, y[30:0]};
    if (x_is_nan && y_is_nan) f32_min_max = CanonicalNan;
    else if (x_is_nan) f32_min_max = y;
    else if (y_is_nan) f32_min_max = x;
    else f32_min_max = ((x_key < y_key) ^ want_max) ? x : y;
  endfunction

  // IEEE 754 binary32 addition, round to nearest even, subnormal inputs and results exact.
  // Structure: special operands first; otherwise order by magnitude, align the smaller
  // significand with guard/round/sticky bits, add or subtract, normalise (right by one on a carry,
  // left by the leading-zero count but never below the minimum exponent), round.
  function automatic logic [31:0] f32_add(input logic [31:0] a, input logic [31:0] b);
    logic a_is_inf, b_is_inf;
    logic [31:0] larger, smaller;
    logic [7:0] larger_exp, smaller_exp, exp_diff, max_left_shift, left_shift, norm_exp;
    logic [7:0] exp_field;
    logic [26:0] larger_sig, smaller_sig, smaller_shifted, smaller_aligned, norm_sig;
    logic [4:0] align_shift;
    logic smaller_lost, round_up;
    logic [27:0] raw_sum;
    logic [30:0] rounded;
    a_is_inf = a[30:0] == 31'h7F80_0000;
    b_is_inf = b[30:0] == 31'h7F80_0000;
    if (is_nan_f32(a[30:0]) || is_nan_f32(b[30:0]) || (a_is_inf && b_is_inf && (a[31] != b[31])))
    begin
      f32_add = CanonicalNan;
    end else if (a_is_inf) begin
      f32_add = a;
    end else if (b_is_inf) begin
      f32_add = b;
    end else begin
      // Larger magnitude first, so the significand difference is never negative and the result
      // takes the larger operand's sign.
      if (a[30:0] >= b[30:0]) begin
        larger = a;
        smaller = b;
      end else begin
        larger = b;
        smaller = a;
      end
      // A subnormal has no hidden bit and the exponent of the smallest normal (1). Significands
      // as 1.f (24 bits) followed by guard, round and sticky bits.
      larger_exp  = (larger[30:23] == 8'd0) ? 8'd1 : larger[30:23];
      smaller_exp = (smaller[30:23] == 8'd0) ? 8'd1 : smaller[30:23];
      larger_sig  = {larger[30:23] != 8'd0, larger[22:0], 3'b000};
      smaller_sig = {smaller[30:23] != 8'd0, smaller[22:0], 3'b000};
      // Alignment: a shift of 27 or more leaves only the sticky bit.
      exp_diff        = larger_exp - smaller_exp;
      align_shift     = (exp_diff > 8'd27) ? 5'd27 : exp_diff[4:0];
      smaller_shifted = smaller_sig >> align_shift;
      smaller_lost    = |(smaller_sig & ~(27'h7FF_FFFF << align_shift));
      smaller_aligned = {smaller_shifted[26:1], smaller_shifted[0] | smaller_lost};
      raw_sum = (larger[31] ^ smaller[31]) ? ({1'b0, larger_sig} - {1'b0, smaller_aligned})
                                           : ({1'b0, larger_sig} + {1'b0, smaller_aligned});
      if (raw_sum == 28'd0) begin
        f32_add = {a[31] & b[31], 31'd0};  // x + (-x) = +0, -0 + -0 = -0
      end else begin
        // Normalisation. A left shift stops at larger_exp - 1: below that the result is
        // subnormal. More than one leading zero only happens when exp_diff <= 1, where no bit
        // was lost.
        if (raw_sum[27]) begin
          norm_sig = {raw_sum[27:2], raw_sum[1] | raw_sum[0]};
          norm_exp = larger_exp + 8'd1;
        end else begin
          max_left_shift = larger_exp - 8'd1;
          left_shift = {3'b000, leading_zeros27(raw_sum[26:0])};
          if (left_shift > max_left_shift) left_shift = max_left_shift;
          norm_sig = raw_sum[26:0] << left_shift;
          norm_exp = larger_exp - left_shift;
        end
        if (norm_exp == 8'hFF) begin
          f32_add = {larger[31], 8'hFF, 23'd0};  // carry out of the top binade
        end else begin
          // Round to nearest, ties to even. Exponent and fraction are added as one field so
          // that a carry out of the fraction bumps the exponent (a subnormal becoming normal, a
          // normal reaching the next binade, the largest finite reaching infinity).
          round_up  = norm_sig[2] & (norm_sig[1] | norm_sig[0] | norm_sig[3]);
          exp_field = norm_sig[26] ? norm_exp : 8'd0;
          rounded   = {exp_field, norm_sig[25:3]} + {30'd0, round_up};
          f32_add   = {larger[31], rounded};
        end
      end
    end
  endfunction

  function automatic logic [31:0] int32_op(input reduce_op_e op, input logic signed_compare,
                                           input logic [31:0] x, input logic [31:0] y);
    logic below;
    below = signed_compare ? ($signed(x) < $signed(y)) : (x < y);
    unique case (op)
      OP_ADD:  int32_op = x + y;
      OP_MIN:  int32_op = below ? x : y;
      OP_MAX:  int32_op = below ? y : x;
      OP_AND:  int32_op = x & y;
      OP_OR:   int32_op = x | y;
      OP_XOR:  int32_op = x ^ y;
      default: int32_op = 32'd0;
    endcase
  endfunction

  function automatic logic [63:0] int64_op(input reduce_op_e op, input logic signed_compare,
                                           input logic [63:0] x, input logic [63:0] y);
    logic below;
    below = signed_compare ? ($signed(x) < $signed(y)) : (x < y);
    unique case (op)
      OP_ADD:  int64_op = x + y;
      OP_MIN:  int64_op = below ? x : y;
      OP_MAX:  int64_op = below ? y : x;
      OP_AND:  int64_op = x & y;
      OP_OR:   int64_op = x | y;
      OP_XOR:  int64_op = x ^ y;
      default: int64_op = 64'd0;
    endcase
  endfunction

  // f32 -> f16. Biased f32 exponents: 142 is 2^15 (the largest f16 binade), 113 is 2^-14 (the
  // smallest normal f16), below 102 (2^-25, half the smallest subnormal) everything rounds to 0.
  function automatic logic [15:0] narrow_f16(input logic [31:0] single);
    logic [23:0] significand;
    logic [4:0] shift;
    logic [10:0] kept;
    logic [14:0] base;
    logic round_up;
    significand = {1'b1, single[22:0]};
    if (single[30:23] == 8'hFF) begin
      narrow_f16 = (single[22:0] != 23'd0) ? 16'h7E00 : {single[31], 15'h7C00};
    end else if (single[30:23] > 8'd142) begin
      narrow_f16 = {single[31], 15'h7C00};
    end else if (single[30:23] < 8'd102) begin
      narrow_f16 = {single[31], 15'd0};
    end else begin
      if (single[30:23] >= 8'd113) begin
        // Normal: the hidden bit of `kept` (bit 10) adds the last 1 to the exponent field.
        shift = 5'd13;
        base  = {5'(single[30:23] - 8'd113), 10'd0};
      end else begin
        shift = 5'(8'd126 - single[30:23]);  // 14 .. 24
        base  = 15'd0;
      end
      kept     = 11'(significand >> shift);
      round_up = significand[shift - 5'd1] &
                 ((|(significand & ~(24'hFF_FFFF << (shift - 5'd1)))) | kept[0]);
      narrow_f16 = {single[31], base + {4'd0, kept} + {14'd0, round_up}};
    end
  endfunction

  // f32 -> bf16: keep the top 16 bits, rounding on the low 16 (same exponent range).
  function automatic logic [15:0] narrow_bf16(input logic [31:0] single);
    if (single[30:23] == 8'hFF && single[22:0] != 23'd0) narrow_bf16 = 16'h7FC0;
    else narrow_bf16 = single[31:16] + {15'd0, single[15] & ((|single[14:0]) | single[16])};
  endfunction

  // ---------------------------------------------------------------------------------------------
  // The slot functions. Each branches on the type (and the op) first and runs lanes only inside
  // the branch taken, so that only the datapath in use is evaluated.

  // First contribution: f32 lanes 0-3 and f16/bf16 lanes 0-7 widened to f32 (NaNs canonical),
  // integers copied. An unknown type code gives 0.
  function automatic logic [255:0] widen(input reduce_type_e dtype, input logic [127:0] operand);
    widen = '0;
    unique case (dtype)
      TYPE_F32: begin
        for (int lane = 0; lane < 4; lane++)
          widen[32*lane +: 32] = canonical_f32(operand[32*lane +: 32]);
      end
      TYPE_F16: begin
        for (int lane = 0; lane < 8; lane++)
          widen[32*lane +: 32] = widen_f16(operand[16*lane +: 16]);
      end
      TYPE_BF16: begin
        for (int lane = 0; lane < 8; lane++)
          widen[32*lane +: 32] = widen_bf16(operand[16*lane +: 16]);
      end
      TYPE_S32, TYPE_U32, TYPE_S64, TYPE_U64: widen[127:0] = operand;
      default: ;
    endcase
  endfunction

  // One contribution into an accumulator slot. first = 1: widen(operand), acc ignored. Otherwise,
  // per lane, acc op widen(operand): float lanes take the accumulator lane as the first operand
  // and the widened operand lane as the second, and compute min, max, or add for every other op
  // code (bitwise ops are rejected on floats); integers use bits [127:0], 4 x 32 or 2 x 64 bits,
  // signed compare for s32/s64. An unknown type code gives 0. The hardware is one set of format
  // converters (widen), 8 f32 lanes of each operation (f32 uses lanes 0-3, f16/bf16 all 8) and the
  // integer lanes, as in the C++ twin.
  function automatic logic [255:0] combine(input reduce_op_e op, input reduce_type_e dtype,
                                           input logic first, input logic [255:0] acc,
                                           input logic [127:0] operand);
    logic [255:0] value;
    value = widen(dtype, operand);
    combine = '0;
    // No branch below is a single assignment, so the Verilated model keeps the branches (it turns
    // an if/else of two single assignments into a select that evaluates both).
    if (first) begin
      combine = value;
    end else begin
      unique case (dtype)
        TYPE_F32, TYPE_F16, TYPE_BF16: begin
          unique case (op)
            OP_MIN: begin
              for (int lane = 0; lane < 8; lane++)
                if (lane < 4 || dtype != TYPE_F32)
                  combine[32*lane +: 32] = f32_min_max(acc[32*lane +: 32], value[32*lane +: 32],
                                                       1'b0);
            end
            OP_MAX: begin
              for (int lane = 0; lane < 8; lane++)
                if (lane < 4 || dtype != TYPE_F32)
                  combine[32*lane +: 32] = f32_min_max(acc[32*lane +: 32], value[32*lane +: 32],
                                                       1'b1);
            end
            default: begin
              for (int lane = 0; lane < 8; lane++)
                if (lane < 4 || dtype != TYPE_F32)
                  combine[32*lane +: 32] = f32_add(acc[32*lane +: 32], value[32*lane +: 32]);
            end
          endcase
        end
        TYPE_S32, TYPE_U32: begin
          for (int lane = 0; lane < 4; lane++)
            combine[32*lane +: 32] = int32_op(op, dtype == TYPE_S32, acc[32*lane +: 32],
                                              value[32*lane +: 32]);
        end
        TYPE_S64, TYPE_U64: begin
          for (int lane = 0; lane < 2; lane++)
            combine[64*lane +: 64] = int64_op(op, dtype == TYPE_S64, acc[64*lane +: 64],
                                              value[64*lane +: 64]);
        end
        default: ;
      endcase
    end
  endfunction

  // Accumulator slot -> result beat: f16/bf16 lanes are rounded once from f32 (RNE, overflow to
  // infinity, subnormal results, canonical NaN); the other types pass bits [127:0] through.
  function automatic logic [127:0] finish(input reduce_type_e dtype, input logic [255:0] acc);
    unique case (dtype)
      TYPE_F16: begin
        for (int lane = 0; lane < 8; lane++)
          finish[16*lane +: 16] = narrow_f16(acc[32*lane +: 32]);
      end
      TYPE_BF16: begin
        for (int lane = 0; lane < 8; lane++)
          finish[16*lane +: 16] = narrow_bf16(acc[32*lane +: 32]);
      end
      default: finish = acc[127:0];
    endcase
  endfunction
endpackage
