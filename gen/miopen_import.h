/* miopen_import.h: a MIOpenDriver command line as a convgrad problem.
 *
 * Reads lines such as
 *   convfp16 -n 32 -c 1024 -H 50 -W 50 -k 2048 -y 1 -x 1 -u 2 -v 2 -F 2 --in_layout NHWC
 *            --out_layout NHWC --fil_layout NHWC
 * with the flags, long forms and defaults of MIOpen's driver/conv_driver.hpp (design/math.md
 * section 6). An optional leading "MIOpenDriver" (or a path ending in it) is skipped. Rules:
 *
 * - Base arg: conv -> f32, convfp16 -> f16, convbfp16 -> bf16; convint8/convfp8/convbfp8 are
 *   CG_ERR_UNSUPPORTED.
 * - Defaults: -n 100 -c 3 -H/-W 32 -k 32 -y/-x 3, strides 1, pads 0, dilations 1, -g 1, -F 0.
 * - -F: 0 fwd+bwd_data+bwd_weight, 1 fwd, 2 bwd_data, 4 bwd_weight, 3/5/6 the sums.
 * - -b N (N != 0) adds bwd_bias when the direction has a backward op (MIOpen computes db in
 *   its backward run); the bias add of a forward run is not part of a convgrad problem.
 * - 2-D unless --spatial_dim / -_ is 3; the depth flags (-! -@ -# -$ -^ -% and long forms)
 *   without it are an error.
 * - Layouts: -I/-O/-f each default to NCHW (NCDHW); all three must be of one family (all
 *   channels-first or all channels-last), else CG_ERR_UNSUPPORTED, and of the spatial rank.
 * - -z same|valid follows MIOpen: applied only when all dilations or all filters are 1
 *   ("same": pad = max(Y - (D % s ? D % s : s), 0) / 2 per dim, "valid": pad 0), otherwise
 *   MIOpen ignores it and so does this importer.
 * - -m trans, a non-zero -r, -Z/-L vectorisation and -U/-T/-R cast types are
 *   CG_ERR_UNSUPPORTED; -Y/-X/-% must be 0 (they only apply to -m trans).
 * - Flags that do not change the problem take a value and are ignored: -t -i -V -s -S -P -o
 *   -w -d -e -D -a -C -G (and long forms).
 * - Stricter than MIOpen: an unknown flag, a missing value, a non-integer, a flag given twice
 *   (also as short and long form), a value out of range, -g not dividing -c and -k, or an
 *   output extent below 1 is CG_ERR_INVALID.
 */
#ifndef CG_MIOPEN_IMPORT_H
#define CG_MIOPEN_IMPORT_H

#include "cg_abi.h"

/* Parses one MIOpenDriver conv command line into a finalized problem whose name is derived
 * from its shape. On failure returns CG_ERR_INVALID, CG_ERR_UNSUPPORTED or CG_ERR_LIMIT and a
 * one-line reason naming the flag as written ("-g: 3 does not divide -c 32"). */
cg_status cg_import_miopen(const char *line, cg_problem *problem, char msg[CG_MSG_MAX]);

#endif /* CG_MIOPEN_IMPORT_H */
