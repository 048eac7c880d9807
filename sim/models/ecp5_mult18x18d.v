// Behavioural simulation model of the Lattice ECP5 MULT18X18D (sysDSP 18x18 multiplier), written for
// winohdl's post-synthesis check: Yosys ships only a blackbox of this cell (ecp5/cells_bb.v), with
// the same ports and parameters as here.
//
// Modelled (Lattice TN1267, "ECP5 and ECP5-5G sysDSP Usage Guide"):
//   P[35:0] = A[17:0] x B[17:0], each operand signed when SIGNEDA / SIGNEDB is 1, else unsigned;
//   the product modulo 2^36; SIGNEDP = SIGNEDA | SIGNEDB.
//   Registers, each enabled by its REG_<name>_CLK parameter (CLK0..CLK3; "NONE" = bypassed), with
//   clock enable REG_<name>_CE (CE0..CE3, active high) and reset REG_<name>_RST (RST0..RST3, active
//   high, to 0; RESETMODE "SYNC" or "ASYNC"):
//     INPUTA   A and SIGNEDA          INPUTB   B and SIGNEDB          INPUTC   C
//     PIPELINE the product            OUTPUT   P and SIGNEDP
//   ROA / ROB / ROC: the A, B, C operands after their input registers; SROA / SROB: the same A and
//   B (the shift-out chain). Registers start at 0 (GSR is not modelled).
// Not modelled (drive X, so a netlist that relies on them fails the check instead of passing):
//   SOURCEA / SOURCEB = 1 (operands from the SRIA / SRIB shift chain), MULT_BYPASS = "ENABLED".
// An enable or reset that is X or Z while its register is used makes that register X.

module MULT18X18D(
    input A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0,
    input B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0,
    input C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0,
    input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB,
    input CLK3, CLK2, CLK1, CLK0,
    input CE3, CE2, CE1, CE0,
    input RST3, RST2, RST1, RST0,
    input SRIA17, SRIA16, SRIA15, SRIA14, SRIA13, SRIA12, SRIA11, SRIA10, SRIA9, SRIA8, SRIA7, SRIA6, SRIA5, SRIA4, SRIA3, SRIA2, SRIA1, SRIA0,
    input SRIB17, SRIB16, SRIB15, SRIB14, SRIB13, SRIB12, SRIB11, SRIB10, SRIB9, SRIB8, SRIB7, SRIB6, SRIB5, SRIB4, SRIB3, SRIB2, SRIB1, SRIB0,
    output SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0,
    output SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0,
    output ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0,
    output ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0,
    output ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0,
    output P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0,
    output SIGNEDP);
    parameter REG_INPUTA_CLK = "NONE";
    parameter REG_INPUTA_CE = "CE0";
    parameter REG_INPUTA_RST = "RST0";
    parameter REG_INPUTB_CLK = "NONE";
    parameter REG_INPUTB_CE = "CE0";
    parameter REG_INPUTB_RST = "RST0";
    parameter REG_INPUTC_CLK = "NONE";
    parameter REG_INPUTC_CE = "CE0";
    parameter REG_INPUTC_RST = "RST0";
    parameter REG_PIPELINE_CLK = "NONE";
    parameter REG_PIPELINE_CE = "CE0";
    parameter REG_PIPELINE_RST = "RST0";
    parameter REG_OUTPUT_CLK = "NONE";
    parameter REG_OUTPUT_CE = "CE0";
    parameter REG_OUTPUT_RST = "RST0";
    parameter CLK0_DIV = "ENABLED";
    parameter CLK1_DIV = "ENABLED";
    parameter CLK2_DIV = "ENABLED";
    parameter CLK3_DIV = "ENABLED";
    parameter HIGHSPEED_CLK = "NONE";
    parameter GSR = "ENABLED";
    parameter CAS_MATCH_REG = "FALSE";
    parameter SOURCEB_MODE = "B_SHIFT";
    parameter MULT_BYPASS = "DISABLED";
    parameter RESETMODE = "SYNC";

    wire [3:0] clk = {CLK3, CLK2, CLK1, CLK0};
    wire [3:0] ce = {CE3, CE2, CE1, CE0};
    wire [3:0] rst = {RST3, RST2, RST1, RST0};
    localparam ASYNC = RESETMODE == "ASYNC";

    // operands: A (or X when taken from the unmodelled shift chain) and its sign flag
    wire [18:0] a_in = SOURCEA === 1'b0 ? {SIGNEDA, {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0}} : 19'bx;
    wire [18:0] b_in = SOURCEB === 1'b0 ? {SIGNEDB, {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0}} : 19'bx;
    wire [17:0] c_in = {C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0};
    wire [18:0] a_q, b_q;
    wire [17:0] c_q;
    winohdl_ecp5_dsp_reg #(.W(19), .CLK(REG_INPUTA_CLK), .CE(REG_INPUTA_CE), .RST(REG_INPUTA_RST), .ASYNC(ASYNC))
        reg_a (.clk(clk), .ce(ce), .rst(rst), .d(a_in), .q(a_q));
    winohdl_ecp5_dsp_reg #(.W(19), .CLK(REG_INPUTB_CLK), .CE(REG_INPUTB_CE), .RST(REG_INPUTB_RST), .ASYNC(ASYNC))
        reg_b (.clk(clk), .ce(ce), .rst(rst), .d(b_in), .q(b_q));
    winohdl_ecp5_dsp_reg #(.W(18), .CLK(REG_INPUTC_CLK), .CE(REG_INPUTC_CE), .RST(REG_INPUTC_RST), .ASYNC(ASYNC))
        reg_c (.clk(clk), .ce(ce), .rst(rst), .d(c_in), .q(c_q));

    wire [35:0] a_ext = {{18{a_q[18] & a_q[17]}}, a_q[17:0]};
    wire [35:0] b_ext = {{18{b_q[18] & b_q[17]}}, b_q[17:0]};
    wire [36:0] product = MULT_BYPASS == "DISABLED" ? {a_q[18] | b_q[18], a_ext * b_ext} : 37'bx;
    wire [36:0] pipe_q, out_q;
    winohdl_ecp5_dsp_reg #(.W(37), .CLK(REG_PIPELINE_CLK), .CE(REG_PIPELINE_CE), .RST(REG_PIPELINE_RST),
                           .ASYNC(ASYNC)) reg_p (.clk(clk), .ce(ce), .rst(rst), .d(product), .q(pipe_q));
    winohdl_ecp5_dsp_reg #(.W(37), .CLK(REG_OUTPUT_CLK), .CE(REG_OUTPUT_CE), .RST(REG_OUTPUT_RST),
                           .ASYNC(ASYNC)) reg_o (.clk(clk), .ce(ce), .rst(rst), .d(pipe_q), .q(out_q));

    assign {SIGNEDP, P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = out_q;
    assign {ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0} = a_q[17:0];
    assign {ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0} = b_q[17:0];
    assign {ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0} = c_q;
    assign {SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0} = a_q[17:0];
    assign {SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0} = b_q[17:0];
endmodule

// One register of the block, or a wire when its clock parameter is "NONE".
module winohdl_ecp5_dsp_reg #(parameter W = 1, parameter CLK = "NONE", parameter CE = "CE0",
                              parameter RST = "RST0", parameter ASYNC = 0) (
    input [3:0] clk, input [3:0] ce, input [3:0] rst, input [W-1:0] d, output [W-1:0] q);
    localparam integer CI = CLK == "CLK0" ? 0 : CLK == "CLK1" ? 1 : CLK == "CLK2" ? 2 : CLK == "CLK3" ? 3 : -1;
    localparam integer EI = CE == "CE0" ? 0 : CE == "CE1" ? 1 : CE == "CE2" ? 2 : 3;
    localparam integer RI = RST == "RST0" ? 0 : RST == "RST1" ? 1 : RST == "RST2" ? 2 : 3;
    generate
        if (CI < 0) begin : bypass
            assign q = d;
        end else begin : registered
            reg [W-1:0] r = {W{1'b0}};
            wire c = clk[CI], e = ce[EI], s = rst[RI];
            if (ASYNC) begin : async_reset
                always @(posedge c or posedge s)
                    if (s === 1'b1) r <= {W{1'b0}};
                    else if (s !== 1'b0) r <= {W{1'bx}};
                    else if (e === 1'b1) r <= d;
                    else if (e !== 1'b0) r <= {W{1'bx}};
            end else begin : sync_reset
                always @(posedge c)
                    if (s === 1'b1) r <= {W{1'b0}};
                    else if (s !== 1'b0) r <= {W{1'bx}};
                    else if (e === 1'b1) r <= d;
                    else if (e !== 1'b0) r <= {W{1'bx}};
            end
            assign q = r;
        end
    endgenerate
endmodule
