/* chase.h -- `pathd-bench chase`: chasers after random-walking targets under
 * replanning policies (chase.c explains the measure). */
#ifndef PF_BENCH_CHASE_H
#define PF_BENCH_CHASE_H

/* argv[0] is "chase". Returns the process exit status. */
int pf_bench_chase_main(int argc, char **argv);

#endif
