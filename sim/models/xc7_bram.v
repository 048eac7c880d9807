// Behavioural simulation models of the xc7 block RAMs RAMB18E1 (18 kbit) and RAMB36E1 (36 kbit),
// written for winohdl's post-synthesis check: Yosys's xilinx/cells_sim.v declares both with their
// ports, parameters and timing (specify) but no behaviour, so their outputs are never driven (Z, X in
// Icarus; 0 in two-state Verilator, which made a mapped network compute with zeros for every block
// RAM read and still "simulate"). The check removes those two declarations from its copy of
// cells_sim.v and compiles these, with the same ports and parameters.
//
// Modelled (Xilinx UG473, "7 Series FPGAs Memory Resources"; the conventions of Yosys's
// xilinx/brams_xc6v_map.v and brams_defs.vh):
//   The array: 16,384 (RAMB36E1: 32,768) data bits and one parity bit per 8 of them; INIT_xx hold
//   the data bits in order (INIT_00[0] is bit 0), INITP_xx the parity bits. A port of width W
//   (1, 2, 4, 9, 18, 36; 72 only RAMB36E1 SDP) addresses word ADDR[13:lg] (RAMB36E1 ADDR[14:lg],
//   ADDR[15] is for cascades) with lg = 0, 1, 2, 3, 4, 5, 6: data bits [word * D +: D], D = W (W < 9)
//   or 8 * W / 9, on DI/DO[D-1:0], and parity bits [word * W / 9 +: W / 9] on DIP/DOP (W >= 9).
//   RAM_MODE "TDP": two ports, each with its clock, enable (ENARDEN, ENBWREN), byte write enables
//   (WEA, WEBWE: one per 9-bit byte of the word; WE[0] for W < 9), read and write widths.
//   RAM_MODE "SDP": port A reads, port B writes; a width of 36 (RAMB36E1: 72) uses both buses, the
//   low half on the A pins (DOADO, DIADI, ...) and the high half on the B pins, with WEBWE's 4 (8)
//   byte enables; a narrower SDP port uses its own bus as in TDP.
//   On a port's clock edge with its enable: the enabled bytes are written; the output latch takes
//   the addressed word: the old data (WRITE_MODE "READ_FIRST"), the new data where this port writes
//   it ("WRITE_FIRST") or stays as it was while the port writes ("NO_CHANGE"); RSTRAM (with the
//   enable) sets the latch to SRVAL instead of reading. A read of a word the other port writes at
//   the same edge gives the old data when the writing port is READ_FIRST and
//   RDADDR_COLLISION_HWCONFIG is "DELAYED_WRITE", otherwise X (UG473: invalid data; a design that
//   uses it fails the four-state check). Both ports are taken to share one clock (every winohdl
//   design does): the other port's write is the one its inputs describe at this edge.
//   DOx_REG 1: the output goes through a register that takes the latch on the port's clock edge
//   when REGCE, and SRVAL on RSTREG (RSTREG_PRIORITY "RSTREG": whatever REGCE; "REGCE": only with
//   it); a 36 (72)-bit SDP read uses port A's clock, REGCEAREGCE and RSTREGARSTREG for both halves.
//   INIT_A/B and SRVAL_A/B: the port's {parity, data} at its width (W >= 18: parity above the D data
//   bits), as Yosys writes them; an SDP read of 36 (72) bits: A the low half, B the high half.
//   IS_*_INVERTED: the pin inverted.
// Not modelled (an error at the start of the simulation names it, so a netlist that relies on it
// fails the check instead of passing): cascades (RAM_EXTENSION_A/B other than "NONE"), ECC, INIT_FILE,
// widths other than those above, different DOA_REG and DOB_REG on a 36 (72)-bit SDP read; the
// ECC and cascade outputs are 0. Writes by both ports to one word at the same edge are not flagged.

// The array and both ports, for either size: AW address bits of the 1-bit mode (14 or 15), BUS data
// bits on one port's pins (16 or 32).
module winohdl_xc7_bram #(
  parameter integer AW = 14,
  parameter integer BUS = 16,
  parameter [(1 << AW) - 1:0] INIT_BITS = 0,
  parameter [(1 << AW) / 8 - 1:0] INITP_BITS = 0,
  parameter RAM_MODE = "TDP",
  parameter integer READ_WIDTH_A = 0, READ_WIDTH_B = 0, WRITE_WIDTH_A = 0, WRITE_WIDTH_B = 0,
  parameter WRITE_MODE_A = "WRITE_FIRST", WRITE_MODE_B = "WRITE_FIRST",
  parameter integer DOA_REG = 0, DOB_REG = 0,
  parameter [71:0] INIT_A = 0, INIT_B = 0, SRVAL_A = 0, SRVAL_B = 0,
  parameter RSTREG_PRIORITY_A = "RSTREG", RSTREG_PRIORITY_B = "RSTREG",
  parameter RDADDR_COLLISION_HWCONFIG = "DELAYED_WRITE"
) (
  input clka, clkb, ena, enb, regcea, regceb, rstrama, rstramb, rstrega, rstregb,
  input [15:0] addra, addrb,
  input [31:0] dia, dib,
  input [3:0] dipa, dipb,
  input [7:0] wea, web,
  output [31:0] doa, dob,
  output [3:0] dopa, dopb
);
  localparam integer PB = BUS / 8;        // parity bits on one port's pins
  localparam integer WIDE = BUS * 9 / 4;  // the SDP width that takes both buses: 36 or 72
  localparam SDP = RAM_MODE == "SDP";
  localparam WIDE_RD = SDP && READ_WIDTH_A == WIDE;
  localparam WIDE_WR = SDP && WRITE_WIDTH_B == WIDE;
  // a port's read or write can see the other port's write at the same edge as old data
  localparam OLD_A = WRITE_MODE_A == "READ_FIRST" && RDADDR_COLLISION_HWCONFIG == "DELAYED_WRITE";
  localparam OLD_B = WRITE_MODE_B == "READ_FIRST" && RDADDR_COLLISION_HWCONFIG == "DELAYED_WRITE";

  reg md [0:(1 << AW) - 1];
  reg mp [0:(1 << AW) / 8 - 1];

  // a word inside this model: data bits in [63:0], parity bits in [71:64]
  function integer dbits(input integer w);
    dbits = w < 9 ? w : w / 9 * 8;
  endfunction

  function integer pbits(input integer w);
    pbits = w < 9 ? 0 : w / 9;
  endfunction

  function integer word(input integer w, input [15:0] addr);
    integer lg;
    begin
      lg = w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : w == 9 ? 3 : w == 18 ? 4 : w == 36 ? 5 : 6;
      word = (addr & ((1 << AW) - 1)) >> lg;
    end
  endfunction

  function valid_width(input integer w, input wide_ok);
    valid_width = w == 0 || w == 1 || w == 2 || w == 4 || w == 9 || w == 18 || w == 36 && (BUS == 32 || wide_ok)
                  || w == 72 && BUS == 32 && wide_ok;
  endfunction

  // a port's INIT or SRVAL value ({parity, data} at width w) as a word of this model
  function [71:0] unpack(input integer w, input [71:0] v);
    integer k;
    begin
      unpack = 72'd0;
      for (k = 0; k < dbits(w); k = k + 1) unpack[k] = v[k];
      for (k = 0; k < pbits(w); k = k + 1) unpack[64 + k] = v[dbits(w) + k];
    end
  endfunction

  // a 36 (72)-bit SDP read's value: lo on the A pins, hi on the B pins
  function [71:0] unpack_wide(input [71:0] lo, input [71:0] hi);
    reg [71:0] a, b;
    begin
      a = unpack(WIDE / 2, lo);
      b = unpack(WIDE / 2, hi);
      unpack_wide = {a[71:64] | (b[71:64] << PB), a[63:0] | (b[63:0] << BUS)};
    end
  endfunction

  localparam [71:0] INIT_QA = WIDE_RD ? unpack_wide(INIT_A, INIT_B) : unpack(READ_WIDTH_A, INIT_A);
  localparam [71:0] INIT_QB = unpack(READ_WIDTH_B, INIT_B);
  localparam [71:0] SRVAL_QA = WIDE_RD ? unpack_wide(SRVAL_A, SRVAL_B) : unpack(READ_WIDTH_A, SRVAL_A);
  localparam [71:0] SRVAL_QB = unpack(READ_WIDTH_B, SRVAL_B);

  reg [71:0] lat_a, lat_b, reg_a, reg_b;
  reg [255:0] chunk;
  integer i;
  initial begin
    if (RAM_MODE != "TDP" && RAM_MODE != "SDP") begin
      $display("ERROR: xc7 block RAM model: RAM_MODE %s", RAM_MODE); $finish(1);
    end
    if (!valid_width(READ_WIDTH_A, WIDE_RD) || !valid_width(WRITE_WIDTH_A, 0) || !valid_width(READ_WIDTH_B, 0)
        || !valid_width(WRITE_WIDTH_B, WIDE_WR)) begin
      $display("ERROR: xc7 block RAM model: port widths %0d %0d %0d %0d are not modelled", READ_WIDTH_A,
               WRITE_WIDTH_A, READ_WIDTH_B, WRITE_WIDTH_B); $finish(1);
    end
    if (SDP && (WRITE_WIDTH_A != 0 || READ_WIDTH_B != 0)) begin
      $display("ERROR: xc7 block RAM model: SDP reads on port A and writes on port B"); $finish(1);
    end
    if (WIDE_RD && DOA_REG != DOB_REG) begin
      $display("ERROR: xc7 block RAM model: DOA_REG and DOB_REG differ on a %0d-bit read", WIDE); $finish(1);
    end
    // 256 bits at a time: a bit select of the whole parameter costs Icarus its whole width
    for (i = 0; i < (1 << AW); i = i + 1) begin
      if (i % 256 == 0) chunk = INIT_BITS[i +: 256];
      md[i] = chunk[i % 256];
    end
    for (i = 0; i < (1 << AW) / 8; i = i + 1) begin
      if (i % 256 == 0) chunk = INITP_BITS[i +: 256];
      mp[i] = chunk[i % 256];
    end
    lat_a = INIT_QA; reg_a = INIT_QA;
    lat_b = INIT_QB; reg_b = INIT_QB;
  end

  // the word of width w at addr, as the array holds it before this edge's writes
  function [71:0] peek(input integer w, input [15:0] addr);
    integer k, a;
    begin
      peek = 72'd0;
      a = word(w, addr);
      for (k = 0; k < dbits(w); k = k + 1) peek[k] = md[a * dbits(w) + k];
      for (k = 0; k < pbits(w); k = k + 1) peek[64 + k] = mp[a * pbits(w) + k];
    end
  endfunction

  function writes(input integer w, input [7:0] we);
    writes = w != 0 && (w < 9 ? we[0] : |(we & ((1 << pbits(w)) - 1)));
  endfunction

  // the enabled bytes of data into the word of width w at addr (nonblocking: reads at this edge see
  // the old data)
  task poke(input integer w, input [15:0] addr, input [71:0] data, input [7:0] we);
    integer k, a;
    begin
      a = word(w, addr);
      for (k = 0; k < dbits(w); k = k + 1)
        if (we[w < 9 ? 0 : k / 8]) md[a * dbits(w) + k] <= data[k];
      for (k = 0; k < pbits(w); k = k + 1)
        if (we[k]) mp[a * pbits(w) + k] <= data[64 + k];
    end
  endtask

  // do the words (rw at ra) and (ww at wa) share a data bit?
  function overlap(input integer rw, input [15:0] ra, input integer ww, input [15:0] wa);
    integer r0, w0;
    begin
      r0 = word(rw, ra) * dbits(rw);
      w0 = word(ww, wa) * dbits(ww);
      overlap = r0 < w0 + dbits(ww) && w0 < r0 + dbits(rw);
    end
  endfunction

  // old, with the bits this port writes at this edge (ww at wa) replaced by the new ones
  function [71:0] through(input [71:0] old, input integer rw, input [15:0] ra, input integer ww, input [15:0] wa,
                          input [71:0] data, input [7:0] we);
    integer k, g;
    begin
      through = old;
      for (k = 0; k < dbits(rw); k = k + 1) begin
        g = word(rw, ra) * dbits(rw) + k - word(ww, wa) * dbits(ww);
        if (g >= 0 && g < dbits(ww) && we[ww < 9 ? 0 : g / 8]) through[k] = data[g];
      end
      for (k = 0; k < pbits(rw); k = k + 1) begin
        g = word(rw, ra) * pbits(rw) + k - word(ww, wa) * pbits(ww);
        if (g >= 0 && g < pbits(ww) && we[g]) through[64 + k] = data[64 + g];
      end
    end
  endfunction

  // what a port's output latch takes at its edge: its read, through its own write (WRITE_FIRST), X
  // where the other port writes the word at this edge and the hardware does not define the read
  function [71:0] read_port(input integer rw, input [15:0] ra, input own_writes, input integer ww,
                            input [15:0] wa, input [71:0] data, input [7:0] we, input write_first,
                            input other_writes, input integer ow, input [15:0] oa, input other_old);
    begin
      read_port = peek(rw, ra);
      if (own_writes && write_first) read_port = through(read_port, rw, ra, ww, wa, data, we);
      if (other_writes && !other_old && overlap(rw, ra, ow, oa)) read_port = 72'bx;
    end
  endfunction

  wire [71:0] wd_a = {4'd0, dipa, 32'd0, dia};
  wire [7:0] wide_p = {dipb[PB - 1:0], dipa[PB - 1:0]};
  wire [63:0] wide_d = {dib[BUS - 1:0], dia[BUS - 1:0]};
  wire [71:0] wd_b = WIDE_WR ? {wide_p, wide_d} : {4'd0, dipb, 32'd0, dib};
  wire wr_a = ena && writes(WRITE_WIDTH_A, wea);
  wire wr_b = enb && writes(WRITE_WIDTH_B, web);

  always @(posedge clka) begin
    if (DOA_REG != 0) begin  // the output register takes the latch as it was before this edge
      if (rstrega && (RSTREG_PRIORITY_A == "RSTREG" || regcea)) reg_a <= SRVAL_QA;
      else if (regcea) reg_a <= lat_a;
    end
    if (ena && READ_WIDTH_A != 0) begin
      if (rstrama) lat_a <= SRVAL_QA;
      else if (!(wr_a && WRITE_MODE_A == "NO_CHANGE"))
        lat_a <= read_port(READ_WIDTH_A, addra, wr_a, WRITE_WIDTH_A, addra, wd_a, wea, WRITE_MODE_A == "WRITE_FIRST",
                           wr_b, WRITE_WIDTH_B, addrb, OLD_B);
    end
    if (wr_a) poke(WRITE_WIDTH_A, addra, wd_a, wea);
  end

  always @(posedge clkb) begin
    if (DOB_REG != 0 && !WIDE_RD) begin
      if (rstregb && (RSTREG_PRIORITY_B == "RSTREG" || regceb)) reg_b <= SRVAL_QB;
      else if (regceb) reg_b <= lat_b;
    end
    if (enb && READ_WIDTH_B != 0) begin
      if (rstramb) lat_b <= SRVAL_QB;
      else if (!(wr_b && WRITE_MODE_B == "NO_CHANGE"))
        lat_b <= read_port(READ_WIDTH_B, addrb, wr_b, WRITE_WIDTH_B, addrb, wd_b, web, WRITE_MODE_B == "WRITE_FIRST",
                           wr_a, WRITE_WIDTH_A, addra, OLD_A);
    end
    if (wr_b) poke(WRITE_WIDTH_B, addrb, wd_b, web);
  end

  wire [71:0] qa = DOA_REG != 0 ? reg_a : lat_a;
  wire [71:0] qb = DOB_REG != 0 ? reg_b : lat_b;
  assign doa = qa[BUS - 1:0];
  assign dopa = qa[64 +: PB];
  assign dob = WIDE_RD ? qa[BUS +: BUS] : qb[BUS - 1:0];
  assign dopb = WIDE_RD ? qa[64 + PB +: PB] : qb[64 +: PB];
endmodule

module RAMB18E1 (
  input CLKARDCLK, CLKBWRCLK, ENARDEN, ENBWREN, REGCEAREGCE, REGCEB, RSTRAMARSTRAM, RSTRAMB, RSTREGARSTREG, RSTREGB,
  input [13:0] ADDRARDADDR, ADDRBWRADDR,
  input [15:0] DIADI, DIBDI,
  input [1:0] DIPADIP, DIPBDIP,
  input [1:0] WEA,
  input [3:0] WEBWE,
  output [15:0] DOADO, DOBDO,
  output [1:0] DOPADOP, DOPBDOP
);
  parameter integer DOA_REG = 0;
  parameter integer DOB_REG = 0;
  parameter EN_ECC_READ = "FALSE";
  parameter EN_ECC_WRITE = "FALSE";
  parameter [17:0] INIT_A = 18'h0;
  parameter [17:0] INIT_B = 18'h0;
  parameter INIT_FILE = "NONE";
  parameter RAM_EXTENSION_A = "NONE";
  parameter RAM_EXTENSION_B = "NONE";
  parameter RAM_MODE = "TDP";
  parameter RDADDR_COLLISION_HWCONFIG = "DELAYED_WRITE";
  parameter integer READ_WIDTH_A = 0;
  parameter integer READ_WIDTH_B = 0;
  parameter RSTREG_PRIORITY_A = "RSTREG";
  parameter RSTREG_PRIORITY_B = "RSTREG";
  parameter SIM_COLLISION_CHECK = "ALL";
  parameter SIM_DEVICE = "VIRTEX6";
  parameter [17:0] SRVAL_A = 18'h0;
  parameter [17:0] SRVAL_B = 18'h0;
  parameter WRITE_MODE_A = "WRITE_FIRST";
  parameter WRITE_MODE_B = "WRITE_FIRST";
  parameter integer WRITE_WIDTH_A = 0;
  parameter integer WRITE_WIDTH_B = 0;
  parameter IS_CLKARDCLK_INVERTED = 1'b0;
  parameter IS_CLKBWRCLK_INVERTED = 1'b0;
  parameter IS_ENARDEN_INVERTED = 1'b0;
  parameter IS_ENBWREN_INVERTED = 1'b0;
  parameter IS_RSTRAMARSTRAM_INVERTED = 1'b0;
  parameter IS_RSTRAMB_INVERTED = 1'b0;
  parameter IS_RSTREGARSTREG_INVERTED = 1'b0;
  parameter IS_RSTREGB_INVERTED = 1'b0;
  parameter [255:0] INIT_00 = 256'h0, INIT_01 = 256'h0, INIT_02 = 256'h0, INIT_03 = 256'h0;
  parameter [255:0] INIT_04 = 256'h0, INIT_05 = 256'h0, INIT_06 = 256'h0, INIT_07 = 256'h0;
  parameter [255:0] INIT_08 = 256'h0, INIT_09 = 256'h0, INIT_0A = 256'h0, INIT_0B = 256'h0;
  parameter [255:0] INIT_0C = 256'h0, INIT_0D = 256'h0, INIT_0E = 256'h0, INIT_0F = 256'h0;
  parameter [255:0] INIT_10 = 256'h0, INIT_11 = 256'h0, INIT_12 = 256'h0, INIT_13 = 256'h0;
  parameter [255:0] INIT_14 = 256'h0, INIT_15 = 256'h0, INIT_16 = 256'h0, INIT_17 = 256'h0;
  parameter [255:0] INIT_18 = 256'h0, INIT_19 = 256'h0, INIT_1A = 256'h0, INIT_1B = 256'h0;
  parameter [255:0] INIT_1C = 256'h0, INIT_1D = 256'h0, INIT_1E = 256'h0, INIT_1F = 256'h0;
  parameter [255:0] INIT_20 = 256'h0, INIT_21 = 256'h0, INIT_22 = 256'h0, INIT_23 = 256'h0;
  parameter [255:0] INIT_24 = 256'h0, INIT_25 = 256'h0, INIT_26 = 256'h0, INIT_27 = 256'h0;
  parameter [255:0] INIT_28 = 256'h0, INIT_29 = 256'h0, INIT_2A = 256'h0, INIT_2B = 256'h0;
  parameter [255:0] INIT_2C = 256'h0, INIT_2D = 256'h0, INIT_2E = 256'h0, INIT_2F = 256'h0;
  parameter [255:0] INIT_30 = 256'h0, INIT_31 = 256'h0, INIT_32 = 256'h0, INIT_33 = 256'h0;
  parameter [255:0] INIT_34 = 256'h0, INIT_35 = 256'h0, INIT_36 = 256'h0, INIT_37 = 256'h0;
  parameter [255:0] INIT_38 = 256'h0, INIT_39 = 256'h0, INIT_3A = 256'h0, INIT_3B = 256'h0;
  parameter [255:0] INIT_3C = 256'h0, INIT_3D = 256'h0, INIT_3E = 256'h0, INIT_3F = 256'h0;
  parameter [255:0] INITP_00 = 256'h0, INITP_01 = 256'h0, INITP_02 = 256'h0, INITP_03 = 256'h0;
  parameter [255:0] INITP_04 = 256'h0, INITP_05 = 256'h0, INITP_06 = 256'h0, INITP_07 = 256'h0;
  localparam [16383:0] INIT_BITS = {INIT_3F, INIT_3E, INIT_3D, INIT_3C, INIT_3B, INIT_3A, INIT_39, INIT_38, INIT_37, INIT_36, INIT_35, INIT_34,
    INIT_33, INIT_32, INIT_31, INIT_30, INIT_2F, INIT_2E, INIT_2D, INIT_2C, INIT_2B, INIT_2A, INIT_29, INIT_28,
    INIT_27, INIT_26, INIT_25, INIT_24, INIT_23, INIT_22, INIT_21, INIT_20, INIT_1F, INIT_1E, INIT_1D, INIT_1C,
    INIT_1B, INIT_1A, INIT_19, INIT_18, INIT_17, INIT_16, INIT_15, INIT_14, INIT_13, INIT_12, INIT_11, INIT_10,
    INIT_0F, INIT_0E, INIT_0D, INIT_0C, INIT_0B, INIT_0A, INIT_09, INIT_08, INIT_07, INIT_06, INIT_05, INIT_04,
    INIT_03, INIT_02, INIT_01, INIT_00};
  localparam [2047:0] INITP_BITS = {INITP_07, INITP_06, INITP_05, INITP_04, INITP_03, INITP_02, INITP_01, INITP_00};
  initial begin
    if (RAM_EXTENSION_A != "NONE" || RAM_EXTENSION_B != "NONE" || EN_ECC_READ != "FALSE" || EN_ECC_WRITE != "FALSE"
        || INIT_FILE != "NONE") begin
      $display("ERROR: xc7 block RAM model: cascades, ECC and INIT_FILE are not modelled"); $finish(1);
    end
  end
  wire [31:0] doa, dob;
  wire [3:0] dopa, dopb;
  winohdl_xc7_bram #(
    .AW(14), .BUS(16), .INIT_BITS(INIT_BITS), .INITP_BITS(INITP_BITS), .RAM_MODE(RAM_MODE),
    .READ_WIDTH_A(READ_WIDTH_A), .READ_WIDTH_B(READ_WIDTH_B), .WRITE_WIDTH_A(WRITE_WIDTH_A),
    .WRITE_WIDTH_B(WRITE_WIDTH_B), .WRITE_MODE_A(WRITE_MODE_A), .WRITE_MODE_B(WRITE_MODE_B), .DOA_REG(DOA_REG),
    .DOB_REG(DOB_REG), .INIT_A(INIT_A), .INIT_B(INIT_B), .SRVAL_A(SRVAL_A), .SRVAL_B(SRVAL_B),
    .RSTREG_PRIORITY_A(RSTREG_PRIORITY_A), .RSTREG_PRIORITY_B(RSTREG_PRIORITY_B),
    .RDADDR_COLLISION_HWCONFIG(RDADDR_COLLISION_HWCONFIG)
  ) core (
    .clka(CLKARDCLK ^ IS_CLKARDCLK_INVERTED), .clkb(CLKBWRCLK ^ IS_CLKBWRCLK_INVERTED),
    .ena(ENARDEN ^ IS_ENARDEN_INVERTED), .enb(ENBWREN ^ IS_ENBWREN_INVERTED),
    .regcea(REGCEAREGCE), .regceb(REGCEB),
    .rstrama(RSTRAMARSTRAM ^ IS_RSTRAMARSTRAM_INVERTED), .rstramb(RSTRAMB ^ IS_RSTRAMB_INVERTED),
    .rstrega(RSTREGARSTREG ^ IS_RSTREGARSTREG_INVERTED), .rstregb(RSTREGB ^ IS_RSTREGB_INVERTED),
    .addra({2'd0, ADDRARDADDR}), .addrb({2'd0, ADDRBWRADDR}),
    .dia({16'd0, DIADI}), .dib({16'd0, DIBDI}),
    .dipa({2'd0, DIPADIP}), .dipb({2'd0, DIPBDIP}),
    .wea({6'd0, WEA}), .web({4'd0, WEBWE}),
    .doa(doa), .dob(dob), .dopa(dopa), .dopb(dopb)
  );
  assign DOADO = doa[15:0];
  assign DOBDO = dob[15:0];
  assign DOPADOP = dopa[1:0];
  assign DOPBDOP = dopb[1:0];
endmodule

module RAMB36E1 (
  output CASCADEOUTA, CASCADEOUTB,
  output [31:0] DOADO, DOBDO,
  output [3:0] DOPADOP, DOPBDOP,
  output [7:0] ECCPARITY,
  output [8:0] RDADDRECC,
  output SBITERR, DBITERR,
  input ENARDEN, CLKARDCLK, RSTRAMARSTRAM, RSTREGARSTREG, CASCADEINA, REGCEAREGCE,
  input ENBWREN, CLKBWRCLK, RSTRAMB, RSTREGB, CASCADEINB, REGCEB, INJECTDBITERR, INJECTSBITERR,
  input [15:0] ADDRARDADDR, ADDRBWRADDR,
  input [31:0] DIADI, DIBDI,
  input [3:0] DIPADIP, DIPBDIP,
  input [3:0] WEA,
  input [7:0] WEBWE
);
  parameter integer DOA_REG = 0;
  parameter integer DOB_REG = 0;
  parameter EN_ECC_READ = "FALSE";
  parameter EN_ECC_WRITE = "FALSE";
  parameter [35:0] INIT_A = 36'h0;
  parameter [35:0] INIT_B = 36'h0;
  parameter INIT_FILE = "NONE";
  parameter RAM_EXTENSION_A = "NONE";
  parameter RAM_EXTENSION_B = "NONE";
  parameter RAM_MODE = "TDP";
  parameter RDADDR_COLLISION_HWCONFIG = "DELAYED_WRITE";
  parameter integer READ_WIDTH_A = 0;
  parameter integer READ_WIDTH_B = 0;
  parameter RSTREG_PRIORITY_A = "RSTREG";
  parameter RSTREG_PRIORITY_B = "RSTREG";
  parameter SIM_COLLISION_CHECK = "ALL";
  parameter SIM_DEVICE = "VIRTEX6";
  parameter [35:0] SRVAL_A = 36'h0;
  parameter [35:0] SRVAL_B = 36'h0;
  parameter WRITE_MODE_A = "WRITE_FIRST";
  parameter WRITE_MODE_B = "WRITE_FIRST";
  parameter integer WRITE_WIDTH_A = 0;
  parameter integer WRITE_WIDTH_B = 0;
  parameter IS_CLKARDCLK_INVERTED = 1'b0;
  parameter IS_CLKBWRCLK_INVERTED = 1'b0;
  parameter IS_ENARDEN_INVERTED = 1'b0;
  parameter IS_ENBWREN_INVERTED = 1'b0;
  parameter IS_RSTRAMARSTRAM_INVERTED = 1'b0;
  parameter IS_RSTRAMB_INVERTED = 1'b0;
  parameter IS_RSTREGARSTREG_INVERTED = 1'b0;
  parameter IS_RSTREGB_INVERTED = 1'b0;
  parameter [255:0] INIT_00 = 256'h0, INIT_01 = 256'h0, INIT_02 = 256'h0, INIT_03 = 256'h0;
  parameter [255:0] INIT_04 = 256'h0, INIT_05 = 256'h0, INIT_06 = 256'h0, INIT_07 = 256'h0;
  parameter [255:0] INIT_08 = 256'h0, INIT_09 = 256'h0, INIT_0A = 256'h0, INIT_0B = 256'h0;
  parameter [255:0] INIT_0C = 256'h0, INIT_0D = 256'h0, INIT_0E = 256'h0, INIT_0F = 256'h0;
  parameter [255:0] INIT_10 = 256'h0, INIT_11 = 256'h0, INIT_12 = 256'h0, INIT_13 = 256'h0;
  parameter [255:0] INIT_14 = 256'h0, INIT_15 = 256'h0, INIT_16 = 256'h0, INIT_17 = 256'h0;
  parameter [255:0] INIT_18 = 256'h0, INIT_19 = 256'h0, INIT_1A = 256'h0, INIT_1B = 256'h0;
  parameter [255:0] INIT_1C = 256'h0, INIT_1D = 256'h0, INIT_1E = 256'h0, INIT_1F = 256'h0;
  parameter [255:0] INIT_20 = 256'h0, INIT_21 = 256'h0, INIT_22 = 256'h0, INIT_23 = 256'h0;
  parameter [255:0] INIT_24 = 256'h0, INIT_25 = 256'h0, INIT_26 = 256'h0, INIT_27 = 256'h0;
  parameter [255:0] INIT_28 = 256'h0, INIT_29 = 256'h0, INIT_2A = 256'h0, INIT_2B = 256'h0;
  parameter [255:0] INIT_2C = 256'h0, INIT_2D = 256'h0, INIT_2E = 256'h0, INIT_2F = 256'h0;
  parameter [255:0] INIT_30 = 256'h0, INIT_31 = 256'h0, INIT_32 = 256'h0, INIT_33 = 256'h0;
  parameter [255:0] INIT_34 = 256'h0, INIT_35 = 256'h0, INIT_36 = 256'h0, INIT_37 = 256'h0;
  parameter [255:0] INIT_38 = 256'h0, INIT_39 = 256'h0, INIT_3A = 256'h0, INIT_3B = 256'h0;
  parameter [255:0] INIT_3C = 256'h0, INIT_3D = 256'h0, INIT_3E = 256'h0, INIT_3F = 256'h0;
  parameter [255:0] INIT_40 = 256'h0, INIT_41 = 256'h0, INIT_42 = 256'h0, INIT_43 = 256'h0;
  parameter [255:0] INIT_44 = 256'h0, INIT_45 = 256'h0, INIT_46 = 256'h0, INIT_47 = 256'h0;
  parameter [255:0] INIT_48 = 256'h0, INIT_49 = 256'h0, INIT_4A = 256'h0, INIT_4B = 256'h0;
  parameter [255:0] INIT_4C = 256'h0, INIT_4D = 256'h0, INIT_4E = 256'h0, INIT_4F = 256'h0;
  parameter [255:0] INIT_50 = 256'h0, INIT_51 = 256'h0, INIT_52 = 256'h0, INIT_53 = 256'h0;
  parameter [255:0] INIT_54 = 256'h0, INIT_55 = 256'h0, INIT_56 = 256'h0, INIT_57 = 256'h0;
  parameter [255:0] INIT_58 = 256'h0, INIT_59 = 256'h0, INIT_5A = 256'h0, INIT_5B = 256'h0;
  parameter [255:0] INIT_5C = 256'h0, INIT_5D = 256'h0, INIT_5E = 256'h0, INIT_5F = 256'h0;
  parameter [255:0] INIT_60 = 256'h0, INIT_61 = 256'h0, INIT_62 = 256'h0, INIT_63 = 256'h0;
  parameter [255:0] INIT_64 = 256'h0, INIT_65 = 256'h0, INIT_66 = 256'h0, INIT_67 = 256'h0;
  parameter [255:0] INIT_68 = 256'h0, INIT_69 = 256'h0, INIT_6A = 256'h0, INIT_6B = 256'h0;
  parameter [255:0] INIT_6C = 256'h0, INIT_6D = 256'h0, INIT_6E = 256'h0, INIT_6F = 256'h0;
  parameter [255:0] INIT_70 = 256'h0, INIT_71 = 256'h0, INIT_72 = 256'h0, INIT_73 = 256'h0;
  parameter [255:0] INIT_74 = 256'h0, INIT_75 = 256'h0, INIT_76 = 256'h0, INIT_77 = 256'h0;
  parameter [255:0] INIT_78 = 256'h0, INIT_79 = 256'h0, INIT_7A = 256'h0, INIT_7B = 256'h0;
  parameter [255:0] INIT_7C = 256'h0, INIT_7D = 256'h0, INIT_7E = 256'h0, INIT_7F = 256'h0;
  parameter [255:0] INITP_00 = 256'h0, INITP_01 = 256'h0, INITP_02 = 256'h0, INITP_03 = 256'h0;
  parameter [255:0] INITP_04 = 256'h0, INITP_05 = 256'h0, INITP_06 = 256'h0, INITP_07 = 256'h0;
  parameter [255:0] INITP_08 = 256'h0, INITP_09 = 256'h0, INITP_0A = 256'h0, INITP_0B = 256'h0;
  parameter [255:0] INITP_0C = 256'h0, INITP_0D = 256'h0, INITP_0E = 256'h0, INITP_0F = 256'h0;
  localparam [32767:0] INIT_BITS = {INIT_7F, INIT_7E, INIT_7D, INIT_7C, INIT_7B, INIT_7A, INIT_79, INIT_78, INIT_77, INIT_76, INIT_75, INIT_74,
    INIT_73, INIT_72, INIT_71, INIT_70, INIT_6F, INIT_6E, INIT_6D, INIT_6C, INIT_6B, INIT_6A, INIT_69, INIT_68,
    INIT_67, INIT_66, INIT_65, INIT_64, INIT_63, INIT_62, INIT_61, INIT_60, INIT_5F, INIT_5E, INIT_5D, INIT_5C,
    INIT_5B, INIT_5A, INIT_59, INIT_58, INIT_57, INIT_56, INIT_55, INIT_54, INIT_53, INIT_52, INIT_51, INIT_50,
    INIT_4F, INIT_4E, INIT_4D, INIT_4C, INIT_4B, INIT_4A, INIT_49, INIT_48, INIT_47, INIT_46, INIT_45, INIT_44,
    INIT_43, INIT_42, INIT_41, INIT_40, INIT_3F, INIT_3E, INIT_3D, INIT_3C, INIT_3B, INIT_3A, INIT_39, INIT_38,
    INIT_37, INIT_36, INIT_35, INIT_34, INIT_33, INIT_32, INIT_31, INIT_30, INIT_2F, INIT_2E, INIT_2D, INIT_2C,
    INIT_2B, INIT_2A, INIT_29, INIT_28, INIT_27, INIT_26, INIT_25, INIT_24, INIT_23, INIT_22, INIT_21, INIT_20,
    INIT_1F, INIT_1E, INIT_1D, INIT_1C, INIT_1B, INIT_1A, INIT_19, INIT_18, INIT_17, INIT_16, INIT_15, INIT_14,
    INIT_13, INIT_12, INIT_11, INIT_10, INIT_0F, INIT_0E, INIT_0D, INIT_0C, INIT_0B, INIT_0A, INIT_09, INIT_08,
    INIT_07, INIT_06, INIT_05, INIT_04, INIT_03, INIT_02, INIT_01, INIT_00};
  localparam [4095:0] INITP_BITS = {INITP_0F, INITP_0E, INITP_0D, INITP_0C, INITP_0B, INITP_0A, INITP_09, INITP_08, INITP_07, INITP_06, INITP_05,
    INITP_04, INITP_03, INITP_02, INITP_01, INITP_00};
  initial begin
    if (RAM_EXTENSION_A != "NONE" || RAM_EXTENSION_B != "NONE" || EN_ECC_READ != "FALSE" || EN_ECC_WRITE != "FALSE"
        || INIT_FILE != "NONE") begin
      $display("ERROR: xc7 block RAM model: cascades, ECC and INIT_FILE are not modelled"); $finish(1);
    end
  end
  winohdl_xc7_bram #(
    .AW(15), .BUS(32), .INIT_BITS(INIT_BITS), .INITP_BITS(INITP_BITS), .RAM_MODE(RAM_MODE),
    .READ_WIDTH_A(READ_WIDTH_A), .READ_WIDTH_B(READ_WIDTH_B), .WRITE_WIDTH_A(WRITE_WIDTH_A),
    .WRITE_WIDTH_B(WRITE_WIDTH_B), .WRITE_MODE_A(WRITE_MODE_A), .WRITE_MODE_B(WRITE_MODE_B), .DOA_REG(DOA_REG),
    .DOB_REG(DOB_REG), .INIT_A(INIT_A), .INIT_B(INIT_B), .SRVAL_A(SRVAL_A), .SRVAL_B(SRVAL_B),
    .RSTREG_PRIORITY_A(RSTREG_PRIORITY_A), .RSTREG_PRIORITY_B(RSTREG_PRIORITY_B),
    .RDADDR_COLLISION_HWCONFIG(RDADDR_COLLISION_HWCONFIG)
  ) core (
    .clka(CLKARDCLK ^ IS_CLKARDCLK_INVERTED), .clkb(CLKBWRCLK ^ IS_CLKBWRCLK_INVERTED),
    .ena(ENARDEN ^ IS_ENARDEN_INVERTED), .enb(ENBWREN ^ IS_ENBWREN_INVERTED),
    .regcea(REGCEAREGCE), .regceb(REGCEB),
    .rstrama(RSTRAMARSTRAM ^ IS_RSTRAMARSTRAM_INVERTED), .rstramb(RSTRAMB ^ IS_RSTRAMB_INVERTED),
    .rstrega(RSTREGARSTREG ^ IS_RSTREGARSTREG_INVERTED), .rstregb(RSTREGB ^ IS_RSTREGB_INVERTED),
    .addra(ADDRARDADDR), .addrb(ADDRBWRADDR),
    .dia(DIADI), .dib(DIBDI),
    .dipa(DIPADIP), .dipb(DIPBDIP),
    .wea({4'd0, WEA}), .web(WEBWE),
    .doa(DOADO), .dob(DOBDO), .dopa(DOPADOP), .dopb(DOPBDOP)
  );
  assign {CASCADEOUTA, CASCADEOUTB, ECCPARITY, RDADDRECC, SBITERR, DBITERR} = 0;
endmodule
