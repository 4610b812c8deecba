// erisc_tile: one Ethernet RISC-V tile, the Verilated top. The core (rv32im_core) plus:
//
//   L1            [0, l1_size)                  storage in C++, reached through DPI-C (sync SRAM)
//   local data RAM [LDM_BASE, +ldm_size)        SV array (largest arch: LDM_MAX_BYTES)
//   RISC debug/control registers                soft reset, ERISC0/1 reset PC, wall clock
//   sim-control   [SIMCTRL_BASE, +SIMCTRL_SIZE) console character and exit (not silicon)
//   external MMIO everything else from CORE_LOCAL_BASE up: a request port answered by C++
//   anything else                               access fault
//
// All addresses come from tile_map_pkg, generated from hal/arch_map.h at build time. Timing
// knobs are run-time inputs so the C++ harness sets them from sim::CoreTiming.
module erisc_tile
  import tile_map_pkg::*;
(
    input  logic        clk,
    input  logic        rst,               // power-on reset (synchronous)

    // Configuration, constant while running.
    input  logic [63:0] l1_handle,         // opaque C++ pointer handed back to the DPI calls
    input  logic [31:0] l1_size,           // bytes, multiple of 4
    input  logic [31:0] ldm_size,          // bytes, multiple of 4, <= LDM_MAX_BYTES
    input  logic [31:0] hartid,
    input  logic [7:0]  l1_load_latency,   // >= 1
    input  logic [7:0]  l1_store_interval, // >= 1
    input  logic [7:0]  ldm_load_latency,  // >= 1 (also used for the tile's register block)
    input  logic [7:0]  div_latency,       // >= 1
    input  logic [7:0]  branch_penalty,    // >= 0

    // NOC-side register port: what a NOC read/write of a tile register does. Sampled at the
    // clock edge while ext_valid is high; the answer is on ext_rdata/ext_error after that edge.
    input  logic        ext_valid,
    input  logic        ext_write,
    input  logic [31:0] ext_addr,
    input  logic [31:0] ext_wdata,
    output logic [31:0] ext_rdata,
    output logic        ext_error,

    // External MMIO port (core side, to the C++ NOC/Ethernet/stream models). A request is raised
    // (mmio_req_valid) after the edge the core issued it; C++ answers by raising mmio_rsp_valid
    // with rdata/err, which the core uses in that same cycle. The edge that consumes the answer
    // drops mmio_req_valid (unless a new request is raised at it) and pulses mmio_ack, telling
    // C++ to drop mmio_rsp_valid. addr is word aligned; be marks the byte lanes.
    output logic        mmio_req_valid,
    output logic        mmio_req_write,
    output logic [31:0] mmio_req_addr,
    output logic [31:0] mmio_req_wdata,
    output logic [3:0]  mmio_req_be,
    output logic        mmio_ack,
    input  logic        mmio_rsp_valid,
    input  logic [31:0] mmio_rsp_rdata,
    input  logic        mmio_rsp_err,

    // Sim-control console: one character per cycle with console_valid.
    output logic        console_valid,
    output logic [7:0]  console_char,

    // Status.
    output logic        attn,              // something for C++ to look at after this edge
    output logic        core_in_reset,
    output logic        halted,            // trapped or exited
    output logic        exited,
    output logic [31:0] exit_code,
    output logic [31:0] trap_cause,
    output logic [31:0] trap_pc,
    output logic [31:0] trap_tval,
    output logic [63:0] instret,
    output logic [31:0] pc,
    output logic [63:0] wall_clock
);
  import "DPI-C" function int unsigned l1_read32(longint unsigned handle, int unsigned word_index);
  import "DPI-C" function void l1_write32(longint unsigned handle, int unsigned word_index,
                                          int unsigned data, int unsigned byte_enable);

  localparam int LDM_WORDS = int'(LDM_MAX_BYTES / 4);
  localparam int LDM_AW = $clog2(LDM_WORDS);

  // ---------------------------------------------------------------------------------------------
  // Registers of the tile
  logic [31:0] soft_reset;
  logic [31:0] reset_pc0, reset_pc1;
  logic [63:0] wall;
  logic [31:0] wall_hi_at;
  logic        exited_q;
  logic [31:0] exit_code_q;
  logic [31:0] ldm[LDM_WORDS];

  logic core_rst;
  assign core_rst = rst || soft_reset[SOFT_RESET_ERISC0_BIT[4:0]];

  // ---------------------------------------------------------------------------------------------
  // Core
  logic        if_req, if_fault;
  logic [31:0] if_addr, if_rdata;
  logic        dm_fire, dm_halt_fire, dm_write, dm_gnt, dm_fault, dm_halt, dm_rvalid, dm_rerr;
  logic [31:0] dm_addr, dm_wdata, dm_rdata;
  logic [3:0]  dm_be;
  logic        core_halted;
  logic [63:0] core_instret;
  logic [31:0] core_pc;

  rv32im_core core (
      .clk,
      .rst(core_rst),
      .reset_pc(reset_pc0),
      .hartid,
      .wall_clock(wall),
      .div_latency,
      .branch_penalty,
      .if_req,
      .if_addr,
      .if_rdata,
      .if_fault,
      .dm_fire,
      .dm_write,
      .dm_addr,
      .dm_wdata,
      .dm_be,
      .dm_gnt,
      .dm_fault,
      .dm_halt,
      .dm_halt_fire,
      .dm_rvalid,
      .dm_rdata,
      .dm_rerr,
      .halted(core_halted),
      .trap_cause,
      .trap_pc,
      .trap_tval,
      .instret(core_instret),
      .pc(core_pc)
  );

  // ---------------------------------------------------------------------------------------------
  // Register block decode, shared by the core and the NOC-side port.
  typedef enum logic [2:0] {
    R_NONE, R_SOFT_RESET, R_RESET_PC0, R_RESET_PC1, R_WALL_LO, R_WALL_HI, R_WALL_HI_AT
  } reg_e;

  function automatic reg_e reg_decode(logic [31:2] word);
    case ({word, 2'b00})
      SOFT_RESET_REG:   return R_SOFT_RESET;
      ERISC0_RESET_PC:  return R_RESET_PC0;
      ERISC1_RESET_PC:  return R_RESET_PC1;
      WALL_CLOCK_LO:    return R_WALL_LO;
      WALL_CLOCK_HI:    return R_WALL_HI;
      WALL_CLOCK_HI_AT: return R_WALL_HI_AT;
      default:          return R_NONE;
    endcase
  endfunction

  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [3:0] be);
    return {be[3] ? data[31:24] : old[31:24], be[2] ? data[23:16] : old[23:16],
            be[1] ? data[15:8] : old[15:8], be[0] ? data[7:0] : old[7:0]};
  endfunction

  function automatic logic [31:0] reg_value(reg_e r);
    case (r)
      R_SOFT_RESET: return soft_reset;
      R_RESET_PC0:  return reset_pc0;
      R_RESET_PC1:  return reset_pc1;
      R_WALL_LO:    return wall[31:0];
      R_WALL_HI:    return wall[63:32];
      R_WALL_HI_AT: return wall_hi_at;
      default:      return 32'd0;
    endcase
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Core data-port decode (combinational on the address of the instruction in EX).
  logic sel_l1, sel_ldm, sel_sim, sel_ext;
  reg_e sel_reg;
  logic [31:0] ldm_off;
  logic [7:0] st_cnt;  // cycles until the next L1 store may issue
  always_comb begin
    ldm_off = dm_addr - LDM_BASE;
    sel_l1  = dm_addr < l1_size;
    sel_ldm = dm_addr >= LDM_BASE && ldm_off < ldm_size;
    sel_reg = reg_decode(dm_addr[31:2]);
    sel_sim = dm_addr >= SIMCTRL_BASE && dm_addr - SIMCTRL_BASE < SIMCTRL_SIZE &&
              ({dm_addr[31:2], 2'b00} == SIMCTRL_CONSOLE || {dm_addr[31:2], 2'b00} == SIMCTRL_EXIT);
    sel_ext = dm_addr >= CORE_LOCAL_BASE && !sel_ldm && sel_reg == R_NONE;
    dm_fault = !(sel_l1 || sel_ldm || sel_sim || sel_ext || sel_reg != R_NONE);
    dm_halt = dm_write && sel_sim && {dm_addr[31:2], 2'b00} == SIMCTRL_EXIT;
    dm_gnt = !(dm_write && sel_l1 && st_cnt != 8'd0);
  end

  // Response to the access in M.
  logic        rsp_pending, rsp_ext;
  logic [7:0]  rsp_cnt;
  logic [31:0] rsp_data;
  always_comb begin
    dm_rvalid = rsp_pending && (rsp_ext ? mmio_req_valid && mmio_rsp_valid : rsp_cnt == 8'd0);
    dm_rdata  = rsp_ext ? mmio_rsp_rdata : rsp_data;
    dm_rerr   = rsp_ext && mmio_rsp_err;
  end

  // ---------------------------------------------------------------------------------------------
  // Sequential: fetch port, data port, registers, sim-control, NOC-side port.
  always_ff @(posedge clk) begin
    // Instruction fetch: a synchronous read of L1.
    if (if_req) begin
      if (if_addr < l1_size && if_addr[1:0] == 2'b00) begin
        if_rdata <= l1_read32(l1_handle, if_addr >> 2);
        if_fault <= 1'b0;
      end else begin
        if_rdata <= 32'd0;
        if_fault <= 1'b1;
      end
    end

    console_valid <= 1'b0;
    mmio_ack      <= 1'b0;

    if (rst) begin
      soft_reset <= SOFT_RESET_INIT;
      reset_pc0  <= 32'd0;
      reset_pc1  <= 32'd0;
      wall       <= 64'd0;
      wall_hi_at <= 32'd0;
      ext_rdata  <= 32'd0;
      ext_error  <= 1'b0;
    end else begin
      wall <= wall + 64'd1;
    end

    if (core_rst) begin
      rsp_pending    <= 1'b0;
      rsp_ext        <= 1'b0;
      rsp_cnt        <= 8'd0;
      st_cnt         <= 8'd0;
      exited_q       <= 1'b0;
      exit_code_q    <= 32'd0;
      mmio_ack       <= mmio_req_valid;
      mmio_req_valid <= 1'b0;
    end else begin
      if (st_cnt != 8'd0) st_cnt <= st_cnt - 8'd1;
      if (rsp_cnt != 8'd0) rsp_cnt <= rsp_cnt - 8'd1;
      if (dm_rvalid) rsp_pending <= 1'b0;
      if (mmio_req_valid && mmio_rsp_valid) begin
        mmio_req_valid <= 1'b0;
        mmio_ack       <= 1'b1;
      end

      if (dm_fire) begin
        rsp_pending <= 1'b1;
        rsp_ext     <= 1'b0;
        rsp_cnt     <= 8'd0;
        rsp_data    <= 32'd0;
        if (sel_l1) begin
          if (dm_write) begin
            l1_write32(l1_handle, dm_addr >> 2, dm_wdata, {28'd0, dm_be});
            st_cnt <= l1_store_interval - 8'd1;
          end else begin
            rsp_data <= l1_read32(l1_handle, dm_addr >> 2);
            rsp_cnt  <= l1_load_latency - 8'd1;
          end
        end else if (sel_ldm) begin
          if (dm_write) ldm[ldm_off[LDM_AW+1:2]] <= merge(ldm[ldm_off[LDM_AW+1:2]], dm_wdata, dm_be);
          else begin
            rsp_data <= ldm[ldm_off[LDM_AW+1:2]];
            rsp_cnt  <= ldm_load_latency - 8'd1;
          end
        end else if (sel_reg != R_NONE) begin
          if (dm_write) begin
            case (sel_reg)
              R_SOFT_RESET: soft_reset <= merge(soft_reset, dm_wdata, dm_be);
              R_RESET_PC0:  reset_pc0 <= merge(reset_pc0, dm_wdata, dm_be);
              R_RESET_PC1:  reset_pc1 <= merge(reset_pc1, dm_wdata, dm_be);
              default: ;  // the wall clock ignores writes
            endcase
          end else begin
            rsp_data <= reg_value(sel_reg);
            rsp_cnt  <= ldm_load_latency - 8'd1;
            if (sel_reg == R_WALL_LO) wall_hi_at <= wall[63:32];
          end
        end else if (sel_sim) begin
          if (dm_write && {dm_addr[31:2], 2'b00} == SIMCTRL_CONSOLE) begin
            console_valid <= 1'b1;
            console_char  <= dm_wdata[7:0];
          end
        end else begin  // sel_ext
          rsp_ext        <= 1'b1;
          mmio_req_valid <= 1'b1;
          mmio_req_write <= dm_write;
          mmio_req_addr  <= {dm_addr[31:2], 2'b00};
          mmio_req_wdata <= dm_wdata;
          mmio_req_be    <= dm_be;
        end
      end

      // Sim-control exit: the core halts at the same edge.
      if (dm_halt_fire) begin
        exited_q    <= 1'b1;
        exit_code_q <= merge(32'd0, dm_wdata, dm_be);  // the word as the store would leave it
      end
    end

    // NOC-side register port (last, so it wins over a core write to the same register).
    if (!rst && ext_valid) begin
      reg_e r;
      r = reg_decode(ext_addr[31:2]);
      ext_error <= r == R_NONE || ext_addr[1:0] != 2'b00;
      ext_rdata <= reg_value(r);
      if (ext_write && ext_addr[1:0] == 2'b00) begin
        case (r)
          R_SOFT_RESET: soft_reset <= ext_wdata;
          R_RESET_PC0:  reset_pc0 <= ext_wdata;
          R_RESET_PC1:  reset_pc1 <= ext_wdata;
          default: ;
        endcase
      end else if (r == R_WALL_LO) begin
        wall_hi_at <= wall[63:32];
      end
    end
  end

  // While the reset bit is set the core is frozen at once; its registers clear at the next edge.
  // The outputs show the reset view straight away.
  assign core_in_reset = core_rst;
  assign instret       = core_rst ? 64'd0 : core_instret;
  assign pc            = core_rst ? reset_pc0 : core_pc;
  assign halted        = core_halted && !core_rst;
  assign exited        = exited_q && !core_rst;
  assign exit_code     = exit_code_q;
  assign wall_clock    = wall;
  assign attn          = halted || console_valid || mmio_req_valid || mmio_ack;
endmodule
