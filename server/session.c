/* session.c -- see session.h: what every kind's sessions share, over the
 * table of live objects (live.h); the kinds' own are kind_<kind>_session.c. */
#include "session.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "live.h"

struct pf_session {
    pf_live_obj live;      /* first: id, map, lineage, owner, ttl, busy (live.h) */
    pf_mapver *mv;         /* the version the session is on (its state may borrow from it) */
    void *state;           /* mv->kind's (kind.h): freed by its session_free */
    pf_mem *mem;           /* the process budget (pf_session_take_charge), or NULL */
    size_t charged;        /* PF_MEM_SESSIONS bytes charged for this session */
    uint64_t max_expanded; /* every plan's limits (session_json.h), 0: none */
    int64_t deadline_ms;
};

struct pf_sessions {
    pf_live *t;
    size_t max_total, max_per_map; /* the table's limits, for the refusals */
};

static pf_session *of(pf_live_obj *o) { return (pf_session *)(void *)o; }

/* Frees s and what it holds (its last reference is gone). */
static void session_free(pf_live_obj *o) {
    pf_session *s = of(o);
    pf_mem_uncharge(s->mem, PF_MEM_SESSIONS, s->charged);
    if (s->state) s->mv->kind->session_free(s->state);
    pf_mapver_release(s->mv);
    free(s);
}

static size_t session_bytes(const pf_live_obj *o) {
    return pf_session_memory((const pf_session *)(const void *)o);
}

static const pf_live_type session_type = {session_free, session_bytes};

pf_sessions *pf_sessions_create(size_t max_total, size_t max_per_map) {
    pf_sessions *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    if (!(t->t = pf_live_create(&session_type, max_total, max_per_map))) {
        free(t);
        return NULL;
    }
    t->max_total = max_total;
    t->max_per_map = max_per_map;
    return t;
}

void pf_sessions_destroy(pf_sessions *t) {
    if (!t) return;
    pf_live_destroy(t->t);
    free(t);
}

/* Registers a session of mv with state (taken), owned by owner, held. */
static pf_status insert(pf_sessions *t, pf_mapver *mv, void *state, int64_t ttl_s,
                        const pf_auth_id *owner, uint64_t now_ns, pf_session **out, bool *total) {
    pf_session *s = calloc(1, sizeof(*s));
    pf_status st;
    *out = NULL;
    *total = false;
    if (!s) {
        mv->kind->session_free(state);
        return PF_ENOMEM;
    }
    pf_mapver_retain(mv);
    s->mv = mv;
    s->state = state;
    if ((st = pf_live_insert(t->t, &s->live, mv, ttl_s, owner, true, now_ns, total))) {
        session_free(&s->live);
        return st;
    }
    *out = s;
    return PF_OK;
}

pf_status pf_sessions_insert(pf_sessions *t, pf_mapver *mv, void *state, int64_t ttl_s,
                             uint64_t now_ns, pf_session **out, bool *total) {
    return insert(t, mv, state, ttl_s, NULL, now_ns, out, total);
}

/* Creation */

pf_status pf_sessions_new(pf_sessions *t, pf_mapver *mv, const pf_session_request *q,
                          const char *prefix, int64_t default_ttl_s, const pf_auth_id *owner,
                          pf_mem *mem, uint64_t now_ns, pf_session **out, pf_proto_error *e) {
    void *state = NULL;
    size_t reserve = 0;
    bool total = false;
    pf_status st;
    *out = NULL;
    if (mv->env && (st = pf_config_check_deadline(mv->env->d.cfg, q->deadline_ms, prefix, e)))
        return st;
    if ((st = mv->kind->session_create(mv, q, prefix, &state, &reserve, e))) return st;
    /* Room in the budget for what it may hold (a grid's: a search over
     * the whole map, and a new agent size's grid), before it is added; its
     * charge follows what it holds from its first plan on. */
    if (!pf_mem_try_charge(mem, PF_MEM_SESSIONS, reserve)) {
        mv->kind->session_free(state);
        return pf_proto_error_set(
            e, PF_ENOMEM, PF_ERR_INSUFFICIENT_STORAGE, NULL,
            "A session on map '%s' needs up to %zu bytes; the memory budget (--max-memory) is "
            "%llu bytes and %llu are in use. Delete sessions or maps, or raise it.",
            mv->id, reserve, (unsigned long long)pf_mem_budget(mem),
            (unsigned long long)pf_mem_used(mem));
    }
    st = insert(t, mv, state, q->ttl_s ? q->ttl_s : default_ttl_s, owner, now_ns, out, &total);
    if (st) {
        pf_mem_uncharge(mem, PF_MEM_SESSIONS, reserve);
        if (st == PF_ELIMIT && !total)
            return pf_proto_error_set(e, st, PF_ERR_TOO_MANY_SESSIONS, NULL,
                                      "Map '%s' has %zu sessions, its limit; delete one or let "
                                      "one expire.",
                                      mv->id, t->max_per_map);
        if (st == PF_ELIMIT)
            return pf_proto_error_set(e, st, PF_ERR_OVERLOADED, NULL,
                                      "The server holds %zu sessions, its limit. Retry later.",
                                      t->max_total);
        return pf_proto_error_set(e, st, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
    }
    pf_session_take_charge(*out, mem, reserve);
    (*out)->max_expanded = q->max_expanded;
    (*out)->deadline_ms = q->deadline_ms;
    return PF_OK;
}

pf_session_lookup pf_sessions_acquire(pf_sessions *t, const char *map_id, const char *sid,
                                      uint64_t now_ns, pf_session **out) {
    pf_live_obj *o;
    pf_live_lookup res = pf_live_acquire(t->t, map_id, sid, true, now_ns, &o);
    *out = res == PF_LIVE_OK ? of(o) : NULL;
    return res == PF_LIVE_OK     ? PF_SESSION_OK
           : res == PF_LIVE_BUSY ? PF_SESSION_BUSY
                                 : PF_SESSION_NOT_FOUND;
}

static int cmp_info(const void *a, const void *b) {
    return strcmp(((const pf_session_info *)a)->id, ((const pf_session_info *)b)->id);
}

typedef struct list_arg {
    pf_session_info *list;
    size_t k, cap;
    uint64_t now_ns;
} list_arg;

/* One session of the listing (the table's lock held). */
static void list_one(void *ud, pf_live_obj *o) {
    list_arg *a = ud;
    pf_session *s = of(o);
    pf_session_info *i;
    if (a->k == a->cap) return; /* came after the count */
    i = &a->list[a->k++];
    memset(i, 0, sizeof(*i));
    memcpy(i->id, o->id, sizeof(i->id));
    i->owner = o->owner;
    i->busy = o->busy;
    i->ttl_s = o->ttl_s;
    if (o->busy) return; /* its holder may be changing the rest */
    s->mv->kind->session_where(s->state, &i->position, &i->goal);
    i->map_version = s->mv->version;
    i->idle_ms = a->now_ns > o->last_ns ? (a->now_ns - o->last_ns) / 1000000u : 0;
}

pf_status pf_sessions_list(pf_sessions *t, const char *map_id, uint64_t now_ns,
                           pf_session_info **out, size_t *n) {
    list_arg a = {NULL, 0, pf_live_count_map(t->t, map_id), now_ns};
    *out = NULL;
    *n = 0;
    if (a.cap && !(a.list = malloc(a.cap * sizeof(*a.list)))) return PF_ENOMEM;
    pf_live_each(t->t, map_id, now_ns, list_one, &a);
    if (a.k > 1) qsort(a.list, a.k, sizeof(*a.list), cmp_info);
    if (a.k == 0) {
        free(a.list);
        a.list = NULL;
    }
    *out = a.list;
    *n = a.k;
    return PF_OK;
}

bool pf_sessions_exists(pf_sessions *t, const char *map_id, const char *sid, uint64_t now_ns) {
    return pf_live_exists(t->t, map_id, sid, now_ns);
}

void pf_sessions_release(pf_sessions *t, pf_session *s, uint64_t now_ns) {
    pf_live_release(t->t, &s->live, now_ns);
}

bool pf_sessions_owner_is(pf_sessions *t, const char *map_id, const char *sid,
                          const pf_auth_id *who) {
    return pf_live_owner_is(t->t, map_id, sid, who);
}

const pf_auth_id *pf_session_owner(const pf_session *s) { return &s->live.owner; }

bool pf_sessions_remove(pf_sessions *t, const char *map_id, const char *sid) {
    return pf_live_remove(t->t, map_id, sid);
}

void pf_sessions_kill(pf_sessions *t, pf_session *s) { pf_live_kill(t->t, &s->live); }

size_t pf_sessions_drop_map(pf_sessions *t, const char *map_id, uint64_t keep_lineage) {
    return pf_live_drop_map(t->t, map_id, keep_lineage);
}

size_t pf_sessions_reap(pf_sessions *t, uint64_t now_ns) { return pf_live_reap(t->t, now_ns); }

size_t pf_sessions_count(pf_sessions *t) { return pf_live_count(t->t); }

size_t pf_sessions_memory(pf_sessions *t) { return pf_live_memory(t->t); }

size_t pf_sessions_count_map(pf_sessions *t, const char *map_id) {
    return pf_live_count_map(t->t, map_id);
}

/* Operations */

const char *pf_session_id(const pf_session *s) { return s->live.id; }
const char *pf_session_map_id(const pf_session *s) { return s->live.map_id; }
uint64_t pf_session_map_version(const pf_session *s) { return s->mv->version; }
int64_t pf_session_ttl(const pf_session *s) { return s->live.ttl_s; }
const pf_mapver *pf_session_mapver(const pf_session *s) { return s->mv; }
void *pf_session_state(const pf_session *s) { return s->state; }

bool pf_session_builds(const pf_session *s) {
    return s->mv->kind->session_builds && s->mv->kind->session_builds(s->mv, s->state);
}

size_t pf_session_memory(const pf_session *s) {
    return sizeof(*s) + s->mv->kind->session_memory(s->state);
}

pf_status pf_session_sync(pf_session *s, pf_registry *reg, const char **how) {
    pf_mapver *cur = pf_registry_get(reg, s->live.map_id);
    *how = "none";
    if (!cur || cur->lineage != s->live.lineage) {
        pf_mapver_release(cur);
        return PF_ECANCELED;
    }
    if (cur->version == s->mv->version) {
        pf_mapver_release(cur);
        return PF_OK;
    }
    /* Same lineage, so the same kind: it moves its state onto cur. */
    *how = s->mv->kind->session_rebase(s->state, s->mv, cur);
    pf_mapver_release(s->mv);
    s->mv = cur;
    return PF_OK;
}

/* The session job */

void pf_session_take_charge(pf_session *s, pf_mem *mem, size_t reserved) {
    s->mem = mem;
    s->charged = reserved;
}

/* The charge follows what the session holds after a run (its search grew
 * or was rebuilt smaller), and so does its version's: the first session
 * plan on a version may build parts of it (a grid's cuts, planner.h). */
static void recharge(pf_session *s) {
    size_t now = pf_session_memory(s);
    if (!s->mem) return;
    if (now > s->charged)
        pf_mem_charge(s->mem, PF_MEM_SESSIONS, now - s->charged);
    else
        pf_mem_uncharge(s->mem, PF_MEM_SESSIONS, s->charged - now);
    s->charged = now;
    pf_mapver_recharge(s->mv);
}

pf_error pf_session_run(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                        const pf_update_list *l, pf_jsonw *w) {
    return pf_session_run_on(t, reg, m, s, l, 0, w);
}

void pf_session_policy(const pf_config *cfg, const pf_replan_policy *cur, const pf_replan_fields *f,
                       pf_replan_policy *out) {
    pf_replan_policy p;
    memset(&p, 0, sizeof(p));
    if (cur) {
        p = *cur;
    } else if (cfg) {
        p.min_interval_ms = (uint32_t)cfg->session_replan_interval_ms;
        p.min_steps = (uint32_t)cfg->session_replan_updates;
        p.goal_threshold = (double)cfg->session_goal_threshold;
        p.hysteresis = (double)cfg->session_hysteresis_pct / 100.0;
    }
    if (f) pf_replan_fields_apply(f, &p);
    if (cfg && p.min_interval_ms < (uint64_t)cfg->session_min_replan_interval_ms)
        p.min_interval_ms = (uint32_t)cfg->session_min_replan_interval_ms;
    *out = p;
}

uint64_t pf_session_stream_id(void) {
    static atomic_uint_fast64_t next = 1;
    return (uint64_t)atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

pf_error pf_session_run_on(pf_sessions *t, pf_registry *reg, pf_metrics *m, pf_session *s,
                           const pf_update_list *l, uint64_t stream, pf_jsonw *w) {
    pf_kind_session_run run;
    const char *how = "none";
    pf_error err;
    memset(&run, 0, sizeof(run));
    run.t0_ns = pf_clock_now_ns();
    if (pf_session_sync(s, reg, &how) == PF_ECANCELED) {
        pf_sessions_kill(t, s);
        pf_proto_write_error(w, PF_ERR_SESSION_NOT_FOUND,
                             "The session is gone: its map was deleted or replaced.", NULL);
        err = PF_ERR_SESSION_NOT_FOUND;
    } else {
        run.mv = s->mv;
        run.session_id = s->live.id;
        run.map_id = s->live.map_id;
        run.ttl_s = s->live.ttl_s;
        run.record_bytes = sizeof(*s);
        run.rebase = how;
        run.metrics = m;
        run.stream = stream;
        run.max_expanded = s->max_expanded;
        if (s->deadline_ms) run.deadline_ns = run.t0_ns + (uint64_t)s->deadline_ms * 1000000u;
        err = s->mv->kind->session_run(&run, s->state, l, w);
    }
    recharge(s);
    return err;
}
