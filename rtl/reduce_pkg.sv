// Operation and data-type codes of the multimem reduction unit. They match
// tlm_models/include/nvsvp/reduction/reduction_unit.hpp (ReduceOp, ReduceType).
package reduce_pkg;
  typedef enum logic [2:0] {
    OP_ADD = 3'd0,
    OP_MIN = 3'd1,
    OP_MAX = 3'd2,
    OP_AND = 3'd3,
    OP_OR  = 3'd4,
    OP_XOR = 3'd5
  } reduce_op_e;

  typedef enum logic [2:0] {
    TYPE_F32  = 3'd0,
    TYPE_F16  = 3'd1,
    TYPE_BF16 = 3'd2,
    TYPE_S32  = 3'd3,
    TYPE_U32  = 3'd4,
    TYPE_S64  = 3'd5,
    TYPE_U64  = 3'd6
  } reduce_type_e;
endpackage
