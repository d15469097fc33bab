// The multimem reduction unit: reduction contexts, a set-associative accumulator buffer with
// round-robin eviction, pass-through of evicted beats, sticky error status and event counters.
// docs/models/reduction_unit.md is the specification; tlm_models/src/reduction/reduction_model.cpp
// is the bit-exact C++ model (a change here must be made there too).
//
// Pipeline (one command per clock, every stage advances together; the only stall is output
// back-pressure, which freezes the whole pipeline):
//   IN      the accepted command is registered.
//   LOOKUP  context table, beat state and the 8 tags of the beat's set are read and updated in this
//           one stage, so the next command always sees the state its predecessor left: control
//           needs no forwarding.
//   READ    the accumulator slot chosen by LOOKUP is read (forwarded from ALU when ALU writes the
//           same slot in the same clock, the only read-after-write hazard).
//   ALU     reduce_alu::combine combines (or widens a first contribution); the slot is written
//           back.
//   FINISH  reduce_alu::finish rounds the leaving accumulator to the result beat.
//   OUT     the result register (res_valid); a command without a result still occupies it for
//           one clock, so the pipeline always drains in five clocks.
// The arithmetic is called inside the clocked blocks of ALU and FINISH/OUT, and only for a command
// that needs it: the Verilated model then evaluates only the datapath in use on each clock (see
// "Speed" in the doc). Control state is laid out for the same reason: valid/stale bits by set,
// {context, beat} as one tag, beat states as one packed vector (a 2-bit read, no row copy), and a
// per-context slot count so that an open runs the flash compare only when there are leftovers.
module reduction_unit import reduce_pkg::*; #(
  parameter int BUFFER_BYTES = 65536,
  parameter int WAYS = 8,
  parameter int CONTEXTS = 64,
  parameter int CONTEXT_MAX_BEATS = 1024
) (
  input  logic         clk,
  input  logic         rst_n,

  // Command stream: an OpenContext (cmd_is_open = 1) or a Contribution.
  input  logic         cmd_valid,
  output logic         cmd_ready,
  input  logic         cmd_is_open,
  input  logic [15:0]  cmd_context,
  input  logic [31:0]  cmd_beat,           // Contribution
  input  logic [127:0] cmd_data,           // Contribution
  input  logic [15:0]  cmd_contributions,  // OpenContext
  input  logic [7:0]   cmd_op,             // OpenContext: a reduce_op_e code (others are bad_open)
  input  logic [7:0]   cmd_dtype,          // OpenContext: a reduce_type_e code
  input  logic [31:0]  cmd_length_beats,   // OpenContext

  // Result stream.
  output logic         res_valid,
  input  logic         res_ready,
  output logic [15:0]  res_context,
  output logic [31:0]  res_beat,
  output logic [127:0] res_data,
  output logic [15:0]  res_contributions,
  output logic         res_partial,

  // Sticky status (bit order of StatusBit) and its clear pulse (set wins over clear).
  output logic [5:0]   status_sticky,
  input  logic [5:0]   status_clear,

  // Event counters (ReductionCounters).
  output logic [63:0]  count_contributions,
  output logic [63:0]  count_completed_beats,
  output logic [63:0]  count_evicted_beats,
  output logic [63:0]  count_passthrough_beats,
  output logic [63:0]  count_errors,
  output logic [63:0]  count_contexts_opened,
  output logic [63:0]  count_contexts_completed,

  output logic         idle  // no command anywhere in the pipeline
);
  localparam int Slots = BUFFER_BYTES / 32;
  localparam int Sets = Slots / WAYS;
  localparam int SetW = $clog2(Sets);
  localparam int WayW = $clog2(WAYS);
  localparam int SlotW = SetW + WayW;
  localparam int CtxW = $clog2(CONTEXTS);
  localparam int BeatW = $clog2(CONTEXT_MAX_BEATS);
  localparam int LenW = $clog2(CONTEXT_MAX_BEATS + 1);

  // The set index hashes the context so that beat b of different contexts spreads over the sets.
  localparam logic [15:0] ContextSetStride = 16'd61;

  // Context states.
  localparam logic [1:0] CtxNeverOpened = 2'd0;
  localparam logic [1:0] CtxOpen = 2'd1;
  localparam logic [1:0] CtxComplete = 2'd2;

  // Per-beat states.
  localparam logic [1:0] BeatIdle = 2'd0;
  localparam logic [1:0] BeatBuffered = 2'd1;
  localparam logic [1:0] BeatEvicted = 2'd2;
  localparam logic [1:0] BeatComplete = 2'd3;

  // Status bits (StatusBit).
  localparam int StUnknownContext = 0;
  localparam int StAfterCompletion = 1;
  localparam int StTooMany = 2;
  localparam int StBeatOutOfRange = 3;
  localparam int StContextBusy = 4;
  localparam int StBadOpen = 5;

  // ---------------------------------------------------------------------------------------------
  // State.
  // Context table.
  logic [1:0]          ctx_state_q         [CONTEXTS];
  logic [15:0]         ctx_contributions_q [CONTEXTS];
  reduce_op_e          ctx_op_q            [CONTEXTS];
  reduce_type_e        ctx_dtype_q         [CONTEXTS];
  logic [LenW-1:0]     ctx_length_q        [CONTEXTS];
  logic [31:0]         ctx_total_q         [CONTEXTS];  // contributions x length_beats
  logic [31:0]         ctx_accepted_q      [CONTEXTS];
  // Valid, not stale buffer slots held by each context (0 .. Slots): the open of a context whose
  // count is zero needs no flash compare (see slot_stale_q).
  logic [SlotW:0]      ctx_slots_q         [CONTEXTS];
  // The large state arrays (beat states, buffer tags and accumulators) stay out of VCD files:
  // traced, they cost megabytes per clock; the pipeline registers show what each access did.
  /* verilator tracing_off */
  // Beat states: one row of 2 x CONTEXT_MAX_BEATS bits per context, cleared in one write when
  // the context opens.
  logic [CONTEXTS-1:0][CONTEXT_MAX_BEATS-1:0][1:0] beat_state_q;
  // Buffer tags (slot = set * WAYS + way): valid and stale bits by set, {context, beat} by slot.
  // A stale slot is a partial result left behind by a previous incarnation of its context (see
  // the doc): it never matches, it only waits for eviction.
  logic [Sets-1:0][WAYS-1:0] slot_valid_q;
  logic [Sets-1:0][WAYS-1:0] slot_stale_q;
  logic [CtxW+BeatW-1:0] slot_tag_q [Slots];
  logic [15:0]         slot_count_q [Slots];
  reduce_type_e        slot_dtype_q [Slots];
  logic [Sets-1:0][WayW-1:0] rr_q;  // per-set round-robin victim pointer
  // Accumulators.
  logic [255:0]        acc_mem [Slots];
  /* verilator tracing_on */
  // Status and counters.
  logic [5:0]          sticky_q;
  logic [63:0]         cnt_contributions_q, cnt_completed_beats_q, cnt_evicted_q, cnt_pass_q;
  logic [63:0]         cnt_errors_q, cnt_opened_q, cnt_ctx_completed_q;

  // Global stall: everything advances unless a result waits for res_ready.
  logic advance;

  // ---------------------------------------------------------------------------------------------
  // IN stage.
  logic         in_valid_q, in_is_open_q;
  logic [15:0]  in_context_q;
  logic [31:0]  in_beat_q;
  logic [127:0] in_data_q;
  logic [15:0]  in_contributions_q;
  logic [7:0]   in_op_q, in_dtype_q;
  logic [31:0]  in_length_q;

  assign cmd_ready = advance;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      in_valid_q <= 1'b0;
    end else if (advance) begin
      in_valid_q <= cmd_valid;
      if (cmd_valid) begin
        in_is_open_q       <= cmd_is_open;
        in_context_q       <= cmd_context;
        in_beat_q          <= cmd_beat;
        in_data_q          <= cmd_data;
        in_contributions_q <= cmd_contributions;
        in_op_q            <= cmd_op;
        in_dtype_q         <= cmd_dtype;
        in_length_q        <= cmd_length_beats;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // LOOKUP stage: decisions (combinational).
  logic [CtxW-1:0]  lk_ctx;
  logic [BeatW-1:0] lk_beat;
  logic [SetW-1:0]  lk_set;
  logic             lk_ctx_in_range;
  logic [1:0]       lk_ctx_state;
  logic [1:0]       lk_beat_state;

  assign lk_ctx = in_context_q[CtxW-1:0];
  assign lk_beat = in_beat_q[BeatW-1:0];
  assign lk_set = in_beat_q[SetW-1:0] + SetW'(in_context_q * ContextSetStride);
  assign lk_ctx_in_range = in_context_q < 16'(CONTEXTS);
  assign lk_ctx_state = ctx_state_q[lk_ctx];
  assign lk_beat_state = beat_state_q[lk_ctx][lk_beat];

  // The set's ways.
  logic [WAYS-1:0]  way_valid, way_live, way_hit;
  logic [WayW-1:0]  hit_way, free_way, victim_way;
  logic             set_hit, set_full;
  always_comb begin
    hit_way = '0;
    free_way = '0;
    way_valid = slot_valid_q[lk_set];
    way_live = way_valid & ~slot_stale_q[lk_set];
    for (int w = WAYS - 1; w >= 0; w--) begin  // downwards: the lowest index wins
      way_hit[w] = way_live[w] && slot_tag_q[{lk_set, WayW'(w)}] == {lk_ctx, lk_beat};
      if (way_hit[w]) hit_way = WayW'(w);
      if (!way_valid[w]) free_way = WayW'(w);
    end
    set_hit = |way_hit;
    set_full = &way_valid;
    victim_way = rr_q[lk_set];
  end

  // Command classification.
  logic [5:0] lk_error;        // one bit at most
  logic       lk_open_ok;      // a valid OpenContext
  logic       lk_accept;       // an accepted contribution
  logic       lk_ctx_done;     // ... that completes its context
  logic       lk_pass;         // ... to an evicted beat: passes through
  logic       lk_single;       // ... of a 1-contribution context: completes at once
  logic       lk_hit_update;   // ... combines into its slot
  logic       lk_hit_complete; // ... combines into its slot and completes the beat
  logic       lk_alloc;        // ... takes a way
  logic       lk_evict;        // ... takes an occupied way: the victim leaves
  logic [WayW-1:0] lk_way;
  logic [SlotW-1:0] lk_slot;
  logic [SlotW-1:0] lk_victim_slot;
  logic       lk_victim_stale;
  logic [CtxW-1:0] lk_victim_ctx;
  logic [BeatW-1:0] lk_victim_beat;
  logic       lk_evict_own;    // ... and the victim is a live slot of its own context
  logic       open_fields_bad;

  assign lk_victim_slot = {lk_set, victim_way};
  assign lk_victim_stale = slot_stale_q[lk_set][victim_way];
  assign {lk_victim_ctx, lk_victim_beat} = slot_tag_q[lk_victim_slot];

  always_comb begin
    open_fields_bad = !lk_ctx_in_range || in_contributions_q == 16'd0 || in_length_q == 32'd0 ||
                      in_length_q > 32'(CONTEXT_MAX_BEATS) || in_op_q > 8'(OP_XOR) ||
                      in_dtype_q > 8'(TYPE_U64) ||
                      (in_op_q >= 8'(OP_AND) && in_dtype_q <= 8'(TYPE_BF16));
  end

  always_comb begin
    lk_error = '0;
    lk_open_ok = 1'b0;
    lk_accept = 1'b0;
    lk_ctx_done = 1'b0;
    lk_pass = 1'b0;
    lk_single = 1'b0;
    lk_hit_update = 1'b0;
    lk_hit_complete = 1'b0;
    lk_alloc = 1'b0;
    lk_evict = 1'b0;
    lk_way = hit_way;
    if (in_valid_q) begin
      if (in_is_open_q) begin
        if (open_fields_bad) lk_error[StBadOpen] = 1'b1;
        else if (lk_ctx_state == CtxOpen) lk_error[StContextBusy] = 1'b1;
        else lk_open_ok = 1'b1;
      end else if (!lk_ctx_in_range || lk_ctx_state == CtxNeverOpened) begin
        lk_error[StUnknownContext] = 1'b1;
      end else if (lk_ctx_state == CtxComplete) begin
        lk_error[StAfterCompletion] = 1'b1;
      end else if (in_beat_q >= 32'(ctx_length_q[lk_ctx])) begin
        lk_error[StBeatOutOfRange] = 1'b1;
      end else if (lk_beat_state == BeatComplete) begin
        lk_error[StTooMany] = 1'b1;
      end else begin
        lk_accept = 1'b1;
        lk_ctx_done = ctx_accepted_q[lk_ctx] + 32'd1 == ctx_total_q[lk_ctx];
        if (lk_beat_state == BeatEvicted) begin
          lk_pass = 1'b1;
        end else if (ctx_contributions_q[lk_ctx] == 16'd1) begin
          lk_single = 1'b1;
        end else if (set_hit) begin
          if (slot_count_q[{lk_set, hit_way}] + 16'd1 == ctx_contributions_q[lk_ctx])
            lk_hit_complete = 1'b1;
          else
            lk_hit_update = 1'b1;
        end else begin
          lk_alloc = 1'b1;
          lk_evict = set_full;
          lk_way = set_full ? victim_way : free_way;
        end
      end
    end
  end

  assign lk_slot = {lk_set, lk_way};
  assign lk_evict_own = lk_evict && !lk_victim_stale && lk_victim_ctx == lk_ctx;

  // LOOKUP stage: state updates.
  logic [31:0] open_total;
  assign open_total = 32'(in_contributions_q) * in_length_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      for (int c = 0; c < CONTEXTS; c++) begin
        ctx_state_q[c] <= CtxNeverOpened;
        ctx_slots_q[c] <= '0;
      end
      slot_valid_q <= '0;
      slot_stale_q <= '0;
      rr_q <= '0;
    end else if (advance) begin
      if (lk_open_ok) begin
        ctx_state_q[lk_ctx] <= CtxOpen;
        ctx_contributions_q[lk_ctx] <= in_contributions_q;
        ctx_op_q[lk_ctx] <= reduce_op_e'(in_op_q[2:0]);
        ctx_dtype_q[lk_ctx] <= reduce_type_e'(in_dtype_q[2:0]);
        ctx_length_q[lk_ctx] <= LenW'(in_length_q);
        ctx_total_q[lk_ctx] <= open_total;
        ctx_accepted_q[lk_ctx] <= 32'd0;
        beat_state_q[lk_ctx] <= {CONTEXT_MAX_BEATS{BeatIdle}};
        // The context's leftover slots (see slot_stale_q) turn stale: a flash compare over all
        // tags, needed only here, and only when the context still holds slots.
        ctx_slots_q[lk_ctx] <= '0;
        if (ctx_slots_q[lk_ctx] != '0) begin
          for (int s = 0; s < Slots; s++) begin
            if (slot_valid_q[s / WAYS][s % WAYS] && slot_tag_q[s][BeatW +: CtxW] == lk_ctx)
              slot_stale_q[s / WAYS][s % WAYS] <= 1'b1;
          end
        end
      end
      if (lk_accept) begin
        ctx_accepted_q[lk_ctx] <= ctx_accepted_q[lk_ctx] + 32'd1;
        if (lk_ctx_done) ctx_state_q[lk_ctx] <= CtxComplete;
      end
      if (lk_single || lk_hit_complete) beat_state_q[lk_ctx][lk_beat] <= BeatComplete;
      if (lk_hit_complete) begin
        slot_valid_q[lk_set][lk_way] <= 1'b0;
        ctx_slots_q[lk_ctx] <= ctx_slots_q[lk_ctx] - 1'b1;
      end
      // A slot changes hands on an eviction: the victim's context (unless the victim is stale)
      // loses one, the allocating context gains one; nothing changes when the two are the same.
      if (lk_alloc && !lk_evict_own) ctx_slots_q[lk_ctx] <= ctx_slots_q[lk_ctx] + 1'b1;
      if (lk_evict && !lk_victim_stale && !lk_evict_own)
        ctx_slots_q[lk_victim_ctx] <= ctx_slots_q[lk_victim_ctx] - 1'b1;
      if (lk_hit_update) slot_count_q[lk_slot] <= slot_count_q[lk_slot] + 16'd1;
      if (lk_alloc) begin
        beat_state_q[lk_ctx][lk_beat] <= BeatBuffered;
        slot_valid_q[lk_set][lk_way] <= 1'b1;
        slot_stale_q[lk_set][lk_way] <= 1'b0;
        slot_tag_q[lk_slot] <= {lk_ctx, lk_beat};
        slot_count_q[lk_slot] <= 16'd1;
        slot_dtype_q[lk_slot] <= ctx_dtype_q[lk_ctx];
      end
      if (lk_evict) begin
        rr_q[lk_set] <= victim_way + WayW'(1);
        // A stale victim belongs to a closed incarnation: the current beat states are not its.
        if (!lk_victim_stale)
          beat_state_q[lk_victim_ctx][lk_victim_beat] <= BeatEvicted;
      end
    end
  end

  // Status and counters.
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sticky_q <= '0;
      cnt_contributions_q <= '0;
      cnt_completed_beats_q <= '0;
      cnt_evicted_q <= '0;
      cnt_pass_q <= '0;
      cnt_errors_q <= '0;
      cnt_opened_q <= '0;
      cnt_ctx_completed_q <= '0;
    end else begin
      sticky_q <= (sticky_q & ~status_clear) | (advance ? lk_error : 6'd0);
      if (advance) begin
        cnt_contributions_q <= cnt_contributions_q + 64'(lk_accept);
        cnt_completed_beats_q <= cnt_completed_beats_q + 64'(lk_single || lk_hit_complete);
        cnt_evicted_q <= cnt_evicted_q + 64'(lk_evict);
        cnt_pass_q <= cnt_pass_q + 64'(lk_pass);
        cnt_errors_q <= cnt_errors_q + 64'(|lk_error);
        cnt_opened_q <= cnt_opened_q + 64'(lk_open_ok);
        cnt_ctx_completed_q <= cnt_ctx_completed_q + 64'(lk_ctx_done);
      end
    end
  end

  assign status_sticky = sticky_q;
  assign count_contributions = cnt_contributions_q;
  assign count_completed_beats = cnt_completed_beats_q;
  assign count_evicted_beats = cnt_evicted_q;
  assign count_passthrough_beats = cnt_pass_q;
  assign count_errors = cnt_errors_q;
  assign count_contexts_opened = cnt_opened_q;
  assign count_contexts_completed = cnt_ctx_completed_q;

  // LOOKUP -> READ register.
  logic             rd_valid_q, rd_first_q, rd_read_q, rd_write_q, rd_emit_q, rd_emit_victim_q;
  logic [SlotW-1:0] rd_slot_q;
  reduce_op_e       rd_op_q;
  reduce_type_e     rd_dtype_q, rd_finish_dtype_q;
  logic [127:0]     rd_operand_q;
  logic [15:0]      rd_res_context_q, rd_res_contributions_q;
  logic [31:0]      rd_res_beat_q;
  logic             rd_res_partial_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rd_valid_q <= 1'b0;
      rd_read_q <= 1'b0;
      rd_write_q <= 1'b0;
      rd_emit_q <= 1'b0;
    end else if (advance) begin
      rd_valid_q <= in_valid_q;
      rd_first_q <= lk_pass || lk_single || lk_alloc;
      rd_read_q <= lk_hit_update || lk_hit_complete || lk_evict;
      rd_write_q <= lk_hit_update || lk_alloc;
      rd_emit_q <= lk_pass || lk_single || lk_hit_complete || lk_evict;
      rd_emit_victim_q <= lk_evict;
      rd_slot_q <= lk_slot;
      rd_op_q <= ctx_op_q[lk_ctx];
      rd_dtype_q <= ctx_dtype_q[lk_ctx];
      rd_finish_dtype_q <= lk_evict ? slot_dtype_q[lk_victim_slot] : ctx_dtype_q[lk_ctx];
      rd_operand_q <= in_data_q;
      rd_res_context_q <= lk_evict ? 16'(lk_victim_ctx) : in_context_q;
      rd_res_beat_q <= lk_evict ? 32'(lk_victim_beat) : in_beat_q;
      rd_res_contributions_q <= lk_evict ? slot_count_q[lk_victim_slot] :
                                lk_hit_complete ? ctx_contributions_q[lk_ctx] : 16'd1;
      rd_res_partial_q <= lk_evict || lk_pass;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // READ stage: the slot chosen by LOOKUP is read when the command needs its accumulator (a hit,
  // or a victim leaving); see the ALU stage for the forwarding.
  logic             alu_valid_q, alu_first_q, alu_write_q, alu_emit_q, alu_emit_victim_q;
  logic [SlotW-1:0] alu_slot_q;
  reduce_op_e       alu_op_q;
  reduce_type_e     alu_dtype_q, alu_finish_dtype_q;
  logic [255:0]     alu_acc_in_q;
  logic [127:0]     alu_operand_q;
  logic [15:0]      alu_res_context_q, alu_res_contributions_q;
  logic [31:0]      alu_res_beat_q;
  logic             alu_res_partial_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      alu_valid_q <= 1'b0;
      alu_write_q <= 1'b0;
      alu_emit_q <= 1'b0;
    end else if (advance) begin
      alu_valid_q <= rd_valid_q;
      alu_first_q <= rd_first_q;
      alu_write_q <= rd_write_q;
      alu_emit_q <= rd_emit_q;
      alu_emit_victim_q <= rd_emit_victim_q;
      alu_slot_q <= rd_slot_q;
      alu_op_q <= rd_op_q;
      alu_dtype_q <= rd_dtype_q;
      alu_finish_dtype_q <= rd_finish_dtype_q;
      alu_operand_q <= rd_operand_q;
      alu_res_context_q <= rd_res_context_q;
      alu_res_beat_q <= rd_res_beat_q;
      alu_res_contributions_q <= rd_res_contributions_q;
      alu_res_partial_q <= rd_res_partial_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // ALU stage: reduce_alu::combine (which widens a first contribution), computed in front of the
  // registers it feeds, and only for a command whose accumulator is written back or sent on (not
  // for a bubble, an open, an error, or a victim's accumulator leaving as it is). The one result
  // goes to the accumulator write port, to FINISH, and, forwarded, to the READ stage's register
  // when the command there reads the slot written here (the only data hazard).
  logic             fin_valid_q, fin_emit_q;
  reduce_type_e     fin_dtype_q;
  logic [255:0]     fin_acc_q;
  logic [15:0]      fin_res_context_q, fin_res_contributions_q;
  logic [31:0]      fin_res_beat_q;
  logic             fin_res_partial_q;

  always_ff @(posedge clk) begin : alu_stage
    logic [255:0] alu_result;
    alu_result = '0;
    if (advance && alu_valid_q && (alu_write_q || (alu_emit_q && !alu_emit_victim_q))) begin
      alu_result = reduce_alu::combine(alu_op_q, alu_dtype_q, alu_first_q, alu_acc_in_q,
                                       alu_operand_q);
    end
    if (advance && alu_valid_q && alu_write_q) acc_mem[alu_slot_q] <= alu_result;
    if (advance && rd_valid_q && rd_read_q) begin
      alu_acc_in_q <= (alu_valid_q && alu_write_q && alu_slot_q == rd_slot_q) ? alu_result
                                                                              : acc_mem[rd_slot_q];
    end
    // An eviction sends out the victim's accumulator; the ALU result stays in the slot.
    if (advance && alu_emit_q) fin_acc_q <= alu_emit_victim_q ? alu_acc_in_q : alu_result;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      fin_valid_q <= 1'b0;
      fin_emit_q <= 1'b0;
    end else if (advance) begin
      fin_valid_q <= alu_valid_q;
      fin_emit_q <= alu_emit_q;
      fin_dtype_q <= alu_finish_dtype_q;
      fin_res_context_q <= alu_res_context_q;
      fin_res_beat_q <= alu_res_beat_q;
      fin_res_contributions_q <= alu_res_contributions_q;
      fin_res_partial_q <= alu_res_partial_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // FINISH stage and OUT register: reduce_alu::finish rounds the leaving accumulator in front of
  // res_data, only for a command with a result (res_data is meaningful only with res_valid).
  logic out_valid_q;  // occupied, with or without a result
  logic res_valid_q;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid_q <= 1'b0;
      res_valid_q <= 1'b0;
    end else if (advance) begin
      out_valid_q <= fin_valid_q;
      res_valid_q <= fin_valid_q && fin_emit_q;
      res_context <= fin_res_context_q;
      res_beat <= fin_res_beat_q;
      if (fin_valid_q && fin_emit_q) res_data <= reduce_alu::finish(fin_dtype_q, fin_acc_q);
      res_contributions <= fin_res_contributions_q;
      res_partial <= fin_res_partial_q;
    end
  end

  assign res_valid = res_valid_q;
  assign advance = !res_valid_q || res_ready;
  assign idle = !(in_valid_q || rd_valid_q || alu_valid_q || fin_valid_q || out_valid_q);
endmodule
