// rv32im_core: the project's RV32IM core (plus a read-only Zicsr counter subset).
//
// Three stages, in order, single issue:
//
//   F   fetch:   f_pc is sent to the instruction port; the word comes back on the next cycle
//                (a synchronous, single-cycle read: the ERISC fetch path is modelled as fed by a
//                prefetch buffer, see sim/README.md).
//   EX  decode + register read + execute: ALU, MUL, DIV/REM (held div_latency cycles), branch and
//                jump resolution, load/store address and alignment, CSR read, trap detection. A
//                memory access is issued to the data port at the end of EX.
//   M   memory + writeback: waits for the data port's response (load latency, external MMIO
//                answer), writes the register file at the end of its last cycle. Its result is
//                forwarded to EX, so there are no data-hazard bubbles beyond the load's own wait.
//
// Loads block: EX (and F) are held while a load is in M waiting for data, so a load costs its
// full latency. Stores are posted by the tile (M completes at once) except on the external MMIO
// port, whose answer the core waits for. A taken branch or jump costs branch_penalty bubbles.
//
// Every exception halts the core: halted goes high with the mcause code, the PC of the
// instruction and mtval on the trap_* outputs. Older instructions complete, younger ones have no
// effect. There is no trap vector: the model never produces a silent wrong result, it stops.
module rv32im_core (
    input  logic        clk,
    input  logic        rst,             // synchronous; held while the core is in soft reset
    input  logic [31:0] reset_pc,        // where fetch starts when rst drops
    input  logic [31:0] hartid,          // mhartid
    input  logic [63:0] wall_clock,      // time / timeh
    input  logic [7:0]  div_latency,     // cycles a DIV/REM occupies EX (>= 1)
    input  logic [7:0]  branch_penalty,  // bubbles after a taken branch or jump (>= 0)

    // Instruction port: when if_req is high at a clock edge the word at if_addr is read and
    // presented on if_rdata / if_fault during the next cycle (held while if_req is low).
    output logic        if_req,
    output logic [31:0] if_addr,
    input  logic [31:0] if_rdata,
    input  logic        if_fault,        // fetch address answers nothing (or is misaligned)

    // Data port. dm_addr/dm_write/dm_wdata/dm_be describe the access of the instruction in EX
    // (combinational); the tile answers dm_gnt/dm_fault/dm_halt for that address combinationally.
    // The access is taken at the clock edge where dm_fire is high; its response (dm_rvalid with
    // dm_rdata/dm_rerr) comes back during a later cycle while the instruction sits in M.
    output logic        dm_fire,
    output logic        dm_write,
    output logic [31:0] dm_addr,
    output logic [31:0] dm_wdata,        // store data, already in its byte lanes
    output logic [3:0]  dm_be,
    input  logic        dm_gnt,          // 0: the tile cannot take this access this cycle
    input  logic        dm_fault,        // nothing answers at dm_addr: access fault
    input  logic        dm_halt,         // this write ends the run (sim-control exit)
    output logic        dm_halt_fire,    // the exit write executes at this edge (core halts)
    input  logic        dm_rvalid,
    input  logic [31:0] dm_rdata,        // whole word; the core picks the lanes
    input  logic        dm_rerr,         // the external port answered "error": access fault

    output logic        halted,
    output logic [31:0] trap_cause,
    output logic [31:0] trap_pc,
    output logic [31:0] trap_tval,
    output logic [63:0] instret,
    output logic [31:0] pc               // oldest instruction not yet executed
);
  // ---------------------------------------------------------------------------------------------
  // mcause codes
  localparam logic [31:0] CAUSE_FETCH_MISALIGNED = 32'd0;
  localparam logic [31:0] CAUSE_FETCH_FAULT = 32'd1;
  localparam logic [31:0] CAUSE_ILLEGAL = 32'd2;
  localparam logic [31:0] CAUSE_BREAKPOINT = 32'd3;
  localparam logic [31:0] CAUSE_LOAD_MISALIGNED = 32'd4;
  localparam logic [31:0] CAUSE_LOAD_FAULT = 32'd5;
  localparam logic [31:0] CAUSE_STORE_MISALIGNED = 32'd6;
  localparam logic [31:0] CAUSE_STORE_FAULT = 32'd7;
  localparam logic [31:0] CAUSE_ECALL_M = 32'd11;

  localparam logic [6:0] OP_LUI = 7'b0110111;
  localparam logic [6:0] OP_AUIPC = 7'b0010111;
  localparam logic [6:0] OP_JAL = 7'b1101111;
  localparam logic [6:0] OP_JALR = 7'b1100111;
  localparam logic [6:0] OP_BRANCH = 7'b1100011;
  localparam logic [6:0] OP_LOAD = 7'b0000011;
  localparam logic [6:0] OP_STORE = 7'b0100011;
  localparam logic [6:0] OP_IMM = 7'b0010011;
  localparam logic [6:0] OP_REG = 7'b0110011;
  localparam logic [6:0] OP_FENCE = 7'b0001111;
  localparam logic [6:0] OP_SYSTEM = 7'b1110011;

  // ---------------------------------------------------------------------------------------------
  // State
  logic [31:0] f_pc;       // next address to fetch
  logic [7:0]  f_hold;     // remaining no-fetch cycles after a redirect (branch_penalty - 1)

  logic        d_valid;    // EX holds an instruction (its word is if_rdata)
  logic [31:0] d_pc;
  logic [7:0]  div_cnt;    // cycles the DIV/REM in EX has already spent

  logic        m_valid;
  logic        m_mem;      // waits for a data-port response
  logic        m_load;
  logic        m_wen;
  logic [4:0]  m_rd;
  logic [2:0]  m_funct3;
  logic [31:0] m_result;
  logic [31:0] m_addr;
  logic [31:0] m_pc;

  logic [31:0] rf[32];     // rf[0] is never written nor read
  logic [63:0] cycle_q;
  logic [63:0] instret_q;

  logic        halted_q;
  logic [31:0] cause_q, tpc_q, tval_q;

  // ---------------------------------------------------------------------------------------------
  // M stage: completion and the value it forwards
  logic m_done, m_stall, m_trap;
  logic [31:0] m_lane, m_wb;
  always_comb begin
    m_done  = m_valid && (!m_mem || dm_rvalid);
    m_stall = m_valid && m_mem && !dm_rvalid;
    m_trap  = m_done && m_mem && dm_rerr;
    m_lane  = dm_rdata >> {m_addr[1:0], 3'b000};
    if (!m_load) m_wb = m_result;
    else begin
      case (m_funct3)
        3'd0:    m_wb = {{24{m_lane[7]}}, m_lane[7:0]};
        3'd1:    m_wb = {{16{m_lane[15]}}, m_lane[15:0]};
        3'd4:    m_wb = {24'b0, m_lane[7:0]};
        3'd5:    m_wb = {16'b0, m_lane[15:0]};
        default: m_wb = m_lane;
      endcase
    end
  end

  // ---------------------------------------------------------------------------------------------
  // EX stage: decode
  logic [31:0] ins;
  logic [6:0] opcode;
  logic [4:0] rd, rs1, rs2;
  logic [2:0] f3;
  logic [6:0] f7;
  logic [31:0] imm_i, imm_s, imm_b, imm_u, imm_j;
  assign ins    = if_rdata;
  assign opcode = ins[6:0];
  assign rd     = ins[11:7];
  assign f3     = ins[14:12];
  assign rs1    = ins[19:15];
  assign rs2    = ins[24:20];
  assign f7     = ins[31:25];
  assign imm_i  = {{20{ins[31]}}, ins[31:20]};
  assign imm_s  = {{20{ins[31]}}, ins[31:25], ins[11:7]};
  assign imm_b  = {{19{ins[31]}}, ins[31], ins[7], ins[30:25], ins[11:8], 1'b0};
  assign imm_u  = {ins[31:12], 12'b0};
  assign imm_j  = {{11{ins[31]}}, ins[31], ins[19:12], ins[20], ins[30:21], 1'b0};

  // Register read with forwarding from M.
  logic [31:0] a, b;
  always_comb begin
    if (rs1 == 5'd0) a = 32'd0;
    else if (m_valid && m_wen && m_rd == rs1) a = m_wb;
    else a = rf[rs1];
    if (rs2 == 5'd0) b = 32'd0;
    else if (m_valid && m_wen && m_rd == rs2) b = m_wb;
    else b = rf[rs2];
  end

  // Execute.
  logic        illegal, wen, is_load, is_store, is_div, is_ecall, is_ebreak, taken;
  logic [31:0] result, target, maddr;
  logic [63:0] prod;
  always_comb begin
    prod      = 64'd0;
    illegal   = 1'b0;
    wen       = 1'b0;
    is_load   = 1'b0;
    is_store  = 1'b0;
    is_div    = 1'b0;
    is_ecall  = 1'b0;
    is_ebreak = 1'b0;
    taken     = 1'b0;
    result    = 32'd0;
    target    = d_pc + imm_b;
    maddr     = a + imm_i;
    case (opcode)
      OP_LUI: begin
        wen    = 1'b1;
        result = imm_u;
      end
      OP_AUIPC: begin
        wen    = 1'b1;
        result = d_pc + imm_u;
      end
      OP_JAL: begin
        wen    = 1'b1;
        result = d_pc + 32'd4;
        taken  = 1'b1;
        target = d_pc + imm_j;
      end
      OP_JALR: begin
        wen     = 1'b1;
        result  = d_pc + 32'd4;
        taken   = 1'b1;
        target  = (a + imm_i) & ~32'd1;
        illegal = f3 != 3'd0;
      end
      OP_BRANCH: begin
        case (f3)
          3'd0: taken = a == b;
          3'd1: taken = a != b;
          3'd4: taken = $signed(a) < $signed(b);
          3'd5: taken = $signed(a) >= $signed(b);
          3'd6: taken = a < b;
          3'd7: taken = a >= b;
          default: illegal = 1'b1;
        endcase
      end
      OP_LOAD: begin
        wen     = 1'b1;
        is_load = 1'b1;
        illegal = f3 == 3'd3 || f3 == 3'd6 || f3 == 3'd7;
      end
      OP_STORE: begin
        is_store = 1'b1;
        maddr    = a + imm_s;
        illegal  = f3 > 3'd2;
      end
      OP_IMM: begin
        wen = 1'b1;
        case (f3)
          3'd0: result = a + imm_i;
          3'd2: result = {31'b0, $signed(a) < $signed(imm_i)};
          3'd3: result = {31'b0, a < imm_i};
          3'd4: result = a ^ imm_i;
          3'd6: result = a | imm_i;
          3'd7: result = a & imm_i;
          3'd1: begin
            result  = a << ins[24:20];
            illegal = f7 != 7'b0000000;
          end
          default: begin  // 3'd5
            if (f7 == 7'b0000000) result = a >> ins[24:20];
            else if (f7 == 7'b0100000) result = $signed(a) >>> ins[24:20];
            else illegal = 1'b1;
          end
        endcase
      end
      OP_REG: begin
        wen = 1'b1;
        if (f7 == 7'b0000001) begin
          case (f3)
            3'd0: begin  // mul
              prod   = {32'b0, a} * {32'b0, b};
              result = prod[31:0];
            end
            3'd1: begin  // mulh
              prod   = $signed({{32{a[31]}}, a}) * $signed({{32{b[31]}}, b});
              result = prod[63:32];
            end
            3'd2: begin  // mulhsu
              prod   = $signed({{32{a[31]}}, a}) * $signed({32'b0, b});
              result = prod[63:32];
            end
            3'd3: begin  // mulhu
              prod   = {32'b0, a} * {32'b0, b};
              result = prod[63:32];
            end
            3'd4: begin  // div
              is_div = 1'b1;
              if (b == 32'd0) result = 32'hFFFF_FFFF;
              else if (a == 32'h8000_0000 && b == 32'hFFFF_FFFF) result = 32'h8000_0000;
              else result = $signed(a) / $signed(b);
            end
            3'd5: begin  // divu
              is_div = 1'b1;
              if (b == 32'd0) result = 32'hFFFF_FFFF;
              else result = a / b;
            end
            3'd6: begin  // rem
              is_div = 1'b1;
              if (b == 32'd0) result = a;
              else if (a == 32'h8000_0000 && b == 32'hFFFF_FFFF) result = 32'd0;
              else result = $signed(a) % $signed(b);
            end
            default: begin  // remu
              is_div = 1'b1;
              if (b == 32'd0) result = a;
              else result = a % b;
            end
          endcase
        end else if (f7 == 7'b0000000) begin
          case (f3)
            3'd0: result = a + b;
            3'd1: result = a << b[4:0];
            3'd2: result = {31'b0, $signed(a) < $signed(b)};
            3'd3: result = {31'b0, a < b};
            3'd4: result = a ^ b;
            3'd5: result = a >> b[4:0];
            3'd6: result = a | b;
            default: result = a & b;
          endcase
        end else if (f7 == 7'b0100000 && f3 == 3'd0) begin
          result = a - b;
        end else if (f7 == 7'b0100000 && f3 == 3'd5) begin
          result = $signed(a) >>> b[4:0];
        end else begin
          illegal = 1'b1;
        end
      end
      OP_FENCE: begin
        illegal = f3 > 3'd1;  // fence and fence.i execute as no-ops
      end
      OP_SYSTEM: begin
        if (f3 == 3'd0) begin
          if (ins == 32'h0000_0073) is_ecall = 1'b1;
          else if (ins == 32'h0010_0073) is_ebreak = 1'b1;
          else illegal = 1'b1;
        end else if (f3 == 3'd4) begin
          illegal = 1'b1;
        end else begin
          // csrrw/csrrwi always write; csrrs/csrrc(i) write unless rs1/uimm is 0. Every CSR this
          // core has is read-only, so any write is illegal.
          wen = 1'b1;
          if (f3[1:0] == 2'b01 || rs1 != 5'd0) illegal = 1'b1;
          case (ins[31:20])
            12'hB00, 12'hC00: result = cycle_q[31:0];
            12'hB80, 12'hC80: result = cycle_q[63:32];
            12'hB02, 12'hC02: result = instret_q[31:0] + {31'b0, m_done};
            12'hB82, 12'hC82: result = instret_q[63:32] + {31'b0, m_done && instret_q[31:0] == 32'hFFFF_FFFF};
            12'hC01: result = wall_clock[31:0];
            12'hC81: result = wall_clock[63:32];
            12'hF14: result = hartid;
            default: illegal = 1'b1;
          endcase
        end
      end
      default: illegal = 1'b1;
    endcase
  end

  // Memory access shape and alignment.
  logic is_mem, mem_misaligned;
  always_comb begin
    is_mem = is_load || is_store;
    case (f3[1:0])
      2'd0: mem_misaligned = 1'b0;
      2'd1: mem_misaligned = maddr[0];
      default: mem_misaligned = maddr[1:0] != 2'b00;
    endcase
    dm_write = is_store;
    dm_addr  = maddr;
    case (f3[1:0])
      2'd0: begin
        dm_wdata = {4{b[7:0]}};
        dm_be    = 4'b0001 << maddr[1:0];
      end
      2'd1: begin
        dm_wdata = {2{b[15:0]}};
        dm_be    = maddr[1] ? 4'b1100 : 4'b0011;
      end
      default: begin
        dm_wdata = b;
        dm_be    = 4'b1111;
      end
    endcase
  end

  // Traps, in RISC-V priority order.
  logic        ex_exc;
  logic [31:0] ex_cause, ex_tval;
  always_comb begin
    ex_exc   = 1'b1;
    ex_cause = 32'd0;
    ex_tval  = 32'd0;
    if (if_fault) begin
      ex_cause = d_pc[1:0] != 2'b00 ? CAUSE_FETCH_MISALIGNED : CAUSE_FETCH_FAULT;
      ex_tval  = d_pc;
    end else if (illegal) begin
      ex_cause = CAUSE_ILLEGAL;
      ex_tval  = ins;
    end else if (is_ecall) begin
      ex_cause = CAUSE_ECALL_M;
    end else if (is_ebreak) begin
      ex_cause = CAUSE_BREAKPOINT;
      ex_tval  = d_pc;
    end else if (taken && target[1]) begin
      ex_cause = CAUSE_FETCH_MISALIGNED;
      ex_tval  = target;
    end else if (is_mem && mem_misaligned) begin
      ex_cause = is_store ? CAUSE_STORE_MISALIGNED : CAUSE_LOAD_MISALIGNED;
      ex_tval  = maddr;
    end else if (is_mem && dm_fault) begin
      ex_cause = is_store ? CAUSE_STORE_FAULT : CAUSE_LOAD_FAULT;
      ex_tval  = maddr;
    end else begin
      ex_exc = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Pipeline control
  logic run, ex_hold, adv, ex_fire, ex_trap, ex_exit, redirect, fetch_target;
  always_comb begin
    run      = !rst && !halted_q;
    ex_hold  = d_valid && !ex_exc &&
               ((is_div && div_cnt + 8'd1 < div_latency) || (is_mem && !dm_gnt));
    adv      = run && !m_stall && !m_trap && !ex_hold;
    ex_fire  = adv && d_valid;
    ex_trap  = ex_fire && ex_exc;
    ex_exit  = ex_fire && !ex_exc && is_store && dm_halt;
    redirect = ex_fire && !ex_exc && taken;
    fetch_target = redirect && branch_penalty == 8'd0;
    dm_fire  = ex_fire && !ex_exc && is_mem && !dm_halt;
    dm_halt_fire = ex_exit;
    if_addr  = fetch_target ? target : f_pc;
    if_req   = adv && (redirect ? fetch_target : f_hold == 8'd0);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      f_pc      <= reset_pc;
      f_hold    <= 8'd0;
      d_valid   <= 1'b0;
      d_pc      <= reset_pc;
      div_cnt   <= 8'd0;
      m_valid   <= 1'b0;
      cycle_q   <= 64'd0;
      instret_q <= 64'd0;
      halted_q  <= 1'b0;
      cause_q   <= 32'd0;
      tpc_q     <= 32'd0;
      tval_q    <= 32'd0;
    end else begin
      cycle_q <= cycle_q + 64'd1;
      if (run) begin
        // M: retire or trap.
        if (m_trap) begin
          halted_q <= 1'b1;
          cause_q  <= m_load ? CAUSE_LOAD_FAULT : CAUSE_STORE_FAULT;
          tpc_q    <= m_pc;
          tval_q   <= m_addr;
        end else begin
          if (m_done && m_wen && m_rd != 5'd0) rf[m_rd] <= m_wb;
          instret_q <= instret_q + {63'd0, m_done} + {63'd0, ex_exit};
        end

        // EX -> M.
        if (ex_trap) begin
          halted_q <= 1'b1;
          cause_q  <= ex_cause;
          tpc_q    <= d_pc;
          tval_q   <= ex_tval;
        end else if (ex_exit) begin
          halted_q <= 1'b1;
          tpc_q    <= d_pc;
        end
        if (ex_fire && !ex_exc && !ex_exit) begin
          m_valid  <= 1'b1;
          m_mem    <= is_mem;
          m_load   <= is_load;
          m_wen    <= wen && rd != 5'd0;
          m_rd     <= rd;
          m_funct3 <= f3;
          m_result <= result;
          m_addr   <= maddr;
          m_pc     <= d_pc;
        end else if (m_done) begin
          m_valid <= 1'b0;
        end

        // DIV/REM occupancy.
        if (d_valid && is_div && !m_stall && !m_trap) div_cnt <= ex_hold ? div_cnt + 8'd1 : 8'd0;

        // F -> EX.
        if (adv) begin
          if (redirect && !fetch_target) begin
            d_valid <= 1'b0;
            f_pc    <= target;
            f_hold  <= branch_penalty - 8'd1;
          end else if (!redirect && f_hold != 8'd0) begin
            d_valid <= 1'b0;
            f_hold  <= f_hold - 8'd1;
          end else begin
            d_valid <= 1'b1;
            d_pc    <= if_addr;
            f_pc    <= if_addr + 32'd4;
          end
        end
      end
    end
  end

  assign halted     = halted_q;
  assign trap_cause = cause_q;
  assign trap_pc    = tpc_q;
  assign trap_tval  = tval_q;
  assign instret    = instret_q;
  assign pc         = d_valid ? d_pc : f_pc;
endmodule
