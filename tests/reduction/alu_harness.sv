// Test top for the reduction arithmetic: the functions of package reduce_alu (rtl/reduce_alu.sv),
// the very ones the unit calls in its ALU and FINISH stages, with plain vector ports (the C++ test
// drives raw op/type codes) and independent inputs, so that any accumulator value can be
// finished, not only one that combine just produced.
module alu_harness import reduce_pkg::*; (
  input  logic [2:0]   op_code,
  input  logic [2:0]   type_code,
  input  logic         first,     // 1: acc_out = widen(operand), acc_in ignored
  input  logic [255:0] acc_in,
  input  logic [127:0] operand,
  output logic [255:0] acc_out,
  input  logic [255:0] finish_acc,
  output logic [127:0] result
);
  assign acc_out = reduce_alu::combine(reduce_op_e'(op_code), reduce_type_e'(type_code), first,
                                       acc_in, operand);

  assign result = reduce_alu::finish(reduce_type_e'(type_code), finish_acc);
endmodule
