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
#include "nav_json.h"
#include "navmesh.h"

struct pf_crowd {
    atomic_int refs;
    pf_crowds *t;
    char id[PF_CROWD_ID_LEN + 1];
    char map_id[PF_MAP_ID_MAX + 1];
    uint64_t lineage;
    pf_auth_id owner; /* the creating token; all zero without tokens */
    /* Under t->mu. */
    int64_t ttl_s;
    uint64_t last_ns;
    int watchers;
    bool gone;
    int64_t tick_hz;
    uint64_t next_ns; /* the next tick */
    bool ticking;     /* a tick job is queued or running */
    uint64_t skipped;
    size_t memory; /* pf_nav_crowd_memory at the last run */
    struct pf_crowd *next;
    /* Under mu. */
    uv_mutex_t mu;
    pf_nav_crowd *nc;
    pf_mapver *mv; /* the version nc's mesh matches (a reference) */
    uint64_t frame, steps, step_us;
};

struct pf_crowds {
    uv_mutex_t mu;
    pf_crowd *all; /* each holds the table's reference */
    size_t count, max_total, max_per_map;
    uint64_t steps; /* every crowd's, under mu */
    void (*notify)(void *ud);
    void *notify_ud;
};

static void crowd_free(pf_crowd *c) {
    pf_nav_crowd_destroy(c->nc);
    pf_mapver_release(c->mv);
    uv_mutex_destroy(&c->mu);
    free(c);
}

void pf_crowd_retain(pf_crowd *c) { atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed); }

void pf_crowd_release(pf_crowd *c) {
    if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) crowd_free(c);
}

pf_crowds *pf_crowds_create(size_t max_total, size_t max_per_map) {
    pf_crowds *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    if (uv_mutex_init(&t->mu)) {
        free(t);
        return NULL;
    }
    t->max_total = max_total;
    t->max_per_map = max_per_map;
    return t;
}

void pf_crowds_destroy(pf_crowds *t) {
    if (!t) return;
    while (t->all) {
        pf_crowd *c = t->all;
        t->all = c->next;
        c->gone = true;
        pf_crowd_release(c);
    }
    uv_mutex_destroy(&t->mu);
    free(t);
}

void pf_crowds_set_notify(pf_crowds *t, void (*fn)(void *ud), void *ud) {
    uv_mutex_lock(&t->mu);
    t->notify = fn;
    t->notify_ud = ud;
    uv_mutex_unlock(&t->mu);
}

static void notify(pf_crowds *t) {
    void (*fn)(void *);
    void *ud;
    uv_mutex_lock(&t->mu);
    fn = t->notify;
    ud = t->notify_ud;
    uv_mutex_unlock(&t->mu);
    if (fn) fn(ud);
}

static void new_id(char out[PF_CROWD_ID_LEN + 1]) {
    uint8_t b[PF_CROWD_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
        if (k > 0) got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof(b); i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Unlinks c (t->mu held); the caller drops the table's reference. */
static bool unlink_locked(pf_crowds *t, pf_crowd *c) {
    for (pf_crowd **p = &t->all; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            c->next = NULL;
            c->gone = true;
            t->count--;
            return true;
        }
    return false;
}

static void notify(pf_crowds *t);

static void remove_crowd(pf_crowds *t, pf_crowd *c) {
    bool was;
    uv_mutex_lock(&t->mu);
    was = unlink_locked(t, c);
    uv_mutex_unlock(&t->mu);
    if (was) {
        pf_crowd_release(c);
        notify(t); /* its streams are told */
    }
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
    size_t on_map = 0;
    *out = NULL;
    *total = false;
    if (!(c = calloc(1, sizeof(*c))))
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    if (uv_mutex_init(&c->mu)) {
        free(c);
        return pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    atomic_init(&c->refs, 1);
    c->t = t;
    snprintf(c->map_id, sizeof(c->map_id), "%s", mv->id);
    c->lineage = mv->lineage;
    if (owner) c->owner = *owner;
    c->ttl_s = ttl_s;
    c->last_ns = now_ns;
    c->tick_hz = rq->tick_hz;
    c->next_ns = now_ns;
    pf_mapver_retain(mv);
    c->mv = mv;
    st = pf_nav_crowd_create(mv->nav, (uint32_t)rq->max_agents, &c->nc);
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
        pf_nav_agent_params p = agent_params(mv->nav, a);
        char prefix[32];
        int32_t id;
        snprintf(prefix, sizeof(prefix), "agents[%zu].", i);
        if ((st = check_agent(q, mv->nav, a, prefix, e))) goto out_free;
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
    new_id(c->id);
    uv_mutex_lock(&t->mu);
    for (pf_crowd *o = t->all; o; o = o->next) on_map += strcmp(o->map_id, c->map_id) == 0;
    if (t->count >= t->max_total) {
        *total = true;
        st = PF_ELIMIT;
    } else if (on_map >= t->max_per_map) {
        st = PF_ELIMIT;
    } else {
        c->next = t->all;
        t->all = c;
        t->count++;
        pf_crowd_retain(c); /* the table's */
    }
    uv_mutex_unlock(&t->mu);
    if (st) {
        pf_proto_error_set(e, st, PF_ERR_LIMIT_EXCEEDED, NULL, "Too many crowds.");
        goto out_free;
    }
    if (c->tick_hz) notify(t);
    *out = c;
    return PF_OK;
out_free:
    pf_nav_query_destroy(q);
    pf_crowd_release(c);
    return st;
}

pf_crowd *pf_crowds_get(pf_crowds *t, const char *map_id, const char *cid, uint64_t now_ns) {
    pf_crowd *found = NULL, *gone = NULL;
    uv_mutex_lock(&t->mu);
    for (pf_crowd *c = t->all; c; c = c->next) {
        if (strcmp(c->id, cid) != 0 || strcmp(c->map_id, map_id) != 0) continue;
        if (!c->watchers && now_ns > c->last_ns &&
            now_ns - c->last_ns > (uint64_t)c->ttl_s * 1000000000ull) {
            unlink_locked(t, c);
            gone = c;
        } else {
            c->last_ns = now_ns;
            pf_crowd_retain(c);
            found = c;
        }
        break;
    }
    uv_mutex_unlock(&t->mu);
    if (gone) {
        pf_crowd_release(gone);
        notify(t);
    }
    return found;
}

bool pf_crowds_remove(pf_crowds *t, const char *map_id, const char *cid) {
    pf_crowd *hit = NULL;
    uv_mutex_lock(&t->mu);
    for (pf_crowd *c = t->all; c; c = c->next)
        if (strcmp(c->id, cid) == 0 && strcmp(c->map_id, map_id) == 0) {
            unlink_locked(t, c);
            hit = c;
            break;
        }
    uv_mutex_unlock(&t->mu);
    pf_crowd_release(hit);
    if (hit) notify(t);
    return hit != NULL;
}

/* Removes the crowds pred picks; returns how many. */
static size_t sweep(pf_crowds *t, bool (*pred)(const pf_crowd *c, const void *arg),
                    const void *arg) {
    pf_crowd *dead = NULL;
    size_t n = 0;
    uv_mutex_lock(&t->mu);
    for (pf_crowd **p = &t->all; *p;) {
        pf_crowd *c = *p;
        if (!pred(c, arg)) {
            p = &c->next;
            continue;
        }
        *p = c->next;
        c->gone = true;
        t->count--;
        c->next = dead;
        dead = c;
        n++;
    }
    uv_mutex_unlock(&t->mu);
    while (dead) {
        pf_crowd *c = dead;
        dead = c->next;
        c->next = NULL;
        pf_crowd_release(c);
    }
    if (n) notify(t);
    return n;
}

typedef struct drop_arg {
    const char *map_id;
    uint64_t keep_lineage;
} drop_arg;

static bool of_map(const pf_crowd *c, const void *arg) {
    const drop_arg *d = arg;
    return strcmp(c->map_id, d->map_id) == 0 && (!d->keep_lineage || c->lineage != d->keep_lineage);
}

static bool idle(const pf_crowd *c, const void *arg) {
    uint64_t now = *(const uint64_t *)arg;
    return !c->watchers && now > c->last_ns &&
           now - c->last_ns > (uint64_t)c->ttl_s * 1000000000ull;
}

size_t pf_crowds_drop_map(pf_crowds *t, const char *map_id, uint64_t keep_lineage) {
    drop_arg d = {map_id, keep_lineage};
    return sweep(t, of_map, &d);
}

size_t pf_crowds_reap(pf_crowds *t, uint64_t now_ns) { return sweep(t, idle, &now_ns); }

size_t pf_crowds_count(pf_crowds *t) {
    size_t n;
    uv_mutex_lock(&t->mu);
    n = t->count;
    uv_mutex_unlock(&t->mu);
    return n;
}

uint64_t pf_crowds_steps(pf_crowds *t) {
    uint64_t n;
    uv_mutex_lock(&t->mu);
    n = t->steps;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_crowds_memory(pf_crowds *t) {
    size_t n = 0;
    uv_mutex_lock(&t->mu);
    for (pf_crowd *c = t->all; c; c = c->next) n += c->memory;
    uv_mutex_unlock(&t->mu);
    return n;
}

size_t pf_crowds_count_map(pf_crowds *t, const char *map_id) {
    size_t n = 0;
    uv_mutex_lock(&t->mu);
    for (pf_crowd *c = t->all; c; c = c->next) n += strcmp(c->map_id, map_id) == 0;
    uv_mutex_unlock(&t->mu);
    return n;
}

const char *pf_crowd_id(const pf_crowd *c) { return c->id; }
const char *pf_crowd_map_id(const pf_crowd *c) { return c->map_id; }

bool pf_crowd_owned_by(const pf_crowd *c, const pf_auth_id *who) {
    return pf_auth_id_equal(&c->owner, who);
}

bool pf_crowd_is_gone(pf_crowd *c) {
    bool g;
    uv_mutex_lock(&c->t->mu);
    g = c->gone;
    uv_mutex_unlock(&c->t->mu);
    return g;
}

void pf_crowd_watch(pf_crowd *c, bool open) {
    uv_mutex_lock(&c->t->mu);
    c->watchers += open ? 1 : -1;
    c->last_ns = pf_clock_now_ns();
    uv_mutex_unlock(&c->t->mu);
}

/* Ticking */

size_t pf_crowds_due(pf_crowds *t, uint64_t now_ns, pf_crowd **out, size_t cap, uint64_t *next_ns) {
    size_t n = 0;
    uint64_t next = 0;
    uv_mutex_lock(&t->mu);
    for (pf_crowd *c = t->all; c; c = c->next) {
        uint64_t period;
        if (c->tick_hz <= 0) continue;
        period = 1000000000ull / (uint64_t)c->tick_hz;
        if (now_ns >= c->next_ns) {
            if (c->ticking) {
                c->skipped++; /* the last tick still runs: skip this one */
                c->next_ns = now_ns + period;
            } else if (n < cap) {
                c->ticking = true;
                pf_crowd_retain(c);
                out[n++] = c;
                c->next_ns += period;
                if (c->next_ns <= now_ns) c->next_ns = now_ns + period; /* fell behind */
            }
        }
        if (!next || c->next_ns < next) next = c->next_ns;
    }
    uv_mutex_unlock(&t->mu);
    *next_ns = next;
    return n;
}

void pf_crowd_tick_done(pf_crowd *c) {
    uv_mutex_lock(&c->t->mu);
    c->ticking = false;
    uv_mutex_unlock(&c->t->mu);
}

/* Running */

static void write_state(pf_jsonw *w, pf_crowd *c, const int32_t *added, size_t nadded) {
    uint32_t cap = pf_nav_crowd_capacity(c->nc);
    int64_t hz;
    uint64_t skipped;
    uv_mutex_lock(&c->t->mu);
    hz = c->tick_hz;
    skipped = c->skipped;
    uv_mutex_unlock(&c->t->mu);
    pf_jsonw_obj_begin(w);
    pf_jsonw_kstr(w, "crowd_id", c->id);
    pf_jsonw_kstr(w, "map_id", c->map_id);
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
    pf_mapver *cur = pf_registry_get(reg, c->map_id);
    if (!cur || cur->lineage != c->lineage) {
        pf_mapver_release(cur);
        remove_crowd(c->t, c);
        pf_proto_write_error(w, PF_ERR_CROWD_NOT_FOUND,
                             "The crowd is gone: its map was deleted or replaced.", NULL);
        return false;
    }
    if (cur != c->mv && pf_nav_crowd_sync(c->nc, cur->nav) == PF_OK) {
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
        if ((st = check_agent(q, c->mv->nav, &cmd->add[i], prefix, e))) return st;
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
        pf_navmesh_default_extents(c->mv->nav, ext);
        if (tg->has_target && pf_nav_nearest(q, c->mv->nav, tg->target, ext, s) != PF_OK) {
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
    uv_mutex_lock(&c->t->mu);
    c->t->steps += (uint64_t)i;
    c->memory = pf_nav_crowd_memory(c->nc);
    uv_mutex_unlock(&c->t->mu);
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
    uv_mutex_lock(&c->t->mu);
    tick_hz = c->tick_hz;
    uv_mutex_unlock(&c->t->mu);
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
            pf_nav_agent_params p = agent_params(c->mv->nav, a);
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
            uv_mutex_lock(&c->t->mu);
            changed = c->tick_hz != cmd->tick_hz;
            c->tick_hz = cmd->tick_hz;
            if (changed) c->next_ns = pf_clock_now_ns();
            uv_mutex_unlock(&c->t->mu);
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
    uv_mutex_lock(&c->t->mu);
    hz = c->tick_hz;
    uv_mutex_unlock(&c->t->mu);
    if (hz > 0) step(c, 1, 1.0 / (double)hz, NULL, NULL);
    write_state(w, c, NULL, 0);
    uv_mutex_unlock(&c->mu);
    return PF_ERR_NONE;
}
