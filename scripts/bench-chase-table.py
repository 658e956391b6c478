#!/usr/bin/env python3
# bench-chase-table.py OUT -- the Markdown tables of scripts/bench-chase.sh's runs.
import json, glob, os, sys
d = sys.argv[1] if len(sys.argv) > 1 else 'build/bench-chase'
maps = ['Boston_0_512', 'AR0011SR', '8room_000', 'random512-10-0', 'maze512-8-0', 'Berlin_1_1024']
maps = [m for m in maps if os.path.exists(f'{d}/{m}.json')]


def rows(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def pick(rs, policy, n, h):
    for r in rs:
        if r['policy'] == policy and r['chasers'] == n and r['hysteresis'] == h:
            return r
    return None


pols = ['every-frame', 'timer', 'threshold', 'incremental', 'threshold-incremental']
print('### Chase table (150 frames, hysteresis 0; flips also with 0.2)\n')
print('| map | chasers | policy | replans | expanded | expanded/frame | CPU us/frame mean | p99 | pushed | flips (h 0 / 0.2) | mean distance |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for m in maps:
    rs = rows(f'{d}/{m}.json')
    for n in (1, 16, 64):
        for p in pols:
            a, b = pick(rs, p, n, 0), pick(rs, p, n, 0.2)
            if not a:
                continue
            print(f"| {m} {a['map_w']}x{a['map_h']} | {n} | {p} | {a['replans']} | {a['expanded']} | "
                  f"{a['expanded'] / a['frames']:.0f} | {a['frame_us_mean']:.0f} | {a['frame_us_p99']:.0f} | "
                  f"{a['pushed']} | {a['flips']} / {b['flips'] if b else '-'} | {a['mean_distance']:.1f} |")
print('\n### Incremental goal moves against a fresh search (policy incremental, hysteresis 0)\n')
print('| map | chasers | goal moves | incremental expanded p50 / p99 | fresh D* Lite p50 / p99 | A* p50 | ratio p50 / p99 | reset p50 / p99 | CPU us incremental p50 / fresh p50 | searches anew | re-rooted |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for m in maps:
    rs = rows(f'{d}/{m}.json')
    for n in (1, 16, 64):
        a = pick(rs, 'incremental', n, 0)
        if not a or 'goal_moves' not in a:
            continue
        print(f"| {m} | {n} | {a['goal_moves']} | {a['incremental_expanded_p50']:.0f} / {a['incremental_expanded_p99']:.0f} | "
              f"{a['fresh_expanded_p50']:.0f} / {a['fresh_expanded_p99']:.0f} | {a['astar_expanded_p50']:.0f} | "
              f"{a['ratio_p50']:.4f} / {a['ratio_p99']:.3f} | {a['reset_p50']:.0f} / {a['reset_p99']:.0f} | "
              f"{a['incremental_us_p50']:.1f} / {a['fresh_us_p50']:.1f} | {a['anew']} | {a['rerooted']} |")
print('\n### Orientations and re-root rules (incremental, 16 chasers, hysteresis 0.2)\n')
print('| map | root | re-root | expanded | ratio p50 / p99 | reset p50 / p99 | CPU us/frame mean | incremental us p50 | anew | re-rooted | bytes/session |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for m in maps:
    for v in ['goal-always', 'goal-needed', 'agent-always', 'agent-needed', 'auto-always', 'auto-needed']:
        p = f'{d}/{m}.{v}.json'
        if not os.path.exists(p):
            continue
        a = rows(p)[0]
        print(f"| {m} | {a['root']} | {a['reroot']} | {a['expanded']} | {a['ratio_p50']:.4f} / {a['ratio_p99']:.3f} | "
              f"{a['reset_p50']:.0f} / {a['reset_p99']:.0f} | {a['frame_us_mean']:.0f} | {a['incremental_us_p50']:.1f} | "
              f"{a['anew']} | {a['rerooted']} | {a['session_bytes']:.0f} |")
