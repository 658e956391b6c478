/* store_redis.c -- see store_redis.h. The Lua scripts below are the only
 * writers of the layout; each runs atomically in Redis, so a version is
 * assigned once even when instances change one map at the same moment. */
#include "store_redis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* Numbers written by the scripts: Lua's tostring and concatenation print
 * 14 significant digits, too few for lineages (Redis's clock in ms x
 * 1024); "%.0f" prints every integer a double holds exactly (below 2^53).
 * The guard, as store_redis.h says; epoch '*' skips it. Preconditions, as
 * precond.h says, over the tag "<version>-<lineage>" (nil for a map that
 * does not exist) and the lists pf_precond_list_arg writes. */
#define LUA_COMMON                                                                                 \
    "local function num(x) return string.format('%.0f', x) end\n"                                  \
    "local function guard(ke, kl, epoch, minl)\n"                                                  \
    "  if epoch == '*' then return nil end\n"                                                      \
    "  if redis.call('GET', ke) ~= epoch then return 'epoch' end\n"                                \
    "  if tonumber(redis.call('GET', kl) or '0') < tonumber(minl) then return 'rollback' end\n"    \
    "  return nil\n"                                                                               \
    "end\n"                                                                                        \
    "local function matches(list, t)\n"                                                            \
    "  if list == '*' then return t ~= nil end\n"                                                  \
    "  if t == nil then return false end\n"                                                        \
    "  for x in string.gmatch(list, '[^,]+') do if x == t then return true end end\n"              \
    "  return false\n"                                                                             \
    "end\n"                                                                                        \
    "local function holds(t, im, inm)\n"                                                           \
    "  if im ~= '' and not matches(im, t) then return false end\n"                                 \
    "  if inm ~= '' and matches(inm, t) then return false end\n"                                   \
    "  return true\n"                                                                              \
    "end\n"

/* KEYS map log index events lineage epoch; ARGV id kind img hash info
 * if-match if-none-match max_maps post events_max epoch min_lineage. */
static const char put_src[] = LUA_COMMON
    "local g = guard(KEYS[6], KEYS[5], ARGV[11], ARGV[12])\n"
    "if g then return {g, '0', '0'} end\n"
    "local h = redis.call('HMGET', KEYS[1], 'version', 'lineage', 'hash')\n"
    "local cv, cl = h[1], h[2]\n"
    "local t = nil\n"
    "if cv then t = cv .. '-' .. cl end\n"
    "if not holds(t, ARGV[6], ARGV[7]) then return {'precondition', cv or '0', cl or '0'} end\n"
    "if ARGV[9] == '1' and cv and ARGV[4] ~= '' and h[3] == ARGV[4] then\n"
    "  return {'unchanged', cv, cl}\n"
    "end\n"
    "if not cv and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[8]) then\n"
    "  return {'limit', '0', '0'}\n"
    "end\n"
    "local v = 1\n"
    "if cv then v = tonumber(cv) + 1 end\n"
    "local l = redis.call('INCR', KEYS[5])\n"
    "redis.call('DEL', KEYS[2])\n"
    "redis.call('HSET', KEYS[1], 'kind', ARGV[2], 'version', num(v), 'lineage', num(l),\n"
    "           'snap', ARGV[3], 'snap_version', num(v), 'hash', ARGV[4], 'info', ARGV[5])\n"
    "redis.call('SADD', KEYS[3], ARGV[1])\n"
    "redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[10], '*', 'id', ARGV[1], 'op', 'put',\n"
    "           'v', num(v), 'l', num(l))\n"
    "local created = '0'\n"
    "if not cv then created = '1' end\n"
    "return {'ok', num(v), num(l), created}\n";

/* KEYS map log events epoch lineage; ARGV id base_version base_lineage
 * body if-match if-none-match img info keep events_max epoch min_lineage. */
static const char patch_src[] = LUA_COMMON
    "local g = guard(KEYS[4], KEYS[5], ARGV[11], ARGV[12])\n"
    "if g then return {g, '0', '0'} end\n"
    "local h = redis.call('HMGET', KEYS[1], 'version', 'lineage')\n"
    "local cv, cl = h[1], h[2]\n"
    "if not cv then return {'gone', '0', '0'} end\n"
    "if not holds(cv .. '-' .. cl, ARGV[5], ARGV[6]) then return {'precondition', cv, cl} end\n"
    "local ncv, ncl = tonumber(cv), tonumber(cl)\n"
    "local bv, bl = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "if ncl < bl or (ncl == bl and ncv < bv) then return {'rollback', cv, cl} end\n"
    "if ncv ~= bv or ncl ~= bl then return {'conflict', cv, cl} end\n"
    "local v = ncv + 1\n"
    "redis.call('XADD', KEYS[2], '0-' .. num(v), 'body', ARGV[4])\n"
    "redis.call('HSET', KEYS[1], 'version', num(v), 'hash', '', 'info', ARGV[8])\n"
    "if ARGV[7] ~= '' then\n"
    "  redis.call('HSET', KEYS[1], 'snap', ARGV[7], 'snap_version', num(v))\n"
    "  local keep = v - tonumber(ARGV[9])\n"
    "  if keep > 0 then redis.call('XTRIM', KEYS[2], 'MINID', '0-' .. num(keep)) end\n"
    "end\n"
    "redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[10], '*', 'id', ARGV[1], 'op', 'patch',\n"
    "           'v', num(v), 'l', cl)\n"
    "return {'ok', num(v), cl}\n";

/* KEYS map log index events epoch lineage; ARGV id if-match if-none-match
 * events_max epoch min_lineage. */
static const char remove_src[] = LUA_COMMON
    "local g = guard(KEYS[5], KEYS[6], ARGV[5], ARGV[6])\n"
    "if g then return {g, '0', '0'} end\n"
    "local h = redis.call('HMGET', KEYS[1], 'version', 'lineage')\n"
    "local cv, cl = h[1], h[2]\n"
    "if not cv then return {'gone', '0', '0'} end\n"
    "if not holds(cv .. '-' .. cl, ARGV[2], ARGV[3]) then return {'precondition', cv, cl} end\n"
    "redis.call('DEL', KEYS[1], KEYS[2])\n"
    "redis.call('SREM', KEYS[3], ARGV[1])\n"
    "redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'id', ARGV[1], 'op', 'del',\n"
    "           'v', cv, 'l', cl)\n"
    "return {'ok', cv, cl}\n";

/* KEYS map log index events lineage epoch; ARGV id kind img hash info
 * version lineage epoch events_max. */
static const char restore_src[] = LUA_COMMON
    "if ARGV[8] ~= '*' and redis.call('GET', KEYS[6]) ~= ARGV[8] then\n"
    "  return {'epoch', '0', '0'}\n"
    "end\n"
    "local v, l = tonumber(ARGV[6]), tonumber(ARGV[7])\n"
    "local h = redis.call('HMGET', KEYS[1], 'version', 'lineage')\n"
    "if h[1] then\n"
    "  local cv, cl = tonumber(h[1]), tonumber(h[2])\n"
    "  if cl > l or (cl == l and cv >= v) then return {'newer', h[1], h[2]} end\n"
    "end\n"
    "redis.call('DEL', KEYS[2])\n"
    "redis.call('HSET', KEYS[1], 'kind', ARGV[2], 'version', ARGV[6], 'lineage', ARGV[7],\n"
    "           'snap', ARGV[3], 'snap_version', ARGV[6], 'hash', ARGV[4], 'info', ARGV[5])\n"
    "redis.call('SADD', KEYS[3], ARGV[1])\n"
    "if tonumber(redis.call('GET', KEYS[5]) or '0') < l then redis.call('SET', KEYS[5], ARGV[7]) "
    "end\n"
    "redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[9], '*', 'id', ARGV[1], 'op', 'put',\n"
    "           'v', ARGV[6], 'l', ARGV[7])\n"
    "return {'ok', ARGV[6], ARGV[7]}\n";

/* KEYS epoch lineage events index. */
static const char probe_src[] = "local e = redis.call('GET', KEYS[1]) or ''\n"
                                "local l = redis.call('GET', KEYS[2]) or '0'\n"
                                "local t = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)\n"
                                "local tid = ''\n"
                                "if #t > 0 then tid = t[1][1] end\n"
                                "return {e, l, tid, redis.call('SCARD', KEYS[4])}\n";

/* KEYS epoch lineage; ARGV known fresh min_lineage. TIME before writes
 * needs effects replication before Redis 7 (redis.replicate_commands;
 * always on since). */
static const char epoch_src[] = LUA_COMMON
    "redis.replicate_commands()\n"
    "local cur = redis.call('GET', KEYS[1])\n"
    "local c = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
    "local want = tonumber(ARGV[3])\n"
    "local renewed = '0'\n"
    "if (not cur) or (ARGV[1] ~= '' and cur == ARGV[1]) then\n"
    "  redis.call('SET', KEYS[1], ARGV[2])\n"
    "  cur = ARGV[2]\n"
    "  local t = redis.call('TIME')\n"
    "  local floor = (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 1024\n"
    "  if floor > want then want = floor end\n"
    "  renewed = '1'\n"
    "end\n"
    "if c < want then redis.call('SET', KEYS[2], num(want)); c = want end\n"
    "return {renewed, cur, num(c)}\n";

/* KEYS map log. */
static const char load_src[] =
    "local h = redis.call('HMGET', KEYS[1], 'kind', 'version', 'lineage', 'snap_version',\n"
    "                     'snap', 'hash')\n"
    "if not h[2] then return {'gone'} end\n"
    "local out = {'ok', h[1], h[2], h[3], h[4], h[5], h[6] or ''}\n"
    "local from = tonumber(h[4]) + 1\n"
    "if tonumber(h[2]) >= from then\n"
    "  local es = redis.call('XRANGE', KEYS[2], '0-' .. from, '0-' .. h[2])\n"
    "  for i = 1, #es do out[#out + 1] = es[i][2][2] end\n"
    "end\n"
    "return out\n";

/* KEYS map log epoch lineage; ARGV lineage version epoch min_lineage. */
static const char sync_src[] =
    LUA_COMMON "local g = guard(KEYS[3], KEYS[4], ARGV[3], ARGV[4])\n"
               "if g then return {g, '0', '0'} end\n"
               "local h = redis.call('HMGET', KEYS[1], 'version', 'lineage')\n"
               "if not h[1] then return {'gone', '0', '0'} end\n"
               "local sl, ml = tonumber(h[2]), tonumber(ARGV[1])\n"
               "if sl < ml then return {'behind', h[1], h[2]} end\n"
               "if sl ~= ml then return {'reload', h[1], h[2]} end\n"
               "local cur, have = tonumber(h[1]), tonumber(ARGV[2])\n"
               "if cur < have then return {'behind', h[1], h[2]} end\n"
               "if cur == have then return {'same', h[1], h[2]} end\n"
               "local es = redis.call('XRANGE', KEYS[2], '0-' .. num(have + 1), '0-' .. num(cur))\n"
               "if #es ~= cur - have then return {'reload', h[1], h[2]} end\n"
               "local out = {'entries', h[1], h[2]}\n"
               "for i = 1, #es do out[#out + 1] = es[i][2][2] end\n"
               "return out\n";

/* KEYS index; ARGV prefix. */
static const char list_src[] =
    "local ids = redis.call('SMEMBERS', KEYS[1])\n"
    "local out = {}\n"
    "for i = 1, #ids do\n"
    "  local h = redis.call('HMGET', ARGV[1] .. 'map:' .. ids[i], 'version', 'lineage', 'info')\n"
    "  if h[1] then\n"
    "    out[#out + 1] = ids[i]\n"
    "    out[#out + 1] = h[1]\n"
    "    out[#out + 1] = h[2]\n"
    "    out[#out + 1] = h[3] or ''\n"
    "  end\n"
    "end\n"
    "return out\n";

struct pf_rstore {
    pf_redis *redis;
    char prefix[64];
    int wait_replicas, wait_ms;
    pf_redis_script put, patch, remove, restore, load, sync, list, probe, epoch;
};

pf_rstore *pf_rstore_create(pf_redis *redis, const char *prefix) {
    pf_rstore *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->redis = redis;
    snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
    pf_redis_script_init(&s->put, put_src);
    pf_redis_script_init(&s->patch, patch_src);
    pf_redis_script_init(&s->remove, remove_src);
    pf_redis_script_init(&s->restore, restore_src);
    pf_redis_script_init(&s->load, load_src);
    pf_redis_script_init(&s->sync, sync_src);
    pf_redis_script_init(&s->list, list_src);
    pf_redis_script_init(&s->probe, probe_src);
    pf_redis_script_init(&s->epoch, epoch_src);
    return s;
}

void pf_rstore_destroy(pf_rstore *s) { free(s); }

pf_redis *pf_rstore_redis(const pf_rstore *s) { return s->redis; }

void pf_rstore_set_wait(pf_rstore *s, int replicas, int wait_ms) {
    s->wait_replicas = replicas < 0                    ? 0
                       : replicas > PF_RSTORE_WAIT_MAX ? PF_RSTORE_WAIT_MAX
                                                       : replicas;
    s->wait_ms = wait_ms < 1 ? 1 : wait_ms;
}

/* Key names: "<prefix><what><id>". */
typedef struct key {
    char b[160];
    size_t n;
} key;

static key mkkey(const pf_rstore *s, const char *what, const char *id) {
    key k;
    int n = snprintf(k.b, sizeof(k.b), "%s%s%s", s->prefix, what, id ? id : "");
    k.n = n < 0 ? 0 : (size_t)n < sizeof(k.b) ? (size_t)n : sizeof(k.b) - 1;
    return k;
}

/* An argument list being built. */
typedef struct args {
    const char *v[24];
    size_t l[24];
    char nums[8][24];
    int n, nnums;
} args;

static void arg(args *a, const void *p, size_t len) {
    a->v[a->n] = p;
    a->l[a->n] = len;
    a->n++;
}

static void arg_s(args *a, const char *s) { arg(a, s ? s : "", s ? strlen(s) : 0); }

static void arg_k(args *a, const key *k) { arg(a, k->b, k->n); }

static void arg_u(args *a, uint64_t v) {
    char *b = a->nums[a->nnums++];
    int n = snprintf(b, 24, "%llu", (unsigned long long)v);
    arg(a, b, (size_t)n);
}

/* The guard's two arguments: epoch ('*': none) and min_lineage. */
static void arg_guard(args *a, const pf_rstore_guard *g) {
    arg_s(a, g ? g->epoch : "*");
    arg_u(a, g ? g->min_lineage : 0);
}

static bool str_is(const redisReply *r, const char *s) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
           r->len == strlen(s) && memcmp(r->str, s, r->len) == 0;
}

static bool get_u64(const redisReply *r, uint64_t *out) {
    char buf[32];
    char *end;
    if (!r) return false;
    if (r->type == REDIS_REPLY_INTEGER) {
        if (r->integer < 0) return false;
        *out = (uint64_t)r->integer;
        return true;
    }
    if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len >= sizeof(buf)) return false;
    memcpy(buf, r->str, r->len);
    buf[r->len] = '\0';
    *out = strtoull(buf, &end, 10);
    return *end == '\0';
}

static pf_status bad_reply(pf_proto_error *e, const char *what) {
    return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                              "The map store answered %s in a form this server does not know.",
                              what);
}

/* Runs script sc on a pooled connection (a read: its outcome does not
 * matter when it fails). */
static redisReply *run(pf_rstore *s, uint64_t deadline_ns, pf_redis_script *sc, int nkeys,
                       const args *a, pf_proto_error *e) {
    redisContext *c = pf_redis_get(s->redis, deadline_ns, e);
    redisReply *rep;
    if (!c) return NULL;
    rep = pf_redis_eval(c, deadline_ns, sc, nkeys, a->n, a->v, a->l, e);
    pf_redis_put(s->redis, c);
    return rep;
}

/* {'<result>', version, lineage[, created]} into ack. */
static pf_status read_ack(redisReply *rep, pf_rstore_ack *ack, pf_proto_error *e) {
    static const struct {
        const char *name;
        pf_rstore_result r;
    } names[] = {{"ok", PF_RSTORE_OK},
                 {"unchanged", PF_RSTORE_UNCHANGED},
                 {"precondition", PF_RSTORE_PRECONDITION},
                 {"limit", PF_RSTORE_LIMIT},
                 {"conflict", PF_RSTORE_CONFLICT},
                 {"gone", PF_RSTORE_GONE},
                 {"epoch", PF_RSTORE_EPOCH},
                 {"rollback", PF_RSTORE_ROLLBACK},
                 {"newer", PF_RSTORE_NEWER}};
    size_t i;
    memset(ack, 0, sizeof(*ack));
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3) goto bad;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (str_is(rep->element[0], names[i].name)) break;
    if (i == sizeof(names) / sizeof(names[0])) goto bad;
    ack->result = names[i].r;
    if (!get_u64(rep->element[1], &ack->version) || !get_u64(rep->element[2], &ack->lineage))
        goto bad;
    ack->created = rep->elements > 3 && str_is(rep->element[3], "1");
    freeReplyObject(rep);
    return PF_OK;
bad:
    freeReplyObject(rep);
    return bad_reply(e, "a change");
}

/* After a change on c: WAIT for the replicas asked for, at most wait_ms
 * and never past deadline_ns. */
static void wait_replicas(pf_rstore *s, redisContext *c, uint64_t deadline_ns, pf_rstore_ack *ack) {
    uint64_t now = pf_clock_now_ns();
    int64_t left_ms = now < deadline_ns ? (int64_t)((deadline_ns - now) / 1000000ull) : 0;
    int64_t ms = s->wait_ms < left_ms ? s->wait_ms : left_ms;
    char n[16], t[24];
    const char *av[3] = {"WAIT", n, t};
    size_t al[3] = {4, 0, 0};
    redisReply *rep;
    pf_proto_error e;
    ack->replicas = 0;
    ack->unconfirmed = true;
    /* WAIT n 0 waits forever: with under a millisecond left, do not ask. */
    if (ms < 1) return;
    al[1] = (size_t)snprintf(n, sizeof(n), "%d", s->wait_replicas);
    al[2] = (size_t)snprintf(t, sizeof(t), "%lld", (long long)ms);
    if (!(rep = pf_redis_call(c, deadline_ns, 3, av, al, &e))) return;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer >= 0) {
        ack->replicas = rep->integer > PF_RSTORE_WAIT_MAX ? PF_RSTORE_WAIT_MAX : (int)rep->integer;
        ack->unconfirmed = ack->replicas < s->wait_replicas;
    }
    freeReplyObject(rep);
}

/* Runs change script sc on a pooled connection, its answer into ack, then
 * the replica wait. An I/O error after the script was sent is "outcome
 * unknown". */
static pf_status change(pf_rstore *s, uint64_t deadline_ns, pf_redis_script *sc, int nkeys,
                        const args *a, pf_rstore_ack *ack, pf_proto_error *e) {
    redisContext *c = pf_redis_get(s->redis, deadline_ns, e);
    redisReply *rep;
    pf_status st;
    memset(ack, 0, sizeof(*ack));
    if (!c) return e->status;
    rep = pf_redis_eval(c, deadline_ns, sc, nkeys, a->n, a->v, a->l, e);
    if (!rep) {
        if (pf_redis_sent(c)) {
            const char *why = strstr(e->message, "timed out") ? "no answer in time" : c->errstr;
            pf_proto_error_set(e, PF_EIO, PF_ERR_STORE_OUTCOME_UNKNOWN, NULL,
                               "The change was sent to the map store, which did not confirm it "
                               "within --store-timeout-ms (%.60s): it may or may not have been "
                               "made. Read the map, or retry with If-Match.",
                               why);
        }
        pf_redis_put(s->redis, c);
        return e->status;
    }
    if ((st = read_ack(rep, ack, e)) == PF_OK && ack->result == PF_RSTORE_OK && s->wait_replicas)
        wait_replicas(s, c, deadline_ns, ack);
    pf_redis_put(s->redis, c);
    return st;
}

pf_status pf_rstore_put(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_upload *p,
                        pf_rstore_ack *ack, pf_proto_error *e) {
    key km = mkkey(s, "map:", p->id), kl = mkkey(s, "log:", p->id), ki = mkkey(s, "index", NULL),
        ke = mkkey(s, "events", NULL), kn = mkkey(s, "lineage", NULL), kp = mkkey(s, "epoch", NULL);
    char im[512], inm[512];
    args a = {0};
    pf_precond_list_arg(&p->cond->match, im, sizeof(im));
    pf_precond_list_arg(&p->cond->none_match, inm, sizeof(inm));
    arg_k(&a, &km);
    arg_k(&a, &kl);
    arg_k(&a, &ki);
    arg_k(&a, &ke);
    arg_k(&a, &kn);
    arg_k(&a, &kp);
    arg_s(&a, p->id);
    arg_s(&a, p->kind);
    arg(&a, p->img, p->img_len);
    arg_s(&a, p->hash_hex);
    arg_s(&a, p->info);
    arg_s(&a, im);
    arg_s(&a, inm);
    arg_u(&a, (uint64_t)p->max_maps);
    arg_s(&a, p->post ? "1" : "0");
    arg_u(&a, PF_RSTORE_EVENTS_MAX);
    arg_guard(&a, p->guard);
    return change(s, deadline_ns, &s->put, 6, &a, ack, e);
}

pf_status pf_rstore_patch(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_edit *p,
                          pf_rstore_ack *ack, pf_proto_error *e) {
    key km = mkkey(s, "map:", p->id), kl = mkkey(s, "log:", p->id), ke = mkkey(s, "events", NULL),
        kp = mkkey(s, "epoch", NULL), kn = mkkey(s, "lineage", NULL);
    char im[512], inm[512];
    args a = {0};
    pf_precond_list_arg(&p->cond->match, im, sizeof(im));
    pf_precond_list_arg(&p->cond->none_match, inm, sizeof(inm));
    arg_k(&a, &km);
    arg_k(&a, &kl);
    arg_k(&a, &ke);
    arg_k(&a, &kp);
    arg_k(&a, &kn);
    arg_s(&a, p->id);
    arg_u(&a, p->base_version);
    arg_u(&a, p->base_lineage);
    arg(&a, p->body, p->body_len);
    arg_s(&a, im);
    arg_s(&a, inm);
    arg(&a, p->img ? p->img : "", p->img ? p->img_len : 0);
    arg_s(&a, p->info);
    arg_u(&a, PF_RSTORE_LOG_KEEP);
    arg_u(&a, PF_RSTORE_EVENTS_MAX);
    arg_guard(&a, p->guard);
    return change(s, deadline_ns, &s->patch, 5, &a, ack, e);
}

pf_status pf_rstore_remove(pf_rstore *s, uint64_t deadline_ns, const char *id,
                           const pf_precond *cond, const pf_rstore_guard *guard, pf_rstore_ack *ack,
                           pf_proto_error *e) {
    key km = mkkey(s, "map:", id), kl = mkkey(s, "log:", id), ki = mkkey(s, "index", NULL),
        ke = mkkey(s, "events", NULL), kp = mkkey(s, "epoch", NULL), kn = mkkey(s, "lineage", NULL);
    char im[512], inm[512];
    args a = {0};
    pf_precond_list_arg(&cond->match, im, sizeof(im));
    pf_precond_list_arg(&cond->none_match, inm, sizeof(inm));
    arg_k(&a, &km);
    arg_k(&a, &kl);
    arg_k(&a, &ki);
    arg_k(&a, &ke);
    arg_k(&a, &kp);
    arg_k(&a, &kn);
    arg_s(&a, id);
    arg_s(&a, im);
    arg_s(&a, inm);
    arg_u(&a, PF_RSTORE_EVENTS_MAX);
    arg_guard(&a, guard);
    return change(s, deadline_ns, &s->remove, 6, &a, ack, e);
}

pf_status pf_rstore_put_back(pf_rstore *s, uint64_t deadline_ns, const pf_rstore_restore *p,
                             pf_rstore_ack *ack, pf_proto_error *e) {
    key km = mkkey(s, "map:", p->id), kl = mkkey(s, "log:", p->id), ki = mkkey(s, "index", NULL),
        ke = mkkey(s, "events", NULL), kn = mkkey(s, "lineage", NULL), kp = mkkey(s, "epoch", NULL);
    args a = {0};
    arg_k(&a, &km);
    arg_k(&a, &kl);
    arg_k(&a, &ki);
    arg_k(&a, &ke);
    arg_k(&a, &kn);
    arg_k(&a, &kp);
    arg_s(&a, p->id);
    arg_s(&a, p->kind);
    arg(&a, p->img, p->img_len);
    arg_s(&a, p->hash_hex);
    arg_s(&a, p->info);
    arg_u(&a, p->version);
    arg_u(&a, p->lineage);
    arg_s(&a, p->guard ? p->guard->epoch : "*");
    arg_u(&a, PF_RSTORE_EVENTS_MAX);
    return change(s, deadline_ns, &s->restore, 6, &a, ack, e);
}

/* Points bodies/lens at the string elements rep->element[first..]. */
static pf_status entries(redisReply *rep, size_t first, const char ***bodies, size_t **lens,
                         size_t *n) {
    size_t k = rep->elements - first;
    *n = k;
    *bodies = calloc(k ? k : 1, sizeof(**bodies));
    *lens = calloc(k ? k : 1, sizeof(**lens));
    if (!*bodies || !*lens) return PF_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        const redisReply *x = rep->element[first + i];
        if (x->type != REDIS_REPLY_STRING) return PF_EPARSE;
        (*bodies)[i] = x->str;
        (*lens)[i] = x->len;
    }
    return PF_OK;
}

pf_status pf_rstore_load(pf_rstore *s, uint64_t deadline_ns, const char *id, pf_rstore_map *out,
                         bool *found, pf_proto_error *e) {
    key km = mkkey(s, "map:", id), kl = mkkey(s, "log:", id);
    args a = {0};
    redisReply *rep;
    const redisReply *k, *img, *h;
    pf_status st;
    memset(out, 0, sizeof(*out));
    *found = false;
    arg_k(&a, &km);
    arg_k(&a, &kl);
    if (!(rep = run(s, deadline_ns, &s->load, 2, &a, e))) return e->status;
    out->reply_ = rep;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 && str_is(rep->element[0], "gone"))
        return PF_OK;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 7 || !str_is(rep->element[0], "ok"))
        goto bad;
    k = rep->element[1];
    img = rep->element[5];
    h = rep->element[6];
    if (k->type != REDIS_REPLY_STRING || k->len > PF_RSTORE_KIND_MAX ||
        img->type != REDIS_REPLY_STRING || h->type != REDIS_REPLY_STRING || h->len > 64 ||
        !get_u64(rep->element[2], &out->version) || !get_u64(rep->element[3], &out->lineage) ||
        !get_u64(rep->element[4], &out->snap_version) || out->snap_version > out->version)
        goto bad;
    memcpy(out->kind, k->str, k->len);
    memcpy(out->hash_hex, h->str, h->len);
    out->img = (const unsigned char *)img->str;
    out->img_len = img->len;
    st = entries(rep, 7, &out->bodies, &out->lens, &out->nentries);
    if (st == PF_ENOMEM) {
        pf_rstore_map_free(out);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    if (st) goto bad;
    if (out->nentries != out->version - out->snap_version) {
        pf_rstore_map_free(out);
        return pf_proto_error_set(e, PF_EIO, PF_ERR_STORAGE, NULL,
                                  "Map '%s' in the store lacks log entries between its snapshot "
                                  "and its current version.",
                                  id);
    }
    *found = true;
    return PF_OK;
bad:
    pf_rstore_map_free(out);
    return bad_reply(e, "a load");
}

void pf_rstore_map_free(pf_rstore_map *m) {
    free(m->bodies);
    free(m->lens);
    if (m->reply_) freeReplyObject(m->reply_);
    memset(m, 0, sizeof(*m));
}

pf_status pf_rstore_catch_up(pf_rstore *s, uint64_t deadline_ns, const char *id, uint64_t lineage,
                             uint64_t version, const pf_rstore_guard *guard, pf_rstore_sync *out,
                             pf_proto_error *e) {
    static const struct {
        const char *name;
        pf_rstore_sync_kind k;
    } names[] = {{"same", PF_RSTORE_SYNC_SAME},     {"entries", PF_RSTORE_SYNC_ENTRIES},
                 {"reload", PF_RSTORE_SYNC_RELOAD}, {"gone", PF_RSTORE_SYNC_GONE},
                 {"epoch", PF_RSTORE_SYNC_EPOCH},   {"rollback", PF_RSTORE_SYNC_ROLLBACK},
                 {"behind", PF_RSTORE_SYNC_BEHIND}};
    key km = mkkey(s, "map:", id), kl = mkkey(s, "log:", id), kp = mkkey(s, "epoch", NULL),
        kn = mkkey(s, "lineage", NULL);
    args a = {0};
    redisReply *rep;
    size_t i;
    memset(out, 0, sizeof(*out));
    arg_k(&a, &km);
    arg_k(&a, &kl);
    arg_k(&a, &kp);
    arg_k(&a, &kn);
    arg_u(&a, lineage);
    arg_u(&a, version);
    arg_guard(&a, guard);
    if (!(rep = run(s, deadline_ns, &s->sync, 4, &a, e))) return e->status;
    out->reply_ = rep;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3) goto bad;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (str_is(rep->element[0], names[i].name)) break;
    if (i == sizeof(names) / sizeof(names[0])) goto bad;
    out->kind = names[i].k;
    if (!get_u64(rep->element[1], &out->version) || !get_u64(rep->element[2], &out->lineage))
        goto bad;
    if (out->kind == PF_RSTORE_SYNC_ENTRIES) {
        pf_status st = entries(rep, 3, &out->bodies, &out->lens, &out->nentries);
        if (st == PF_ENOMEM) {
            pf_rstore_sync_free(out);
            return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        }
        if (st || out->nentries != out->version - version) goto bad;
    }
    return PF_OK;
bad:
    pf_rstore_sync_free(out);
    return bad_reply(e, "a catch-up");
}

void pf_rstore_sync_free(pf_rstore_sync *y) {
    free(y->bodies);
    free(y->lens);
    if (y->reply_) freeReplyObject(y->reply_);
    memset(y, 0, sizeof(*y));
}

pf_status pf_rstore_list_all(pf_rstore *s, uint64_t deadline_ns, pf_rstore_list *out,
                             pf_proto_error *e) {
    key ki = mkkey(s, "index", NULL);
    args a = {0};
    redisReply *rep;
    memset(out, 0, sizeof(*out));
    arg_k(&a, &ki);
    arg_s(&a, s->prefix);
    if (!(rep = run(s, deadline_ns, &s->list, 1, &a, e))) return e->status;
    out->reply_ = rep;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements % 4) goto bad;
    out->items = calloc(rep->elements / 4 + 1, sizeof(*out->items));
    if (!out->items) {
        pf_rstore_list_free(out);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    for (size_t i = 0; i + 3 < rep->elements; i += 4) {
        pf_rstore_entry *it = &out->items[out->n];
        const redisReply *id = rep->element[i], *info = rep->element[i + 3];
        if (id->type != REDIS_REPLY_STRING || info->type != REDIS_REPLY_STRING ||
            !get_u64(rep->element[i + 1], &it->version) ||
            !get_u64(rep->element[i + 2], &it->lineage))
            goto bad;
        it->id = id->str;
        it->info = info->str;
        out->n++;
    }
    return PF_OK;
bad:
    pf_rstore_list_free(out);
    return bad_reply(e, "the list of maps");
}

void pf_rstore_list_free(pf_rstore_list *l) {
    free(l->items);
    if (l->reply_) freeReplyObject(l->reply_);
    memset(l, 0, sizeof(*l));
}

/* Events */

static bool parse_pos(const char *s, size_t len, pf_rstore_pos *out) {
    char buf[48], *dash, *end;
    if (len == 0 || len >= sizeof(buf)) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!(dash = strchr(buf, '-'))) return false;
    *dash = '\0';
    out->ms = strtoull(buf, &end, 10);
    if (*end || end == buf) return false;
    out->seq = strtoull(dash + 1, &end, 10);
    return *end == '\0' && end != dash + 1;
}

bool pf_rstore_pos_after(pf_rstore_pos a, pf_rstore_pos b) {
    return a.ms > b.ms || (a.ms == b.ms && a.seq > b.seq);
}

pf_status pf_rstore_events_tail(pf_rstore *s, redisContext *c, uint64_t deadline_ns,
                                pf_rstore_pos *out, pf_proto_error *e) {
    key ke = mkkey(s, "events", NULL);
    const char *av[6] = {"XREVRANGE", ke.b, "+", "-", "COUNT", "1"};
    size_t al[6] = {9, ke.n, 1, 1, 5, 1};
    redisReply *rep = pf_redis_call(c, deadline_ns, 6, av, al, e);
    out->ms = out->seq = 0;
    if (!rep) return e->status;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 &&
        rep->element[0]->type == REDIS_REPLY_ARRAY && rep->element[0]->elements == 2) {
        const redisReply *id = rep->element[0]->element[0];
        if (id->type != REDIS_REPLY_STRING || !parse_pos(id->str, id->len, out)) {
            freeReplyObject(rep);
            return bad_reply(e, "the newest event");
        }
    }
    freeReplyObject(rep);
    return PF_OK;
}

/* Whether events after `after` were trimmed: Redis 7 reports the largest
 * id it deleted; without that field, an oldest entry after `after` is
 * taken as a gap (a needless check of every copy at worst). */
static pf_status trimmed_after(pf_rstore *s, redisContext *c, uint64_t deadline_ns,
                               pf_rstore_pos after, bool *gap, pf_proto_error *e) {
    key ke = mkkey(s, "events", NULL);
    const char *av[3] = {"XINFO", "STREAM", ke.b};
    size_t al[3] = {5, 6, ke.n};
    redisReply *rep = pf_redis_call(c, deadline_ns, 3, av, al, e);
    pf_rstore_pos maxdel = {0, 0}, first = {0, 0};
    bool have_max = false, have_first = false;
    *gap = false;
    if (!rep) return e->status;
    if (rep->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i + 1 < rep->elements; i += 2) {
            const redisReply *k = rep->element[i], *v = rep->element[i + 1];
            if (str_is(k, "max-deleted-entry-id") && v->type == REDIS_REPLY_STRING)
                have_max = parse_pos(v->str, v->len, &maxdel);
            else if (str_is(k, "first-entry") && v->type == REDIS_REPLY_ARRAY && v->elements == 2 &&
                     v->element[0]->type == REDIS_REPLY_STRING)
                have_first = parse_pos(v->element[0]->str, v->element[0]->len, &first);
        }
    if (have_max)
        *gap = pf_rstore_pos_after(maxdel, after);
    else if (have_first)
        *gap = (after.ms || after.seq) && pf_rstore_pos_after(first, after);
    freeReplyObject(rep);
    return PF_OK;
}

static char event_op(const redisReply *v) {
    if (str_is(v, "put")) return 'p';
    if (str_is(v, "patch")) return 'P';
    if (str_is(v, "del")) return 'd';
    return 0;
}

pf_status pf_rstore_events_read(pf_rstore *s, redisContext *c, uint64_t deadline_ns,
                                pf_rstore_pos *pos, int block_ms, pf_rstore_event *ev, size_t cap,
                                size_t *n, bool *gap, pf_proto_error *e) {
    key ke = mkkey(s, "events", NULL);
    char count[24], block[24], from[48];
    const char *av[7] = {"XREAD", "COUNT", count, "BLOCK", block, "STREAMS", ke.b};
    size_t al[8] = {5, 5, 0, 5, 0, 7, ke.n, 0};
    const char *av8[8];
    redisReply *rep, *list;
    pf_rstore_pos old = *pos;
    pf_status st = PF_OK;
    *n = 0;
    *gap = false;
    al[2] = (size_t)snprintf(count, sizeof(count), "%zu", cap);
    al[4] = (size_t)snprintf(block, sizeof(block), "%d", block_ms);
    al[7] = (size_t)snprintf(from, sizeof(from), "%llu-%llu", (unsigned long long)pos->ms,
                             (unsigned long long)pos->seq);
    memcpy(av8, av, sizeof(av));
    av8[7] = from;
    if (!(rep = pf_redis_call(c, deadline_ns, 8, av8, al, e))) return e->status;
    if (rep->type == REDIS_REPLY_NIL) goto out; /* nothing within block_ms */
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 1 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY || rep->element[0]->elements != 2 ||
        rep->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
        goto bad;
    list = rep->element[0]->element[1];
    for (size_t i = 0; i < list->elements && *n < cap; i++) {
        const redisReply *ent = list->element[i], *fields;
        pf_rstore_event *x = &ev[*n];
        bool have_id = false, have_v = false, have_l = false;
        if (ent->type != REDIS_REPLY_ARRAY || ent->elements != 2 ||
            ent->element[0]->type != REDIS_REPLY_STRING ||
            !parse_pos(ent->element[0]->str, ent->element[0]->len, pos) ||
            ent->element[1]->type != REDIS_REPLY_ARRAY)
            goto bad;
        fields = ent->element[1];
        memset(x, 0, sizeof(*x));
        for (size_t f = 0; f + 1 < fields->elements; f += 2) {
            const redisReply *k = fields->element[f], *v = fields->element[f + 1];
            if (str_is(k, "id") && v->type == REDIS_REPLY_STRING && v->len < sizeof(x->id)) {
                memcpy(x->id, v->str, v->len);
                have_id = true;
            } else if (str_is(k, "op")) {
                x->op = event_op(v);
            } else if (str_is(k, "v")) {
                have_v = get_u64(v, &x->version);
            } else if (str_is(k, "l")) {
                have_l = get_u64(v, &x->lineage);
            }
        }
        if (have_id && have_v && have_l && x->op) (*n)++; /* else: not ours to read; skipped */
    }
    if (list->elements > 0) st = trimmed_after(s, c, deadline_ns, old, gap, e);
    freeReplyObject(rep);
    return st;
out:
    freeReplyObject(rep);
    return PF_OK;
bad:
    freeReplyObject(rep);
    return bad_reply(e, "the events stream");
}

/* Who the store is */

static bool copy_str(const redisReply *r, char *out, size_t n) {
    if (!r || r->type != REDIS_REPLY_STRING || r->len >= n) return false;
    memcpy(out, r->str, r->len);
    out[r->len] = '\0';
    return true;
}

/* Runs script sc (keys and arguments in a) on the caller's connection. */
static redisReply *run_on(redisContext *c, uint64_t deadline_ns, pf_redis_script *sc, int nkeys,
                          const args *a, pf_proto_error *e) {
    return pf_redis_eval(c, deadline_ns, sc, nkeys, a->n, a->v, a->l, e);
}

pf_status pf_rstore_probe(pf_rstore *s, redisContext *c, uint64_t deadline_ns, pf_rstore_state *out,
                          pf_proto_error *e) {
    key kp = mkkey(s, "epoch", NULL), kn = mkkey(s, "lineage", NULL), ke = mkkey(s, "events", NULL),
        ki = mkkey(s, "index", NULL);
    args a = {0};
    redisReply *rep;
    memset(out, 0, sizeof(*out));
    arg_k(&a, &kp);
    arg_k(&a, &kn);
    arg_k(&a, &ke);
    arg_k(&a, &ki);
    if (!(rep = run_on(c, deadline_ns, &s->probe, 4, &a, e))) return e->status;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 4 ||
        !copy_str(rep->element[0], out->epoch, sizeof(out->epoch)) ||
        !get_u64(rep->element[1], &out->lineage) || !get_u64(rep->element[3], &out->maps) ||
        rep->element[2]->type != REDIS_REPLY_STRING ||
        (rep->element[2]->len &&
         !parse_pos(rep->element[2]->str, rep->element[2]->len, &out->tail))) {
        freeReplyObject(rep);
        return bad_reply(e, "who it is");
    }
    freeReplyObject(rep);
    return PF_OK;
}

pf_status pf_rstore_epoch(pf_rstore *s, redisContext *c, uint64_t deadline_ns, const char *known,
                          const char *fresh, uint64_t min_lineage, bool *renewed,
                          pf_rstore_state *out, pf_proto_error *e) {
    key kp = mkkey(s, "epoch", NULL), kn = mkkey(s, "lineage", NULL);
    args a = {0};
    redisReply *rep;
    memset(out, 0, sizeof(*out));
    *renewed = false;
    arg_k(&a, &kp);
    arg_k(&a, &kn);
    arg_s(&a, known);
    arg_s(&a, fresh);
    arg_u(&a, min_lineage);
    if (!(rep = run_on(c, deadline_ns, &s->epoch, 2, &a, e))) return e->status;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 ||
        !copy_str(rep->element[1], out->epoch, sizeof(out->epoch)) ||
        !get_u64(rep->element[2], &out->lineage)) {
        freeReplyObject(rep);
        return bad_reply(e, "its epoch");
    }
    *renewed = str_is(rep->element[0], "1");
    freeReplyObject(rep);
    return PF_OK;
}
