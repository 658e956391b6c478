/* units.h -- pathd-bench modes for many units (units.c explains each
 * measure):
 *
 *   pathd-bench flowfield FILE.scen...   flow field build time, and the
 *                                        break-even unit count against
 *                                        one astar per unit
 *   pathd-bench table FILE.scen...       an S x T distance table against
 *                                        S x T astar queries
 *   pathd-bench agents FILE.scen...      agent sizes > 1 against size 1 on
 *                                        the same queries
 */
#ifndef PF_BENCH_UNITS_H
#define PF_BENCH_UNITS_H

/* argv[0] is the subcommand's name. Each returns the process exit status:
 * 0 fine, 1 an answer disagreed with astar, 2 bad arguments or files. */
int pf_bench_flowfield_main(int argc, char **argv);
int pf_bench_table_main(int argc, char **argv);
int pf_bench_agents_main(int argc, char **argv);

#endif
