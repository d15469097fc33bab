// Arithmetic of the multimem reduction unit (combinational).
//
// reduce_alu folds one 16-byte contribution into a 256-bit accumulator slot; reduce_finish turns a
// slot into the 16-byte result beat. Accumulator layout: f16/bf16 keep lane i as an f32 at bits
// [32i+31:32i] (8 lanes); f32 and the integer types keep the 128-bit value at bits [127:0] with
// bits [255:128] zero. Floats follow IEEE 754 binary32 with round-to-nearest-even and no
// flush-to-zero; every NaN produced is the canonical quiet NaN. min/max are IEEE 754-2019
// minimumNumber/maximumNumber. The bit-exact C++ twin is tlm_models/src/reduction/reduce_alu.cpp:
// a change here must be made there too (tests/reduction/test_reduce_alu_rtl.cpp compares them).

// One contribution into one accumulator slot.
module reduce_alu import reduce_pkg::*; (
  input  reduce_op_e   op,
  input  reduce_type_e dtype,
  input  logic         first,     // 1: acc_out = widen(operand), acc_in ignored
  input  logic [255:0] acc_in,
  input  logic [127:0] operand,
  output logic [255:0] acc_out
);
  localparam logic [31:0] CanonicalNan = 32'h7FC0_0000;

  function automatic logic [31:0] canonical_f32(input logic [31:0] value);
    canonical_f32 = (value[30:23] == 8'hFF && value[22:0] != 23'd0) ? CanonicalNan : value;
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
      leading_zeros = 4'd0;
      for (int i = 0; i < 10; i++) begin
        if (half[i]) leading_zeros = 4'(9 - i);
      end
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
    x_is_nan = x[30:23] == 8'hFF && x[22:0] != 23'd0;
    y_is_nan = y[30:23] == 8'hFF && y[22:0] != 23'd0;
    x_key = x[31] ? ~x : {1'b1, x[30:0]};
    y_key = y[31] ? ~y : {1'b1, y[30:0]};
    if (x_is_nan && y_is_nan) f32_min_max = CanonicalNan;
    else if (x_is_nan) f32_min_max = y;
    else if (y_is_nan) f32_min_max = x;
    else f32_min_max = ((x_key < y_key) ^ want_max) ? x : y;
  endfunction

  // Float lanes: 8 f32 lanes; f32 uses lanes 0-3.
  logic [255:0] float_result;
  for (genvar lane = 0; lane < 8; lane++) begin : g_float_lane
    logic [31:0] acc_lane, operand_lane, sum;
    assign acc_lane = acc_in[32*lane +: 32];
    always_comb begin
      unique case (dtype)
        TYPE_F16:  operand_lane = widen_f16(operand[16*lane +: 16]);
        TYPE_BF16: operand_lane = widen_bf16(operand[16*lane +: 16]);
        default:   operand_lane = (lane < 4) ? canonical_f32(operand[(32*lane)%128 +: 32]) : 32'd0;
      endcase
    end
    reduce_f32_add u_add (.a(acc_lane), .b(operand_lane), .sum(sum));
    always_comb begin
      if (first) float_result[32*lane +: 32] = operand_lane;
      else if (op == OP_MIN) float_result[32*lane +: 32] = f32_min_max(acc_lane, operand_lane, 0);
      else if (op == OP_MAX) float_result[32*lane +: 32] = f32_min_max(acc_lane, operand_lane, 1);
      else float_result[32*lane +: 32] = sum;  // add (bitwise ops are rejected on floats)
    end
  end

  // Integer lanes on the low 128 bits.
  logic [127:0] acc_low;
  assign acc_low = acc_in[127:0];

  logic [127:0] int32_result, int64_result;
  for (genvar lane = 0; lane < 4; lane++) begin : g_int32_lane
    logic [31:0] x, y;
    logic below;
    assign x = acc_low[32*lane +: 32];
    assign y = operand[32*lane +: 32];
    assign below = (dtype == TYPE_S32) ? ($signed(x) < $signed(y)) : (x < y);
    always_comb begin
      unique case (op)
        OP_ADD:  int32_result[32*lane +: 32] = x + y;
        OP_MIN:  int32_result[32*lane +: 32] = below ? x : y;
        OP_MAX:  int32_result[32*lane +: 32] = below ? y : x;
        OP_AND:  int32_result[32*lane +: 32] = x & y;
        OP_OR:   int32_result[32*lane +: 32] = x | y;
        OP_XOR:  int32_result[32*lane +: 32] = x ^ y;
        default: int32_result[32*lane +: 32] = 32'd0;
      endcase
    end
  end
  for (genvar lane = 0; lane < 2; lane++) begin : g_int64_lane
    logic [63:0] x, y;
    logic below;
    assign x = acc_low[64*lane +: 64];
    assign y = operand[64*lane +: 64];
    assign below = (dtype == TYPE_S64) ? ($signed(x) < $signed(y)) : (x < y);
    always_comb begin
      unique case (op)
        OP_ADD:  int64_result[64*lane +: 64] = x + y;
        OP_MIN:  int64_result[64*lane +: 64] = below ? x : y;
        OP_MAX:  int64_result[64*lane +: 64] = below ? y : x;
        OP_AND:  int64_result[64*lane +: 64] = x & y;
        OP_OR:   int64_result[64*lane +: 64] = x | y;
        OP_XOR:  int64_result[64*lane +: 64] = x ^ y;
        default: int64_result[64*lane +: 64] = 64'd0;
      endcase
    end
  end

  always_comb begin
    unique case (dtype)
      TYPE_F32:            acc_out = {128'd0, float_result[127:0]};
      TYPE_F16, TYPE_BF16: acc_out = float_result;
      TYPE_S32, TYPE_U32:  acc_out = {128'd0, first ? operand : int32_result};
      TYPE_S64, TYPE_U64:  acc_out = {128'd0, first ? operand : int64_result};
      default:             acc_out = 256'd0;
    endcase
  end
endmodule

// Accumulator slot -> result beat: f16/bf16 lanes are rounded once from f32 (RNE, overflow to
// infinity, subnormal results, canonical NaN); the other types pass bits [127:0] through.
// It shares this file with reduce_alu (one place for the arithmetic); linted alone, the file
// therefore has two tops, one not named after the file: hence the two waivers.
/* verilator lint_off DECLFILENAME */
/* verilator lint_off MULTITOP */
module reduce_finish import reduce_pkg::*; (
/* verilator lint_on MULTITOP */
/* verilator lint_on DECLFILENAME */
  input  reduce_type_e dtype,
  input  logic [255:0] acc,
  output logic [127:0] result
);
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

  logic [127:0] f16_result, bf16_result;
  for (genvar lane = 0; lane < 8; lane++) begin : g_lane
    assign f16_result[16*lane +: 16]  = narrow_f16(acc[32*lane +: 32]);
    assign bf16_result[16*lane +: 16] = narrow_bf16(acc[32*lane +: 32]);
  end

  always_comb begin
    unique case (dtype)
      TYPE_F16:  result = f16_result;
      TYPE_BF16: result = bf16_result;
      default:   result = acc[127:0];
    endcase
  end
endmodule

// IEEE 754 binary32 addition, round to nearest even, subnormal inputs and results exact.
// Structure: order by magnitude, align the smaller significand with guard/round/sticky bits,
// add or subtract, normalise (right by one on a carry, left by the leading-zero count but never
// below the minimum exponent), round, then pick the special-case result if any.
module reduce_f32_add (
  input  logic [31:0] a,
  input  logic [31:0] b,
  output logic [31:0] sum
);
  localparam logic [31:0] CanonicalNan = 32'h7FC0_0000;

  function automatic logic [4:0] leading_zeros27(input logic [26:0] value);
    leading_zeros27 = 5'd27;
    for (int i = 0; i < 27; i++) begin
      if (value[i]) leading_zeros27 = 5'(26 - i);
    end
  endfunction

  logic a_is_nan, b_is_nan, a_is_inf, b_is_inf;
  assign a_is_nan = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
  assign b_is_nan = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
  assign a_is_inf = (a[30:23] == 8'hFF) && (a[22:0] == 23'd0);
  assign b_is_inf = (b[30:23] == 8'hFF) && (b[22:0] == 23'd0);

  // Larger magnitude first, so the significand difference is never negative and the result
  // takes the larger operand's sign.
  logic [31:0] larger, smaller;
  assign larger  = (a[30:0] >= b[30:0]) ? a : b;
  assign smaller = (a[30:0] >= b[30:0]) ? b : a;

  // A subnormal has no hidden bit and the exponent of the smallest normal (1).
  logic [7:0] larger_exp, smaller_exp;
  assign larger_exp  = (larger[30:23] == 8'd0) ? 8'd1 : larger[30:23];
  assign smaller_exp = (smaller[30:23] == 8'd0) ? 8'd1 : smaller[30:23];

  // Significands as 1.f (24 bits) followed by guard, round and sticky bits.
  logic [26:0] larger_sig, smaller_sig;
  assign larger_sig  = {larger[30:23] != 8'd0, larger[22:0], 3'b000};
  assign smaller_sig = {smaller[30:23] != 8'd0, smaller[22:0], 3'b000};

  // Alignment: a shift of 27 or more leaves only the sticky bit.
  logic [7:0] exp_diff;
  logic [4:0] align_shift;
  logic [26:0] smaller_shifted, smaller_aligned;
  logic smaller_lost;
  assign exp_diff        = larger_exp - smaller_exp;
  assign align_shift     = (exp_diff > 8'd27) ? 5'd27 : exp_diff[4:0];
  assign smaller_shifted = smaller_sig >> align_shift;
  assign smaller_lost    = |(smaller_sig & ~(27'h7FF_FFFF << align_shift));
  assign smaller_aligned = {smaller_shifted[26:1], smaller_shifted[0] | smaller_lost};

  logic subtract;
  logic [27:0] raw_sum;
  assign subtract = larger[31] ^ smaller[31];
  assign raw_sum  = subtract ? ({1'b0, larger_sig} - {1'b0, smaller_aligned})
                             : ({1'b0, larger_sig} + {1'b0, smaller_aligned});

  // Normalisation. A left shift stops at larger_exp - 1: below that the result is subnormal.
  // More than one leading zero only happens when exp_diff <= 1, where no bit was lost.
  logic [4:0] leading_zeros;
  logic [7:0] max_left_shift, left_shift;
  logic [26:0] norm_sig;
  logic [7:0] norm_exp;
  assign leading_zeros  = leading_zeros27(raw_sum[26:0]);
  assign max_left_shift = larger_exp - 8'd1;
  assign left_shift     = ({3'b000, leading_zeros} > max_left_shift) ? max_left_shift
                                                                      : {3'b000, leading_zeros};
  always_comb begin
    if (raw_sum[27]) begin
      norm_sig = {raw_sum[27:2], raw_sum[1] | raw_sum[0]};
      norm_exp = larger_exp + 8'd1;
    end else begin
      norm_sig = raw_sum[26:0] << left_shift;
      norm_exp = larger_exp - left_shift;
    end
  end

  // Round to nearest, ties to even. Exponent and fraction are added as one field so that a
  // carry out of the fraction bumps the exponent (a subnormal becoming normal, a normal reaching
  // the next binade, the largest finite reaching infinity).
  logic round_up;
  logic [7:0] exp_field;
  logic [30:0] rounded;
  assign round_up  = norm_sig[2] & (norm_sig[1] | norm_sig[0] | norm_sig[3]);
  assign exp_field = norm_sig[26] ? norm_exp : 8'd0;
  assign rounded   = {exp_field, norm_sig[25:3]} + {30'd0, round_up};

  always_comb begin
    if (a_is_nan || b_is_nan || (a_is_inf && b_is_inf && (a[31] != b[31]))) sum = CanonicalNan;
    else if (a_is_inf) sum = a;
    else if (b_is_inf) sum = b;
    else if (raw_sum == 28'd0) sum = {a[31] & b[31], 31'd0};  // x + (-x) = +0, -0 + -0 = -0
    else if (norm_exp == 8'hFF) sum = {larger[31], 8'hFF, 23'd0};  // carry out of the top binade
    else sum = {larger[31], rounded};
  end
endmodule
