/* gen.h -- `pathd-bench gen`: maps of the Moving AI families with
 * scenario files, for measuring on maps nothing was tuned on.
 *
 *   pathd-bench gen maze|rooms|random [--side N] [--param P] [--seed S]
 *                   [--per-bucket K] OUT
 *
 * writes OUT.map (Moving AI format: 8-connected, no corner cutting) and
 * OUT.map.scen: queries in buckets of 4 units of optimal length as Moving
 * AI's files are (bucket floor(optimum / 4)), K a bucket (default 10), the
 * optima computed by a plain Dijkstra of its own (gen.c, written apart from
 * core's searches). The families:
 *   maze    a perfect maze of corridors P cells wide (default 4) and walls
 *           one cell thick (core/maze.h; maze512-8-0 is P = 8);
 *   rooms   square rooms of P - 1 cells (default 8: 8room_000's 7x7 rooms)
 *           behind one-cell walls; each wall between two rooms has one door
 *           of one cell at a random place, and one wall in eight is left
 *           out (a bigger room);
 *   random  every cell blocked with probability P percent (default 20).
 * Deterministic per seed. Exit status 0, or 2 for bad arguments or a file
 * that cannot be written. */
#ifndef PF_BENCH_GEN_H
#define PF_BENCH_GEN_H

int pf_bench_gen_main(int argc, char **argv);

#endif
