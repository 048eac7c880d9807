// Behavioural simulation model of the Lattice ECP5 DP16KD (16 kbit true dual-port block RAM), written
// for winohdl's post-synthesis check: Yosys ships only a blackbox of this cell (ecp5/cells_sim.v),
// with the same ports and parameters as here; the check removes that blackbox and compiles this.
//
// Modelled (Lattice TN1264, "ECP5 and ECP5-5G Memory Usage Guide"; the port conventions of Yosys's
// lattice/brams_map_16kd.v):
//   The array: 2,048 words of 9 bits; INITVAL_00 .. INITVAL_3F give it 1,024 rows of 18 bits, each
//   row in a 20-bit slot (row r = INITVAL_(r / 16) bits [(r % 16) * 20 +: 18], words 2r and 2r + 1).
//   Port widths (DATA_WIDTH_A / _B): 9 (word AD[13:3]); 18 (words 2k, 2k + 1 for k = AD[13:4],
//   written per word when WE and AD[0] / AD[1]); 36 (pseudo dual port: port A writes words
//   4k .. 4k + 3 for k = AD[13:5] from {DIB, DIA}, one per AD[0..3]; port B reads them onto
//   {DOB, DOA}); with width 36 on A, port B's narrower reads come out on DOB); 1, 2, 4 (bit fields
//   of the 8 data bits of each word, when both ports have that same width).
//   A port's clock (CLKxMUX "INV": inverted) with clock enable CEx: on its edge, a write of the
//   addressed words when WEx, and a read into the output: REGMODE "NOREG", the read data at the
//   edge. A port reading the words it writes gives, per WRITEMODE, the old data
//   ("READBEFOREWRITE"), the new data ("WRITETHROUGH") or its previous output ("NORMAL"). RSTx
//   clears that port's output and blocks its write (RESETMODE "SYNC": at the edge, whatever CEx;
//   "ASYNC": at once). Outputs start at 0.
//   REGMODE_x "OUTREG": the output bus x goes through the block's output register, which takes
//   the read output (the NOREG value) on the reading port's clock edge when that port's OCE is
//   high, and is cleared by its RST like the read output. DOA is read by port B in a 36-bit read
//   (DATA_WIDTH_B 36), so its register then has port B's clock, OCEB and RSTB, and both REGMODEs
//   must agree (the PDPW16KD primitive has one; nextpnr sets both from it).
// Not modelled (an elaboration error names it, so a netlist that relies on it fails the check
// instead of passing): a 36-bit read with different REGMODEs, chip selects other than CSDECODE
// "0b000" with CS tied to 0 (checked at run time: a CS at 1 makes the port's output X), mixed
// widths below 9.
// A read of a word the other port writes at the same edge gives X: the hardware does not define
// it, and a design that uses such data fails the four-state check.

module DP16KD(
  input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input CEA, OCEA, CLKA, WEA, RSTA,
  input CSA2, CSA1, CSA0,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,

  input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input CEB, OCEB, CLKB, WEB, RSTB,
  input CSB2, CSB1, CSB0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  parameter DATA_WIDTH_A = 18;
  parameter DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter CLKAMUX = "CLKA";
  parameter CLKBMUX = "CLKB";
  parameter GSR = "ENABLED";
  parameter INIT_DATA = "STATIC";
  parameter [319:0] INITVAL_00 = 320'h0, INITVAL_01 = 320'h0, INITVAL_02 = 320'h0, INITVAL_03 = 320'h0;
  parameter [319:0] INITVAL_04 = 320'h0, INITVAL_05 = 320'h0, INITVAL_06 = 320'h0, INITVAL_07 = 320'h0;
  parameter [319:0] INITVAL_08 = 320'h0, INITVAL_09 = 320'h0, INITVAL_0A = 320'h0, INITVAL_0B = 320'h0;
  parameter [319:0] INITVAL_0C = 320'h0, INITVAL_0D = 320'h0, INITVAL_0E = 320'h0, INITVAL_0F = 320'h0;
  parameter [319:0] INITVAL_10 = 320'h0, INITVAL_11 = 320'h0, INITVAL_12 = 320'h0, INITVAL_13 = 320'h0;
  parameter [319:0] INITVAL_14 = 320'h0, INITVAL_15 = 320'h0, INITVAL_16 = 320'h0, INITVAL_17 = 320'h0;
  parameter [319:0] INITVAL_18 = 320'h0, INITVAL_19 = 320'h0, INITVAL_1A = 320'h0, INITVAL_1B = 320'h0;
  parameter [319:0] INITVAL_1C = 320'h0, INITVAL_1D = 320'h0, INITVAL_1E = 320'h0, INITVAL_1F = 320'h0;
  parameter [319:0] INITVAL_20 = 320'h0, INITVAL_21 = 320'h0, INITVAL_22 = 320'h0, INITVAL_23 = 320'h0;
  parameter [319:0] INITVAL_24 = 320'h0, INITVAL_25 = 320'h0, INITVAL_26 = 320'h0, INITVAL_27 = 320'h0;
  parameter [319:0] INITVAL_28 = 320'h0, INITVAL_29 = 320'h0, INITVAL_2A = 320'h0, INITVAL_2B = 320'h0;
  parameter [319:0] INITVAL_2C = 320'h0, INITVAL_2D = 320'h0, INITVAL_2E = 320'h0, INITVAL_2F = 320'h0;
  parameter [319:0] INITVAL_30 = 320'h0, INITVAL_31 = 320'h0, INITVAL_32 = 320'h0, INITVAL_33 = 320'h0;
  parameter [319:0] INITVAL_34 = 320'h0, INITVAL_35 = 320'h0, INITVAL_36 = 320'h0, INITVAL_37 = 320'h0;
  parameter [319:0] INITVAL_38 = 320'h0, INITVAL_39 = 320'h0, INITVAL_3A = 320'h0, INITVAL_3B = 320'h0;
  parameter [319:0] INITVAL_3C = 320'h0, INITVAL_3D = 320'h0, INITVAL_3E = 320'h0, INITVAL_3F = 320'h0;

  localparam [64*320-1:0] INITVAL = {
    INITVAL_3F, INITVAL_3E, INITVAL_3D, INITVAL_3C, INITVAL_3B, INITVAL_3A, INITVAL_39, INITVAL_38,
    INITVAL_37, INITVAL_36, INITVAL_35, INITVAL_34, INITVAL_33, INITVAL_32, INITVAL_31, INITVAL_30,
    INITVAL_2F, INITVAL_2E, INITVAL_2D, INITVAL_2C, INITVAL_2B, INITVAL_2A, INITVAL_29, INITVAL_28,
    INITVAL_27, INITVAL_26, INITVAL_25, INITVAL_24, INITVAL_23, INITVAL_22, INITVAL_21, INITVAL_20,
    INITVAL_1F, INITVAL_1E, INITVAL_1D, INITVAL_1C, INITVAL_1B, INITVAL_1A, INITVAL_19, INITVAL_18,
    INITVAL_17, INITVAL_16, INITVAL_15, INITVAL_14, INITVAL_13, INITVAL_12, INITVAL_11, INITVAL_10,
    INITVAL_0F, INITVAL_0E, INITVAL_0D, INITVAL_0C, INITVAL_0B, INITVAL_0A, INITVAL_09, INITVAL_08,
    INITVAL_07, INITVAL_06, INITVAL_05, INITVAL_04, INITVAL_03, INITVAL_02, INITVAL_01, INITVAL_00};

  wire [17:0] DIA = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  wire [17:0] DIB = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
  wire [13:0] ADA = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  wire [13:0] ADB = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  wire clka = CLKAMUX == "INV" ? ~CLKA : CLKA;
  wire clkb = CLKBMUX == "INV" ? ~CLKB : CLKB;
  wire csa = {CSA2, CSA1, CSA0} != 3'b000;
  wire csb = {CSB2, CSB1, CSB0} != 3'b000;

  reg [8:0] mem [0:2047];
  reg [17:0] qa = 18'd0, qb = 18'd0;
  reg [17:0] qb_low = 18'd0;  // a 36-bit read's words 0 and 1 (on DOA)
  integer r;

  initial begin
    if ((REGMODE_A != "NOREG" && REGMODE_A != "OUTREG") || (REGMODE_B != "NOREG" && REGMODE_B != "OUTREG")) begin
      $display("ERROR: DP16KD model: REGMODE is NOREG or OUTREG"); $finish(1);
    end
    if (DATA_WIDTH_B == 36 && REGMODE_A != REGMODE_B) begin
      $display("ERROR: DP16KD model: a 36-bit read with different REGMODEs is not modelled"); $finish(1);
    end
    if (CSDECODE_A != "0b000" || CSDECODE_B != "0b000") begin
      $display("ERROR: DP16KD model: chip-select decoding is not modelled"); $finish(1);
    end
    if (DATA_WIDTH_A != DATA_WIDTH_B && (DATA_WIDTH_A < 9 || DATA_WIDTH_B < 9)) begin
      $display("ERROR: DP16KD model: mixed port widths below 9 are not modelled"); $finish(1);
    end
    for (r = 0; r < 1024; r = r + 1) begin
      mem[2 * r] = INITVAL[r * 20 +: 9];
      mem[2 * r + 1] = INITVAL[r * 20 + 9 +: 9];
    end
  end

  // words a port addresses: first word and count; narrow widths address bit fields of one word
  function integer first_word(input integer width, input [13:0] ad);
    case (width)
      36: first_word = ad[13:5] * 4;
      18: first_word = ad[13:4] * 2;
      9: first_word = ad[13:3];
      4: first_word = ad[13:2] / 2;
      2: first_word = ad[13:1] / 4;
      default: first_word = ad[13:0] / 8;
    endcase
  endfunction

  function integer words(input integer width);
    words = width == 36 ? 4 : width == 18 ? 2 : 1;
  endfunction

  // the data of a read, in its low DATA_WIDTH bits
  function [35:0] read_data(input integer width, input [13:0] ad);
    integer w, f;
    begin
      f = first_word(width, ad);
      read_data = 36'd0;
      if (width >= 9) begin
        for (w = 0; w < words(width); w = w + 1)
          read_data[w * 9 +: 9] = mem[f + w];
      end else begin
        w = width == 4 ? ad[2] : width == 2 ? ad[2:1] : ad[2:0];
        read_data = (mem[f] >> (w * width)) & ((1 << width) - 1);
      end
    end
  endfunction

  // does a write by the other port at this edge touch the words this port reads?
  function overlap(input integer wr_width, input [13:0] wr_ad, input wr_en, input integer rd_width,
                   input [13:0] rd_ad);
    integer a0, a1, b0, b1;
    begin
      a0 = first_word(wr_width, wr_ad); a1 = a0 + words(wr_width) - 1;
      b0 = first_word(rd_width, rd_ad); b1 = b0 + words(rd_width) - 1;
      overlap = wr_en && a0 <= b1 && b0 <= a1;
    end
  endfunction

  // port A writes (36: words from {DIB, DIA}, one per AD[0..3]; 18: one per AD[0..1])
  wire a_writes = CEA && !csa && WEA && (DATA_WIDTH_A == 36 ? ADA[3:0] != 4'd0 : 1'b1);
  wire b_writes = CEB && !csb && WEB && DATA_WIDTH_A != 36;

  task write_port(input integer width, input [13:0] ad, input [35:0] data);
    integer w, f, s;
    begin
      f = first_word(width, ad);
      if (width >= 18) begin
        for (w = 0; w < words(width); w = w + 1)
          if (ad[w]) mem[f + w] <= data[w * 9 +: 9];
      end else if (width == 9) begin
        mem[f] <= data[8:0];
      end else begin
        s = (width == 4 ? ad[2] : width == 2 ? ad[2:1] : ad[2:0]) * width;
        mem[f] <= (mem[f] & ~(((1 << width) - 1) << s)) | ((data & ((1 << width) - 1)) << s);
      end
    end
  endtask

  // one edge of port A: A only writes when its width is 36 (port B then reads 36 bits)
  task edge_a;
    begin
      if (csa) begin
        qa <= 18'bx;
      end else begin
        if (WEA) write_port(DATA_WIDTH_A, ADA, {DIB, DIA});
        if (DATA_WIDTH_A != 36) begin
          if (overlap(DATA_WIDTH_B, ADB, b_writes, DATA_WIDTH_A, ADA))
            qa <= 18'bx;
          else if (!WEA || WRITEMODE_A == "READBEFOREWRITE")
            qa <= read_data(DATA_WIDTH_A, ADA);
          else if (WRITEMODE_A == "WRITETHROUGH")
            qa <= DIA;
        end
      end
    end
  endtask

  reg [35:0] rd_b;
  task edge_b;
    begin
      if (csb) begin
        qb <= 18'bx;
        qb_low <= 18'bx;
      end else begin
        if (WEB && DATA_WIDTH_A != 36) write_port(DATA_WIDTH_B, ADB, {18'd0, DIB});
        rd_b = read_data(DATA_WIDTH_B, ADB);
        if (overlap(DATA_WIDTH_A, ADA, a_writes, DATA_WIDTH_B, ADB)) begin
          qb <= 18'bx;
          qb_low <= 18'bx;
        end else if (!WEB || DATA_WIDTH_A == 36 || WRITEMODE_B == "READBEFOREWRITE") begin
          qb <= DATA_WIDTH_B == 36 ? rd_b[35:18] : rd_b[17:0];
          qb_low <= rd_b[17:0];
        end else if (WRITEMODE_B == "WRITETHROUGH") begin
          qb <= DIB;
        end
      end
    end
  endtask

  generate
    if (RESETMODE == "ASYNC") begin : async_reset
      always @(posedge clka or posedge RSTA)
        if (RSTA) qa <= 18'd0; else if (CEA) edge_a;
      always @(posedge clkb or posedge RSTB)
        if (RSTB) begin qb <= 18'd0; qb_low <= 18'd0; end else if (CEB) edge_b;
    end else begin : sync_reset
      always @(posedge clka)
        if (RSTA) qa <= 18'd0; else if (CEA) edge_a;
      always @(posedge clkb)
        if (RSTB) begin qb <= 18'd0; qb_low <= 18'd0; end else if (CEB) edge_b;
    end
  endgenerate

  // 36-bit reads (port B): words 0, 1 on DOA and 2, 3 on DOB (Yosys: DO = {DOB, DOA})
  wire [17:0] doa = DATA_WIDTH_B == 36 ? qb_low : qa;

  // REGMODE "OUTREG": the output registers (DOA's on port B's clock in a 36-bit read)
  wire oclka = DATA_WIDTH_B == 36 ? clkb : clka;
  wire oocea = DATA_WIDTH_B == 36 ? OCEB : OCEA;
  wire orsta = DATA_WIDTH_B == 36 ? RSTB : RSTA;
  reg [17:0] oa = 18'd0, ob = 18'd0;
  generate
    if (RESETMODE == "ASYNC") begin : async_output_reset
      always @(posedge oclka or posedge orsta)
        if (orsta) oa <= 18'd0; else if (oocea) oa <= doa;
      always @(posedge clkb or posedge RSTB)
        if (RSTB) ob <= 18'd0; else if (OCEB) ob <= qb;
    end else begin : sync_output_reset
      always @(posedge oclka)
        if (orsta) oa <= 18'd0; else if (oocea) oa <= doa;
      always @(posedge clkb)
        if (RSTB) ob <= 18'd0; else if (OCEB) ob <= qb;
    end
  endgenerate

  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} =
    REGMODE_A == "OUTREG" ? oa : doa;
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} =
    REGMODE_B == "OUTREG" ? ob : qb;
endmodule
