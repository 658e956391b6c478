#!/bin/sh
# Lines of server/ and proto/ outside the kind modules that branch on a
# map's kind (docs/KINDS.md): a conditional (if, while, ?:, &&, ||, case,
# switch) reading a kind discriminator (->nav, ->planner, ->navsrc, ->corr,
# a nav flag, the strings "grid" and "navmesh"). Prints each line, then the
# count. Run from the repository (or give its path).
#
# Kind modules: server/kind_*, server/crowd.c, server/navq.c,
# server/navrun.c; proto's codecs of one kind: nav_*, crowd_json,
# map_json, path_json, flowfield_json, table_json, maze_json.
cd "${1:-.}" || exit 2
grep -nE '(\bif\b|\bwhile\b|\?|&&|\|\||\bcase\b|\bswitch\b)' server/*.c server/*.h proto/*.c proto/*.h |
    grep -E '(->|\.)(nav|planner|navsrc|corr)\b|\b(nav|navmesh|is_nav|position_nav|goal_nav)\b[^(_]|pf_session_is_nav|"navmesh"|"grid"' |
    grep -vE '^(server/kind_[a-z_]*|server/(crowd|navq|navrun)|proto/(nav_[a-z_]*|crowd_json|map_json|path_json|flowfield_json|table_json|maze_json))\.[ch]:' |
    grep -vE ':[0-9]+:\s*(/\*|\*)' > /tmp/kind-branches.$$
cat /tmp/kind-branches.$$
echo "kind branches outside the kind modules: $(wc -l < /tmp/kind-branches.$$)"
rm -f /tmp/kind-branches.$$
