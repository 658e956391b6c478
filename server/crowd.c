/* crowd.c -- see crowd.h. */
#include "crowd.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>

#include "clock.h"
#include "kind_navmesh.h"
#include "live.h"
#include "nav_json.h"
#include "navmesh.h"

struct pf_crowd {
    pf_live_obj live; /* first: id, map, lineage, owner, ttl, watchers (live.h) */
    pf_crowds *t;
    /* Under the table's lock (pf_live_lock). */
    int64_t tick_hz;
    uint64_t next_ns; /* the next tick */
    bool ticking;     /* a tick job is queued or running */
    uint64_t skipped;
    size_t memory;     /* pf_nav_crowd_memory at the last run */
    size_t charged;    /* to mem */
    pf_mem *mem;       /* the table's budget (outlives every crowd) */
    uint32_t nav_type; /* the map's agent type (index) its mesh is for */
    /* Under mu. */
    uv_mutex_t mu;
    pf_nav_crowd *nc;
    pf_mapver *mv; /* the version nc's mesh matches (a reference) */
    uint64_t frame, steps, step_us;
};

struct pf_crowds {
    pf_live *t;
    /* Under t's lock. */
    uint64_t steps; /* every crowd's */
    void (*notify)(void *ud);
    void *notify_ud;
    pf_mem *mem;
};

static pf_crowd *of(pf_live_obj *o) { return (pf_crowd *)(void *)o; }

static void crowd_free(pf_crowd *c) {
    pf_mem_uncharge(c->mem, PF_MEM_CROWDS, c->charged);
    pf_nav_crowd_destroy(c->nc);
    pf_mapver_release(c->mv);
    uv_mutex_destroy(&c->mu);
    free(c);
}

static void free_obj(pf_live_obj *o) { crowd_free(of(o)); }

static const pf_live_type crowd_type = {free_obj, NULL};

void pf_crowd_retain(pf_crowd *c) { pf_live_retain(&c->live); }

void pf_crowd_release(pf_crowd *c) {
    if (c) pf_live_unref(&c->live);
}

pf_crowds *pf_crowds_create(size_t max_total, size_t max_per_map) {
    pf_crowds *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    if (!(t->t = pf_live_create(&crowd_type, max_total, max_per_map))) {
        free(t);
        return NULL;
    }
    return t;
}

void pf_crowds_destroy(pf_crowds *t) {
    if (!t) return;
    pf_live_destroy(t->t);
    free(t);
}

void pf_crowds_set_mem(pf_crowds *t, pf_mem *mem) { t->mem = mem; }

/* The crowd's charge follows what it holds (c->memory). */
static void recharge(pf_crowd *c) {
    if (c->memory > c->charged)
        pf_mem_charge(c->mem, PF_MEM_CROWDS, c->memory - c->charged);
    else
        pf_mem_uncharge(c->mem, PF_MEM_CROWDS, c->charged - c->memory);
    c->charged = c->memory;
}

/* The crowd's view of its map's version: its agent type's mesh. */
static const pf_navmesh *crowd_view(const pf_crowd *c) {
    return pf_navmesh_agent_type(pf_navmesh_of(c->mv), c->nav_type);
}

void pf_crowds_set_notify(pf_crowds *t, void (*fn)(void *ud), void *ud) {
    pf_live_lock(t->t);
    t->notify = fn;
    t->notify_ud = ud;
    pf_live_unlock(t->t);
}

static void notify(pf_crowds *t) {
    void (*fn)(void *);
    void *ud;
    pf_live_lock(t->t);
    fn = t->notify;
    ud = t->notify_ud;
    pf_live_unlock(t->t);
    if (fn) fn(ud);
}

/* Its map is gone: the crowd ends, and its streams are told. */
static void remove_crowd(pf_crowds *t, pf_crowd *c) {
    pf_live_kill(t->t, &c->live);
    notify(t);
}

static pf_nav_agent_params agent_params(const pf_navmesh *nm, const pf_crowd_agent_spec *a) {
    pf_nav_agent_params p = pf_nav_default_agent(nm);
    if (!isnan(a->radius)) p.radius = a->radius;
    if (!isnan(a->height)) p.height = a->height;
    if (!isnan(a->max_speed)) p.max_speed = a->max_speed;
    if (!isnan(a->max_accel)) p.max_accel = a->max_accel;
    if (!isnan(a->separation)) p.separation = a->separation;
    return p;
}

/* Checks one agent to add against version nm (q: scratch for the nearest
 * polygon search). */
static pf_status check_agent(pf_nav_query *q, const pf_navmesh *nm, const pf_crowd_agent_spec *a,
                             const char *prefix, pf_proto_error *e) {
    pf_nav_agent_params p = agent_params(nm, a);
    pf_nav_info ni;
    float ext[3], s[3];
    char f[96];
    pf_navmesh_info(nm, &ni);
    ni.config.agent_radius = pf_nav_default_agent(nm).radius; /* nm's agent type's */
    /* The parser checked the other parameters' ranges (crowd_json.c); the
     * radius's upper bound is the map's. */
    if (!(p.radius > 0 && p.radius <= ni.config.agent_radius)) {
        snprintf(f, sizeof(f), "%sradius", prefix);
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                  "Field '%s' must be more than 0 and at most %g, the agent radius "
                                  "the map's mesh was built for.",
                                  f, (double)ni.config.agent_radius);
    }
    pf_navmesh_default_extents(nm, ext);
    for (int k = 0; k < 2; k++) {
        const float *pt = k ? a->target : a->position;
        if (k && !a->has_target) continue;
        if (pf_nav_nearest(q, nm, pt, ext, s) != PF_OK) {
            snprintf(f, sizeof(f), "%s%s", prefix, k ? "target" : "position");
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                      "No walkable polygon within +-(%g, %g, %g) of %s (%g, %g, "
                                      "%g).",
                                      (double)ext[0], (double)ext[1], (double)ext[2], f,
                                      (double)pt[0], (double)pt[1], (double)pt[2]);
        }
    }
    return PF_OK;
}

pf_status pf_crowds_add(pf_crowds *t, pf_mapver *mv, const pf_crowd_request *rq,
                        const pf_auth_id *owner, int64_t ttl_s, uint64_t now_ns, pf_crowd **out,
                        bool *total, pf_proto_error *e) {
    pf_crowd *c;
    pf_nav_query *q = NULL;
    pf_status st;
    *out = NULL;
    *total = false;
    if (!(c = calloc(1, sizeof(*c))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (uv_mutex_init(&c->mu)) {
        free(c);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    c->t = t;
    c->mem = t->mem;
    c->tick_hz = rq->tick_hz;
    c->next_ns = now_ns;
    pf_mapver_retain(mv);
    c->mv = mv;
    const pf_navmesh *view;
    if ((st = pf_nav_agent_view(pf_navmesh_of(mv), rq->agent_type, "agent_type", &view, e)))
        goto out_free;
    c->nav_type = pf_nav_agent_index(view);
    /* The budget first: a crowd copies its map's mesh. */
    c->charged = pf_nav_crowd_estimate(view, (uint32_t)rq->max_agents);
    if (!pf_mem_try_charge(t->mem, PF_MEM_CROWDS, c->charged)) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
                                "A crowd of %lld agents on map '%s' needs up to %zu bytes; the "
                                "memory budget (--max-memory) is %llu bytes and %llu are in use. "
                                "Delete crowds, sessions or maps, or raise it.",
                                (long long)rq->max_agents, mv->id, c->charged,
                                (unsigned long long)pf_mem_budget(t->mem),
                                (unsigned long long)pf_mem_used(t->mem));
        c->charged = 0;
        goto out_free;
    }
    st = pf_nav_crowd_create(view, (uint32_t)rq->max_agents, &c->nc);
    if (st == PF_EUNSUPPORTED) {
        pf_proto_error_set(e, st, PF_ERR_UNSUPPORTED, NULL,
                           "Map '%s' was built for agent radius 0: a crowd needs a radius to "
                           "steer by.",
                           mv->id);
        goto out_free;
    }
    if (st) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free;
    }
    if (rq->nagents && pf_nav_query_create(64, &q)) {
        st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
        goto out_free;
    }
    for (size_t i = 0; i < rq->nagents; i++) {
        const pf_crowd_agent_spec *a = &rq->agents[i];
        pf_nav_agent_params p = agent_params(view, a);
        char prefix[32];
        int32_t id;
        snprintf(prefix, sizeof(prefix), "agents[%zu].", i);
        if ((st = check_agent(q, view, a, prefix, e))) goto out_free;
        if ((st = pf_nav_crowd_add(c->nc, a->position, a->has_target ? a->target : NULL, &p, &id,
                                   NULL))) {
            st =
                pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL,
                                   "The crowd could not take agent %zu: %s.", i, pf_status_str(st));
            goto out_free;
        }
    }
    pf_nav_query_destroy(q);
    q = NULL;
    c->memory = pf_nav_crowd_memory(c->nc);
    recharge(c);
    if ((st = pf_live_insert(t->t, &c->live, mv, ttl_s, owner, false, now_ns, total))) {
        pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL, "Too many crowds.");
        goto out_free;
    }
    if (c->tick_hz) notify(t);
    *out = c; /* the table's reference, and the caller's */
    return PF_OK;
out_free:
    pf_nav_query_destroy(q);
    crowd_free(c);
    return st;
}

pf_crowd *pf_crowds_get(pf_crowds *t, const char *map_id, const char *cid, uint64_t now_ns) {
    pf_live_obj *o;
    return pf_live_acquire(t->t, map_id, cid, false, now_ns, &o) == PF_LIVE_OK ? of(o) : NULL;
}

bool pf_crowds_remove(pf_crowds *t, const char *map_id, const char *cid) {
    bool hit = pf_live_remove(t->t, map_id, cid);
    if (hit) notify(t);
    return hit;
}

size_t pf_crowds_drop_map(pf_crowds *t, const char *map_id, uint64_t keep_lineage) {
    size_t n = pf_live_drop_map(t->t, map_id, keep_lineage);
    if (n) notify(t);
    return n;
}

size_t pf_crowds_reap(pf_crowds *t, uint64_t now_ns) {
    size_t n = pf_live_reap(t->t, now_ns);
    if (n) notify(t);
    return n;
}

size_t pf_crowds_count(pf_crowds *t) { return pf_live_count(t->t); }

uint64_t pf_crowds_steps(pf_crowds *t) {
    uint64_t n;
    pf_live_lock(t->t);
    n = t->steps;
    pf_live_unlock(t->t);
    return n;
}

static void add_memory(void *ud, pf_live_obj *o) { *(size_t *)ud += of(o)->memory; }

size_t pf_crowds_memory(pf_crowds *t) {
    size_t n = 0;
    pf_live_each(t->t, NULL, 0, add_memory, &n);
    return n;
}

size_t pf_crowds_count_map(pf_crowds *t, const char *map_id) {
    return pf_live_count_map(t->t, map_id);
}

const char *pf_crowd_id(const pf_crowd *c) { return c->live.id; }
const char *pf_crowd_map_id(const pf_crowd *c) { return c->live.map_id; }

bool pf_crowd_owned_by(const pf_crowd *c, const pf_auth_id *who) {
    return pf_auth_id_equal(&c->live.owner, who);
}

bool pf_crowd_is_gone(pf_crowd *c) { return pf_live_is_gone(c->t->t, &c->live); }

void pf_crowd_watch(pf_crowd *c, bool open) {
    pf_live_watch(c->t->t, &c->live, open, pf_clock_now_ns());
}

/* Ticking */

typedef struct due_arg {
    uint64_t now_ns, next;
    pf_crowd **out;
    size_t n, cap;
} due_arg;

/* One crowd at the ticker's look (the table's lock held). */
static void due_one(void *ud, pf_live_obj *o) {
    due_arg *a = ud;
    pf_crowd *c = of(o);
    uint64_t period;
    if (c->tick_hz <= 0) return;
    period = 1000000000ull / (uint64_t)c->tick_hz;
    if (a->now_ns >= c->next_ns) {
        if (c->ticking) {
            c->skipped++; /* the last tick still runs: skip this one */
            c->next_ns = a->now_ns + period;
        } else if (a->n < a->cap) {
            c->ticking = true;
            pf_live_retain(o);
            a->out[a->n++] = c;
            c->next_ns += period;
            if (c->next_ns <= a->now_ns) c->next_ns = a->now_ns + period; /* fell behind */
        }
    }
    if (!a->next || c->next_ns < a->next) a->next = c->next_ns;
}

size_t pf_crowds_due(pf_crowds *t, uint64_t now_ns, pf_crowd **out, size_t cap, uint64_t *next_ns) {
    due_arg a = {now_ns, 0, out, 0, cap};
    pf_live_each(t->t, NULL, 0, due_one, &a);
    *next_ns = a.next;
    return a.n;
}

void pf_crowd_tick_done(pf_crowd *c) {
    pf_live_lock(c->t->t);
    c->ticking = false;
    pf_live_unlock(c->t->t);
}

/* Running */

static void write_state(pf_jsonw *w, pf_crowd *c, const int32_t *added, size_t nadded) {
    uint32_t cap = pf_nav_crowd_capacity(c->nc);
    int64_t hz;
    uint64_t skipped;
    pf_live_lock(c->t->t);
    hz = c->tick_hz;
    skipped = c->skipped;
    pf_live_unlock(c->t->t);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "crowd_id", c->live.id);
    pf_jsonw_kstr(w, "map_id", c->live.map_id);
    pf_jsonw_kuint(w, "map_version", c->mv->version);
    pf_jsonw_kint(w, "tick_hz", hz);
    pf_jsonw_kuint(w, "frame", c->frame);
    pf_jsonw_kdouble(w, "time_s", round(pf_nav_crowd_time(c->nc) * 1e6) / 1e6);
    pf_jsonw_kuint(w, "max_agents", cap);
    pf_jsonw_key(w, "agents");
    pf_jsonw_arr_begin(w);
    for (uint32_t i = 0; i < cap; i++) {
        pf_nav_agent a;
        if (!pf_nav_crowd_agent(c->nc, (int32_t)i, &a)) continue;
        pf_jsonw_obj_begin(w);
        pf_jsonw_kuint(w, "id", i);
        pf_jsonw_kstr(w, "state", pf_nav_agent_state_str(a.state));
        pf_jsonw_key(w, "position");
        pf_nav_write_point(w, a.pos);
        pf_jsonw_key(w, "velocity");
        pf_nav_write_point(w, a.vel);
        pf_jsonw_key(w, "target");
        if (a.has_target)
            pf_nav_write_point(w, a.target);
        else
            pf_jsonw_null(w);
        pf_jsonw_kdouble(w, "radius", round((double)a.radius * 1e4) / 1e4);
        pf_jsonw_obj_end(w);
    }
    pf_jsonw_arr_end(w);
    if (added) {
        pf_jsonw_key(w, "added");
        pf_jsonw_arr_begin(w);
        for (size_t i = 0; i < nadded; i++) pf_jsonw_int(w, added[i]);
        pf_jsonw_arr_end(w);
    }
    pf_jsonw_key(w, "stats");
    pf_jsonw_obj_begin(w);
    pf_jsonw_kuint(w, "agents", pf_nav_crowd_count(c->nc));
    pf_jsonw_kuint(w, "step_us", c->step_us);
    pf_jsonw_kuint(w, "steps", c->steps);
    pf_jsonw_kuint(w, "ticks_skipped", skipped);
    pf_jsonw_kuint(w, "memory_bytes", pf_nav_crowd_memory(c->nc));
    pf_jsonw_obj_end(w);
    pf_jsonw_obj_end(w);
}

/* Brings c to its map's current version (c->mu held). false: the map is
 * gone (deleted or replaced) and so is the crowd, w holds the error. */
static bool sync_map(pf_crowd *c, pf_registry *reg, pf_jsonw *w) {
    pf_mapver *cur = pf_registry_get(reg, c->live.map_id);
    if (!cur || cur->lineage != c->live.lineage) {
        pf_mapver_release(cur);
        remove_crowd(c->t, c);
        pf_proto_write_error(w, PF_ERR_CROWD_NOT_FOUND,
                             "The crowd is gone: its map was deleted or replaced.", NULL);
        return false;
    }
    if (cur != c->mv && pf_nav_crowd_sync(c->nc, pf_navmesh_of(cur)) == PF_OK) {
        pf_mapver_release(c->mv);
        c->mv = cur;
        return true;
    }
    pf_mapver_release(cur); /* the same version, or out of memory: the old mesh a while longer */
    return true;
}

static pf_error fail(pf_jsonw *w, const pf_proto_error *e) {
    pf_proto_write_perror(w, e);
    return e->code;
}

/* Checks a command whole against the crowd (c->mu held). */
static pf_status check_command(pf_crowd *c, pf_nav_query *q, const pf_crowd_command *cmd,
                               int64_t tick_hz, pf_proto_error *e) {
    uint32_t cap = pf_nav_crowd_capacity(c->nc), count = pf_nav_crowd_count(c->nc);
    char f[48];
    pf_status st;
    for (size_t i = 0; i < cmd->nremove; i++) {
        pf_nav_agent a;
        snprintf(f, sizeof(f), "remove[%zu]", i);
        if (!pf_nav_crowd_agent(c->nc, (int32_t)cmd->remove[i], &a))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "The crowd has no agent %lld.", (long long)cmd->remove[i]);
        for (size_t k = 0; k < i; k++)
            if (cmd->remove[k] == cmd->remove[i])
                return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                          "Agent %lld is removed twice.",
                                          (long long)cmd->remove[i]);
    }
    if ((uint64_t)count - cmd->nremove + cmd->nadd > cap)
        return pf_proto_error_set(e, PF_ELIMIT, PF_ERR_LIMIT_EXCEEDED, "add",
                                  "The crowd holds %u of its %u agents; %zu more do not fit.",
                                  count - (uint32_t)cmd->nremove, cap, cmd->nadd);
    for (size_t i = 0; i < cmd->nadd; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "add[%zu].", i);
        if ((st = check_agent(q, crowd_view(c), &cmd->add[i], prefix, e))) return st;
    }
    for (size_t i = 0; i < cmd->ntargets; i++) {
        const pf_crowd_target *tg = &cmd->targets[i];
        pf_nav_agent a;
        bool removed = false;
        float ext[3], s[3];
        for (size_t k = 0; k < cmd->nremove; k++) removed |= cmd->remove[k] == tg->id;
        snprintf(f, sizeof(f), "targets[%zu].id", i);
        if (removed || !pf_nav_crowd_agent(c->nc, (int32_t)tg->id, &a))
            return pf_proto_error_set(e, PF_EINVAL, PF_ERR_INVALID_VALUE, f,
                                      "The crowd has no agent %lld%s.", (long long)tg->id,
                                      removed ? " once this command removed it" : "");
        pf_navmesh_default_extents(crowd_view(c), ext);
        if (tg->has_target && pf_nav_nearest(q, crowd_view(c), tg->target, ext, s) != PF_OK) {
            snprintf(f, sizeof(f), "targets[%zu].target", i);
            return pf_proto_error_set(e, PF_EBLOCKED, PF_ERR_BLOCKED, f,
                                      "No walkable polygon within +-(%g, %g, %g) of %s.",
                                      (double)ext[0], (double)ext[1], (double)ext[2], f);
        }
    }
    if (cmd->has_steps && cmd->steps > 0 && tick_hz > 0)
        return pf_proto_error_set(e, PF_EINVAL, PF_ERR_CONFLICT, "steps",
                                  "The crowd ticks by itself at %lld Hz; set tick_hz to 0 to step "
                                  "it on request.",
                                  (long long)tick_hz);
    return PF_OK;
}

/* Runs up to steps steps of dt seconds (c->mu held), fewer when pause
 * asks for the worker back (polled after each step); returns how many ran. */
static int64_t step(pf_crowd *c, int64_t steps, double dt, pf_stop_fn pause, void *pause_ud) {
    uint64_t t0 = pf_clock_now_ns();
    int64_t i = 0;
    while (i < steps) {
        pf_nav_crowd_step(c->nc, (float)dt, NULL); /* dt is in (0, 1]: cannot fail */
        c->frame++;
        c->steps++;
        i++;
        if (i < steps && pause && pause(pause_ud)) break;
    }
    if (i) c->step_us = (pf_clock_now_ns() - t0) / 1000 / (uint64_t)i;
    pf_live_lock(c->t->t);
    c->t->steps += (uint64_t)i;
    c->memory = pf_nav_crowd_memory(c->nc);
    recharge(c);
    pf_live_unlock(c->t->t);
    return i;
}

void pf_crowd_run_clear(pf_crowd_run_state *s) {
    free(s->added);
    memset(s, 0, sizeof(*s));
}

pf_error pf_crowd_run_part(pf_crowd *c, pf_registry *reg, pf_navq *navq,
                           const pf_crowd_command *cmd, pf_crowd_run_state *s, pf_stop_fn pause,
                           void *pause_ud, pf_jsonw *w, bool *done) {
    pf_nav_query *q = NULL;
    pf_proto_error e;
    int64_t tick_hz;
    pf_error err = PF_ERR_NONE;
    *done = true;
    uv_mutex_lock(&c->mu);
    if (pf_crowd_is_gone(c)) { /* deleted or expired while this waited */
        uv_mutex_unlock(&c->mu);
        pf_proto_write_error(w, PF_ERR_CROWD_NOT_FOUND, NULL, NULL);
        return PF_ERR_CROWD_NOT_FOUND;
    }
    if (!sync_map(c, reg, w)) {
        uv_mutex_unlock(&c->mu);
        return PF_ERR_CROWD_NOT_FOUND;
    }
    if (s->begun) goto steps; /* the command was applied by an earlier part */
    pf_live_lock(c->t->t);
    tick_hz = c->tick_hz;
    pf_live_unlock(c->t->t);
    if (cmd && cmd->has_tick_hz) tick_hz = cmd->tick_hz;
    if (cmd) {
        if (!(q = pf_navq_get(navq)) ||
            (cmd->nadd && !(s->added = calloc(cmd->nadd, sizeof(*s->added))))) {
            pf_proto_error_set(&e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            err = fail(w, &e);
            goto out;
        }
        if (check_command(c, q, cmd, tick_hz, &e)) {
            err = fail(w, &e);
            goto out;
        }
        for (size_t i = 0; i < cmd->nremove; i++)
            pf_nav_crowd_remove(c->nc, (int32_t)cmd->remove[i]);
        for (size_t i = 0; i < cmd->nadd; i++) {
            const pf_crowd_agent_spec *a = &cmd->add[i];
            pf_nav_agent_params p = agent_params(crowd_view(c), a);
            if (pf_nav_crowd_add(c->nc, a->position, a->has_target ? a->target : NULL, &p,
                                 &s->added[i], NULL))
                s->added[i] = -1; /* checked above: only out of memory (DetourCrowd) */
        }
        s->nadded = cmd->nadd;
        for (size_t i = 0; i < cmd->ntargets; i++)
            pf_nav_crowd_set_target(c->nc, (int32_t)cmd->targets[i].id,
                                    cmd->targets[i].has_target ? cmd->targets[i].target : NULL);
        if (cmd->has_tick_hz) {
            bool changed;
            pf_live_lock(c->t->t);
            changed = c->tick_hz != cmd->tick_hz;
            c->tick_hz = cmd->tick_hz;
            if (changed) c->next_ns = pf_clock_now_ns();
            pf_live_unlock(c->t->t);
            if (changed) notify(c->t);
        }
        s->left = cmd->has_steps ? cmd->steps : tick_hz > 0 ? 0 : 1;
        s->dt = cmd->has_dt ? cmd->dt : tick_hz > 0 ? 1.0 / (double)tick_hz : 0.05;
    }
    s->begun = true;
steps:
    s->left -= step(c, s->left, s->dt, pause, pause_ud);
    if (s->left > 0) {
        *done = false; /* the rest in a later part; nothing written */
        goto out;
    }
    write_state(w, c, s->added, s->nadded);
out:
    uv_mutex_unlock(&c->mu);
    if (q) pf_navq_put(navq, q);
    return err;
}

pf_error pf_crowd_run(pf_crowd *c, pf_registry *reg, pf_navq *navq, const pf_crowd_command *cmd,
                      pf_jsonw *w) {
    pf_crowd_run_state s;
    bool done;
    pf_error err;
    memset(&s, 0, sizeof(s));
    err = pf_crowd_run_part(c, reg, navq, cmd, &s, NULL, NULL, w, &done);
    pf_crowd_run_clear(&s);
    return err;
}

pf_error pf_crowd_tick(pf_crowd *c, pf_registry *reg, pf_jsonw *w) {
    int64_t hz;
    uv_mutex_lock(&c->mu);
    if (!sync_map(c, reg, w)) {
        uv_mutex_unlock(&c->mu);
        return PF_ERR_CROWD_NOT_FOUND;
    }
    pf_live_lock(c->t->t);
    hz = c->tick_hz;
    pf_live_unlock(c->t->t);
    if (hz > 0) step(c, 1, 1.0 / (double)hz, NULL, NULL);
    write_state(w, c, NULL, 0);
    uv_mutex_unlock(&c->mu);
    return PF_ERR_NONE;
}
