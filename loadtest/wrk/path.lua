-- path.lua -- wrk script: GET /v1/maps/{id}/path over a list of start/goal
-- pairs, round robin, each wrk thread starting at a different offset.
--
-- Environment:
--   PATHD_WRK_PAIRS  file with one "sx sy gx gy" line per query (required)
--   PATHD_WRK_MAP    map id (default "bench")
--   PATHD_WRK_ALGO   algorithm (default "hpa")
--   PATHD_WRK_CACHE  "true" or "false" (default "false": every request searches)
local pairs_file = os.getenv("PATHD_WRK_PAIRS")
local map = os.getenv("PATHD_WRK_MAP") or "bench"
local algo = os.getenv("PATHD_WRK_ALGO") or "hpa"
local cache = os.getenv("PATHD_WRK_CACHE") or "false"

local paths = {}
local f = assert(io.open(pairs_file, "r"), "PATHD_WRK_PAIRS must name a readable file")
for line in f:lines() do
  local sx, sy, gx, gy = line:match("^(%d+)%s+(%d+)%s+(%d+)%s+(%d+)")
  if sx then
    paths[#paths + 1] = string.format(
      "/v1/maps/%s/path?start=%s,%s&goal=%s,%s&algorithm=%s&cache=%s",
      map, sx, sy, gx, gy, algo, cache)
  end
end
f:close()
assert(#paths > 0, "no pairs read from " .. pairs_file)

local counter = 0
local thread_no = 0

function setup(thread)
  thread:set("offset", thread_no * 7919)
  thread_no = thread_no + 1
end

function init(args)
  counter = offset or 0
end

function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end
