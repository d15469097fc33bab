// Test top for the reduction arithmetic: reduce_alu and reduce_finish side by side, with plain
// vector ports (the C++ test drives raw op/type codes) and independent inputs, so that any
// accumulator value can be finished, not only one that reduce_alu just produced.
module alu_harness import reduce_pkg::*; (
  input  logic [2:0]   op_code,
  input  logic [2:0]   type_code,
  input  logic         first,
  input  logic [255:0] acc_in,
  input  logic [127:0] operand,
  output logic [255:0] acc_out,
  input  logic [255:0] finish_acc,
  output logic [127:0] result
);
  reduce_alu u_alu (
    .op     (reduce_op_e'(op_code)),
    .dtype  (reduce_type_e'(type_code)),
    .first  (first),
    .acc_in (acc_in),
    .operand(operand),
    .acc_out(acc_out)
  );

  reduce_finish u_finish (
    .dtype (reduce_type_e'(type_code)),
    .acc   (finish_acc),
    .result(result)
  );
endmodule
