/* routes_crowds.c -- the crowd routes; see routes_crowds.h. */
#include "routes_crowds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "request.h"
#include "routes_sessions.h"
#include "ws.h"

pf_crowd_limits pf_crowds_routes_limits(const pf_config *cfg) {
    pf_crowd_limits l;
    l.max_agents = cfg->max_crowd_agents;
    l.max_tick_hz = cfg->crowd_max_tick_hz;
    l.max_steps = cfg->crowd_max_steps;
    l.max_ttl_s = cfg->session_max_ttl_s;
    return l;
}

/* What a crowd request keeps from its handler to its job. */
typedef struct crowd_job {
    pf_crowds_routes *m;
    pf_mapver *mv;   /* create: the map version (a reference) */
    pf_crowd *crowd; /* read / step: the crowd (a reference) */
    pf_crowd_request create;
    bool has_command;
    pf_crowd_command cmd;
    bool reserved;    /* stream: holds one of the hub's places until adopted */
    pf_hub_token tok; /* stream: the token it is opened with */
    /* step: between slices (the job gives its worker back, pf_req_yield) */
    pf_crowd_run_state rs;
    uint64_t slice_end;
} crowd_job;

static void free_crowd_job(void *p) {
    crowd_job *job = p;
    if (job->reserved) pf_hub_unreserve(job->m->hub); /* the upgrade never happened */
    pf_mapver_release(job->mv);
    pf_crowd_release(job->crowd);
    pf_crowd_request_free(&job->create);
    pf_crowd_command_free(&job->cmd);
    pf_crowd_run_clear(&job->rs);
    free(job);
}

static crowd_job *new_job(pf_req *r, pf_crowds_routes *m) {
    crowd_job *job = calloc(1, sizeof(*job));
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return NULL;
    }
    job->m = m;
    pf_req_set_state(r, job, free_crowd_job);
    return job;
}

static void answer_no_crowd(pf_req *r) {
    pf_req_answer_error(r, PF_ERR_CROWD_NOT_FOUND, NULL,
                        "No crowd '%s' on map '%s' (deleted, expired, or its map was replaced).",
                        pf_req_crowd_id(r), pf_req_map_id(r));
}

/* The map of a crowd route, a navmesh; answers 404 / 422 otherwise. */
static pf_mapver *nav_map(pf_req *r, pf_crowds_routes *m) {
    pf_mapver *mv = pf_registry_get(m->registry, pf_req_map_id(r));
    if (!mv) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return NULL;
    }
    if (!mv->nav) {
        pf_req_answer_error(r, PF_ERR_UNSUPPORTED, NULL,
                            "Map '%s' is a grid: crowds walk navmesh maps (upload one with "
                            "\"kind\":\"navmesh\" or as model/obj).",
                            mv->id);
        pf_mapver_release(mv);
        return NULL;
    }
    return mv;
}

/* Job: make the crowd (its mesh copy, its agents placed). */
static void run_create(pf_req *r, pf_search_ctx *ctx) {
    crowd_job *job = pf_req_state(r);
    pf_crowds_routes *m = job->m;
    const pf_config *cfg = m->cfg;
    pf_proto_error e;
    pf_crowd *c = NULL;
    bool total;
    pf_status st;
    (void)ctx;
    st = pf_crowds_add(m->crowds, job->mv, &job->create, pf_req_principal(r),
                       job->create.ttl_s ? job->create.ttl_s : cfg->session_ttl_s,
                       pf_clock_now_ns(), &c, &total, &e);
    if (st == PF_ELIMIT && !total) {
        pf_req_answer_error(r, PF_ERR_TOO_MANY_SESSIONS, NULL,
                            "Map '%s' has %lld crowds, its limit; delete one or let one expire.",
                            job->mv->id, (long long)cfg->max_crowds_per_map);
        pf_req_add_retry_after(r);
    } else if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                            "The server holds %lld crowds, its limit. Retry later.",
                            (long long)cfg->max_crowds);
    } else if (st) {
        pf_req_answer_perror(r, &e);
    } else {
        char location[200];
        pf_jsonw w;
        pf_error err;
        pf_jsonw_init(&w, 8192);
        err = pf_crowd_run(c, m->registry, m->navq, NULL, &w);
        snprintf(location, sizeof(location), "/v1/maps/%s/crowds/%s", pf_crowd_map_id(c),
                 pf_crowd_id(c));
        if (err) {
            /* The map was replaced or deleted while the crowd was made: the
             * crowd is gone already. */
            pf_crowds_remove(m->crowds, pf_crowd_map_id(c), pf_crowd_id(c));
            pf_jsonw_free(&w);
            if (err == PF_ERR_CROWD_NOT_FOUND)
                pf_req_answer_error(r, PF_ERR_CONFLICT, NULL,
                                    "Map '%s' was replaced or deleted while the crowd was made; "
                                    "nothing is left of it.",
                                    job->mv->id);
            else
                pf_req_answer_error(r, err, NULL, NULL);
        } else {
            pf_req_answer_created(r, &w, location);
        }
        pf_crowd_release(c);
    }
    pf_req_finish(r);
}

void pf__route_crowds_create(pf_req *r, pf_crowds_routes *m) {
    pf_crowd_limits lim = pf_crowds_routes_limits(m->cfg);
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    crowd_job *job = new_job(r, m);
    if (!job) return;
    if (pf_crowd_request_parse(body, len, &lim, &job->create, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (!(job->mv = nav_map(r, m))) return;
    pf_req_dispatch(r, PF_JOB_BUILD, run_create);
}

/* The steps' cue to pause: the slice is over. */
static bool slice_over(void *ud) {
    const crowd_job *job = ud;
    return pf_clock_now_ns() >= job->slice_end;
}

/* Job: a read or a command. A command's steps run in slices of
 * --slice-ms: past one, when another request waits for a worker, the job
 * queues itself again (pf_req_yield) and runs the rest later, as a batch
 * of paths does between queries. */
static void run_crowd(pf_req *r, pf_search_ctx *ctx) {
    crowd_job *job = pf_req_state(r);
    pf_jsonw w;
    pf_error err;
    bool done;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    for (;;) {
        job->slice_end = pf_clock_now_ns() + (uint64_t)job->m->cfg->slice_ms * 1000000ull;
        err = pf_crowd_run_part(job->crowd, job->m->registry, job->m->navq,
                                job->has_command ? &job->cmd : NULL, &job->rs, slice_over, job, &w,
                                &done);
        if (err || done) break;
        if (pf_req_yield(r)) { /* the rest later; r is not ours now */
            pf_jsonw_free(&w);
            return;
        }
    }
    if (err)
        pf_req_answer_error_body(r, err, &w);
    else
        pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

/* Whether r may use crowd c: a write token (or no tokens) any crowd, a
 * read token only the crowds it created (as with sessions: another's is
 * 404, its existence not told). */
static bool may_use(const pf_req *r, const pf_crowd *c) {
    return pf_req_scope(r) != PF_SCOPE_READ || pf_crowd_owned_by(c, pf_req_principal(r));
}

static bool hold_crowd(pf_req *r, crowd_job *job) {
    job->crowd =
        pf_crowds_get(job->m->crowds, pf_req_map_id(r), pf_req_crowd_id(r), pf_clock_now_ns());
    if (job->crowd && !may_use(r, job->crowd)) {
        pf_crowd_release(job->crowd);
        job->crowd = NULL;
    }
    if (!job->crowd) answer_no_crowd(r);
    return job->crowd != NULL;
}

void pf__route_crowd_get(pf_req *r, pf_crowds_routes *m) {
    crowd_job *job = new_job(r, m);
    if (job && hold_crowd(r, job)) pf_req_dispatch(r, PF_JOB_SEARCH, run_crowd);
}

void pf__route_crowd_step(pf_req *r, pf_crowds_routes *m) {
    pf_crowd_limits lim = pf_crowds_routes_limits(m->cfg);
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    crowd_job *job = new_job(r, m);
    if (!job) return;
    job->has_command = true;
    if (pf_crowd_command_parse(body, len, &lim, &job->cmd, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (hold_crowd(r, job)) pf_req_dispatch(r, PF_JOB_SEARCH, run_crowd);
}

void pf__route_crowd_delete(pf_req *r, pf_crowds_routes *m) {
    pf_crowd *c = pf_crowds_get(m->crowds, pf_req_map_id(r), pf_req_crowd_id(r), pf_clock_now_ns());
    bool ok = c && may_use(r, c);
    pf_crowd_release(c);
    if (!ok || !pf_crowds_remove(m->crowds, pf_req_map_id(r), pf_req_crowd_id(r)))
        answer_no_crowd(r);
    else
        pf_req_answer_no_content(r);
}

/* GET .../stream */

static void adopt_stream(void *ud, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                         const char *extra, size_t n) {
    crowd_job *job = ud;
    pf_crowd *c = job->crowd;
    job->crowd = NULL;     /* the hub takes the reference */
    job->reserved = false; /* and the place */
    pf_hub_adopt_crowd(job->m->hub, sock, urh, extra, n, c, &job->tok);
}

void pf__route_crowd_stream(pf_req *r, pf_crowds_routes *m) {
    char accept[PF_WS_ACCEPT_LEN + 1];
    crowd_job *job = new_job(r, m);
    if (!job || !hold_crowd(r, job)) return;
    if (!pf_routes_ws_handshake(r, accept)) return;
    if (!pf_hub_reserve(m->hub)) {
        pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                            "The server has %lld open streams, its limit. Retry later.",
                            (long long)m->cfg->max_streams);
        return;
    }
    job->reserved = true;
    job->tok = (pf_hub_token){*pf_req_principal(r), pf_req_scope(r)};
    pf_req_answer_upgrade(r, accept, adopt_stream, job);
}
