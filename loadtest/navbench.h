/* navbench.h -- `pathd-bench navmesh`: navmesh maps (nav/) in-process.
 *
 * For each Moving AI scenario file: the map converted to a navmesh (build
 * time, wall and CPU, on --threads threads; polygons, bytes), the selected
 * scenario queries (the rule of scen.h) through jps and through the navmesh
 * (polyanya and Detour's findPath, both funnelled) with p50/p99 per query
 * and the ratio to jps, path lengths against the listed optimum, obstacle
 * put and remove latency, and crowd step time for the crowd sizes asked.
 * See `pathd-bench navmesh --help`.
 */
#ifndef PF_BENCH_NAVBENCH_H
#define PF_BENCH_NAVBENCH_H

/* argv[0] is "navmesh". Exit status as `scen`: 0 good, 1 a path missed
 * (partial, off the bounds), 2 usage. */
int pf_bench_navmesh_main(int argc, char **argv);

#endif
