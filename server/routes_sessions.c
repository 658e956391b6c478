/* routes_sessions.c -- the session routes; see routes_sessions.h. */
#include "routes_sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "nav_json.h"
#include "request.h"
#include "routes_paths.h"
#include "ws.h"

/* What a session request keeps from its handler to its job. */
typedef struct session_job {
    pf_sessions_routes *m;
    pf_session *session; /* held (busy) until the job lets it go */
    bool created;        /* POST .../sessions: 201 */
    bool has_updates;    /* POST .../updates */
    pf_update_list updates;
} session_job;

/* Lets go of the session; a session created by this request and not
 * answered 201 goes away. */
static void let_go(session_job *job, bool keep) {
    if (!job->session) return;
    if (job->created && !keep) pf_sessions_kill(job->m->sessions, job->session);
    pf_sessions_release(job->m->sessions, job->session, pf_clock_now_ns());
    job->session = NULL;
}

static void free_session_job(void *p) {
    session_job *job = p;
    let_go(job, false);
    pf_update_list_free(&job->updates);
    free(job);
}

static session_job *new_job(pf_req *r, pf_sessions_routes *m) {
    session_job *job = calloc(1, sizeof(*job));
    if (!job) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return NULL;
    }
    job->m = m;
    pf_req_set_state(r, job, free_session_job);
    return job;
}

static void answer_no_session(pf_req *r) {
    pf_req_answer_error(r, PF_ERR_SESSION_NOT_FOUND, NULL,
                        "No session '%s' on map '%s' (deleted, expired, or its map was replaced).",
                        pf_req_session_id(r), pf_req_map_id(r));
}

/* Job: a session's create (first plan), read or updates. */
static void run_session(pf_req *r, pf_search_ctx *ctx) {
    session_job *job = pf_req_state(r);
    pf_sessions_routes *m = job->m;
    char location[160];
    pf_jsonw w;
    pf_error err;
    (void)ctx;
    pf_jsonw_init(&w, 8192);
    err = pf_session_run(m->sessions, m->registry, m->metrics, job->session,
                         job->has_updates ? &job->updates : NULL, &w);
    snprintf(location, sizeof(location), "/v1/maps/%s/sessions/%s", pf_req_map_id(r),
             pf_session_id(job->session));
    let_go(job, err == PF_ERR_NONE);
    if (err)
        pf_req_answer_error_body(r, err, &w);
    else if (job->created)
        pf_req_answer_created(r, &w, location);
    else
        pf_req_answer_json(r, &w);
    pf_req_finish(r);
}

/* Queues run_session as `kind`; a refused job lets the session go at
 * once. A session request has the default deadline for its wait in the
 * queue (its D* Lite plan itself runs to the end). */
static void dispatch_session(pf_req *r, session_job *job, pf_job_kind kind) {
    pf_req_set_deadline(r, pf_req_arrival_ns(r) + (uint64_t)job->m->cfg->deadline_ms * 1000000ull);
    if (!pf_req_dispatch(r, kind, run_session)) let_go(job, false);
}

void pf__route_sessions_create(pf_req *r, pf_sessions_routes *m) {
    const pf_config *cfg = m->cfg;
    pf_session_request q;
    pf_proto_error e;
    pf_status st;
    bool total;
    pf_mapver *mv;
    session_job *job;
    size_t reserve;
    size_t len;
    const char *body = pf_req_body(r, &len);
    /* A create is a write (pool.h's write lane): it runs before the
     * searches queued after it. (Its first plan may build a new agent
     * size's grid, a build's work, which the lane runs too.) */
    pf_job_kind kind = PF_JOB_BUILD;

    if (pf_session_request_parse(body, len, cfg->session_max_ttl_s, &q, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    mv = pf_registry_get(m->registry, pf_req_map_id(r));
    if (!mv) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return;
    }
    if (!q.nav != !mv->nav) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, "start",
                            "Map '%s' is a %s: 'start' and 'goal' are points %s.", mv->id,
                            mv->nav ? "navmesh" : "grid", mv->nav ? "[x, y, z]" : "[x, y]");
        pf_mapver_release(mv);
        return;
    }
    if (q.agent_size > cfg->max_agent_size) {
        pf_mapver_release(mv);
        pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "agent_size",
                            "Field 'agent_size' must be between 1 and %lld (this server's "
                            "max_agent_size).",
                            (long long)cfg->max_agent_size);
        return;
    }
    /* A navmesh session's endpoints are checked against the mesh by its
     * first plan (on a worker): an answer with reason "blocked", then 201. */
    if (!mv->nav && (st = pf_paths_check_endpoints(mv, q.start, q.goal, "", &e))) {
        pf_mapver_release(mv);
        pf_req_answer_perror(r, &e);
        return;
    }
    for (int k = 0; k < 2 && q.agent_size > 1; k++)
        if (pf_sessions_check_agent(mv, k ? q.goal : q.start, q.agent_size)) {
            pf_point p = k ? q.goal : q.start;
            pf_mapver_release(mv);
            pf_req_answer_error(r, PF_ERR_BLOCKED, k ? "goal" : "start",
                                "%s (%d,%d): an agent of size %d does not fit there.",
                                k ? "goal" : "start", (int)p.x, (int)p.y, (int)q.agent_size);
            return;
        }
    if (!(job = new_job(r, m))) {
        pf_mapver_release(mv);
        return;
    }
    /* Room in the budget for a search over the whole map (and the agent's
     * grid when its size is new on the map), before it is created; the session's charge follows
     * what it holds from its first plan on. A navmesh session's corridor is small and bounded. */
    reserve =
        mv->nav ? PF_SESSION_NAV_RESERVE
                : pf_mem_session_estimate((uint64_t)pf_grid_width(pf_planner_grid(mv->planner)) *
                                          (uint64_t)pf_grid_height(pf_planner_grid(mv->planner))) +
                      pf_mapver_agent_need(mv, q.agent_size, false);
    if (!pf_mem_try_charge(m->mem, PF_MEM_SESSIONS, reserve)) {
        pf_mapver_release(mv);
        pf_req_answer_error(
            r, PF_ERR_INSUFFICIENT_STORAGE, NULL,
            "A session on map '%s' needs up to %zu bytes; the memory budget (--max-memory) is "
            "%llu bytes and %llu are in use. Delete sessions or maps, or raise it.",
            pf_req_map_id(r), reserve, (unsigned long long)pf_mem_budget(m->mem),
            (unsigned long long)pf_mem_used(m->mem));
        return;
    }
    if (mv->nav)
        st = pf_sessions_add_nav(m->sessions, mv, q.start3, q.goal3,
                                 q.ttl_s ? q.ttl_s : cfg->session_ttl_s, pf_clock_now_ns(),
                                 &job->session, &total);
    else
        st = pf_sessions_add_sized(m->sessions, mv, q.start, q.goal, q.agent_size,
                                   q.ttl_s ? q.ttl_s : cfg->session_ttl_s, pf_clock_now_ns(),
                                   &job->session, &total);
    pf_mapver_release(mv);
    if (st)
        pf_mem_uncharge(m->mem, PF_MEM_SESSIONS, reserve);
    else
        pf_session_take_charge(job->session, m->mem, reserve);
    if (st == PF_ELIMIT && !total) {
        pf_req_answer_error(r, PF_ERR_TOO_MANY_SESSIONS, NULL,
                            "Map '%s' has %lld sessions, its limit; delete one or let one expire.",
                            pf_req_map_id(r), (long long)cfg->max_sessions_per_map);
        pf_req_add_retry_after(r);
        return;
    }
    if (st == PF_ELIMIT) {
        pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                            "The server holds %lld sessions, its limit. Retry later.",
                            (long long)cfg->max_sessions);
        return;
    }
    if (st) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    pf_session_set_owner(job->session, pf_req_principal(r));
    job->created = true;
    dispatch_session(r, job, kind);
}

/* Whether the request's token may use the route's session: a read token
 * only the sessions it created, a write token (and anyone on a server
 * without tokens) every session. Another token's session is answered as if
 * it did not exist. */
static bool may_use(pf_req *r, pf_sessions *t) {
    if (pf_req_scope(r) != PF_SCOPE_READ) return true;
    return pf_sessions_owner_is(t, pf_req_map_id(r), pf_req_session_id(r), pf_req_principal(r));
}

/* Holds the route's session; answers 404 / 409 otherwise. */
static bool hold_session(pf_req *r, session_job *job) {
    if (!may_use(r, job->m->sessions)) {
        answer_no_session(r);
        return false;
    }
    switch (pf_sessions_acquire(job->m->sessions, pf_req_map_id(r), pf_req_session_id(r),
                                pf_clock_now_ns(), &job->session)) {
    case PF_SESSION_OK:
        return true;
    case PF_SESSION_BUSY:
        pf_req_answer_error(r, PF_ERR_SESSION_BUSY, NULL,
                            "Another request is using session '%s'; retry when it is answered.",
                            pf_req_session_id(r));
        return false;
    default:
        answer_no_session(r);
        return false;
    }
}

void pf__route_session_get(pf_req *r, pf_sessions_routes *m) {
    session_job *job = new_job(r, m);
    if (job && hold_session(r, job)) dispatch_session(r, job, PF_JOB_SEARCH);
}

void pf__route_session_updates(pf_req *r, pf_sessions_routes *m) {
    session_job *job = new_job(r, m);
    pf_proto_error e;
    size_t len;
    const char *body = pf_req_body(r, &len);
    if (!job) return;
    job->has_updates = true;
    if (pf_update_list_parse(body, len, pf_req_body_kind(r) == PF_BODY_NDJSON,
                             (size_t)m->cfg->max_updates, &job->updates, &e)) {
        pf_req_answer_perror(r, &e);
        return;
    }
    if (hold_session(r, job)) dispatch_session(r, job, PF_JOB_SEARCH);
}

void pf__route_session_delete(pf_req *r, pf_sessions_routes *m) {
    if (!may_use(r, m->sessions) ||
        !pf_sessions_remove(m->sessions, pf_req_map_id(r), pf_req_session_id(r)))
        answer_no_session(r);
    else
        pf_req_answer_no_content(r);
}

/* GET /v1/maps/{id}/sessions?limit=N&after=SID */

#define LIST_DEFAULT 1000
#define LIST_MAX 10000

void pf__route_sessions_list(pf_req *r, pf_sessions_routes *m) {
    pf_kv kv[8];
    size_t nkv, n = 0, first = 0, limit = LIST_DEFAULT, shown;
    const char *after = NULL;
    pf_session_info *list = NULL;
    pf_mapver *mv;
    pf_jsonw w;
    if (!pf_req_query(r, kv, 8, &nkv)) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, NULL, "Too many parameters.");
        return;
    }
    for (size_t i = 0; i < nkv; i++) {
        const char *v = kv[i].value ? kv[i].value : "";
        if (strcmp(kv[i].key, "limit") == 0) {
            char *end;
            long long x = strtoll(v, &end, 10);
            if (!*v || *end || x < 1 || x > LIST_MAX) {
                pf_req_answer_error(r, PF_ERR_INVALID_VALUE, "limit",
                                    "Parameter 'limit' must be an integer in 1..%d.", LIST_MAX);
                return;
            }
            limit = (size_t)x;
        } else if (strcmp(kv[i].key, "after") == 0) {
            after = v;
        } else {
            pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, kv[i].key, "Unknown parameter '%.40s'.",
                                kv[i].key);
            return;
        }
    }
    if (!(mv = pf_registry_get(m->registry, pf_req_map_id(r)))) {
        pf_req_answer_error(r, PF_ERR_MAP_NOT_FOUND, NULL, "No map with id '%s'.",
                            pf_req_map_id(r));
        return;
    }
    pf_mapver_release(mv);
    if (pf_sessions_list(m->sessions, pf_req_map_id(r), pf_clock_now_ns(), &list, &n)) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    if (pf_req_scope(r) == PF_SCOPE_READ) { /* a read token lists its own sessions only */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (pf_auth_id_equal(&list[i].owner, pf_req_principal(r))) list[k++] = list[i];
        n = k;
    }
    if (after)
        while (first < n && strcmp(list[first].id, after) <= 0) first++;
    shown = n - first < limit ? n - first : limit;
    pf_jsonw_init(&w, 160 * shown + 128);
    pf_jsonw_obj_begin(&w);
    pf_jsonw_kstr(&w, "map_id", pf_req_map_id(r));
    pf_jsonw_kuint(&w, "count", n);
    pf_jsonw_key(&w, "sessions");
    pf_jsonw_arr_begin(&w);
    for (size_t i = first; i < first + shown; i++) {
        const pf_session_info *s = &list[i];
        pf_jsonw_obj_begin(&w);
        pf_jsonw_kstr(&w, "session_id", s->id);
        pf_jsonw_kbool(&w, "busy", s->busy);
        if (!s->busy) {
            pf_jsonw_key(&w, "position");
            if (s->nav)
                pf_nav_write_point(&w, s->position3);
            else
                pf_jsonw_point(&w, s->position.x, s->position.y);
            pf_jsonw_key(&w, "goal");
            if (s->nav)
                pf_nav_write_point(&w, s->goal3);
            else
                pf_jsonw_point(&w, s->goal.x, s->goal.y);
            pf_jsonw_kuint(&w, "map_version", s->map_version);
            pf_jsonw_kuint(&w, "idle_ms", s->idle_ms);
        }
        pf_jsonw_kint(&w, "ttl_s", s->ttl_s);
        pf_jsonw_obj_end(&w);
    }
    pf_jsonw_arr_end(&w);
    pf_jsonw_key(&w, "next");
    if (first + shown < n)
        pf_jsonw_str(&w, list[first + shown - 1].id);
    else
        pf_jsonw_null(&w);
    pf_jsonw_obj_end(&w);
    free(list);
    pf_req_answer_json(r, &w);
}

/* GET .../stream */

/* Who takes the socket after the 101. */
typedef struct stream_job {
    pf_hub *hub;
    bool reserved; /* holds one of the hub's max_streams places until adopted */
    char map_id[PF_MAP_ID_MAX + 1];
    char sid[PF_SESSION_ID_MAX + 1];
    pf_hub_token tok; /* the token it was opened with */
} stream_job;

static void free_stream_job(void *p) {
    stream_job *job = p;
    if (job->reserved) pf_hub_unreserve(job->hub); /* the upgrade never happened */
    free(job);
}

static void adopt_stream(void *ud, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                         const char *extra, size_t n) {
    stream_job *job = ud;
    job->reserved = false; /* the hub's now */
    pf_hub_adopt(job->hub, sock, urh, extra, n, job->map_id, job->sid, &job->tok);
}

bool pf_routes_ws_handshake(pf_req *r, char accept[PF_WS_ACCEPT_LEN + 1]) {
    const char *key, *ver;
    if (!pf_req_header_has(r, MHD_HTTP_HEADER_UPGRADE, "websocket") ||
        !pf_req_header_has(r, MHD_HTTP_HEADER_CONNECTION, "upgrade")) {
        pf_req_answer_error(r, PF_ERR_UPGRADE_REQUIRED, NULL,
                            "This is a WebSocket endpoint: send the RFC 6455 handshake (Upgrade: "
                            "websocket, Connection: Upgrade, Sec-WebSocket-Version: 13).");
        pf_req_add_header(r, "Sec-WebSocket-Version", "13");
        return false;
    }
    ver = pf_req_header(r, "Sec-WebSocket-Version");
    if (!ver || strcmp(ver, "13") != 0) {
        pf_req_answer_error(r, PF_ERR_UPGRADE_REQUIRED, "Sec-WebSocket-Version",
                            "Only WebSocket version 13 (RFC 6455) is spoken here.");
        pf_req_add_header(r, "Sec-WebSocket-Version", "13");
        return false;
    }
    key = pf_req_header(r, "Sec-WebSocket-Key");
    if (pf_ws_accept_key(key, accept)) {
        pf_req_answer_error(r, PF_ERR_INVALID_REQUEST, "Sec-WebSocket-Key",
                            "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 4.1).");
        return false;
    }
    return true;
}

/* Takes one of the hub's max_streams places (stream.h), answering 503
 * when there is none. */
static bool reserve_stream(pf_req *r, pf_sessions_routes *m) {
    if (pf_hub_reserve(m->hub)) return true;
    pf_req_answer_error(r, PF_ERR_OVERLOADED, NULL,
                        "The server has %lld open streams, its limit. Retry later.",
                        (long long)m->cfg->max_streams);
    return false;
}

void pf__route_session_stream(pf_req *r, pf_sessions_routes *m) {
    char accept[PF_WS_ACCEPT_LEN + 1];
    stream_job *job;
    if (!may_use(r, m->sessions) || !pf_sessions_exists(m->sessions, pf_req_map_id(r),
                                                        pf_req_session_id(r), pf_clock_now_ns())) {
        answer_no_session(r);
        return;
    }
    if (!pf_routes_ws_handshake(r, accept)) return;
    if (!(job = calloc(1, sizeof(*job)))) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->hub = m->hub;
    job->tok = (pf_hub_token){*pf_req_principal(r), pf_req_scope(r)};
    snprintf(job->map_id, sizeof(job->map_id), "%s", pf_req_map_id(r));
    snprintf(job->sid, sizeof(job->sid), "%s", pf_req_session_id(r));
    pf_req_set_state(r, job, free_stream_job);
    /* The place is taken now, not when the hub adopts the socket: two
     * handshakes at once cannot both take the last one. */
    if (!reserve_stream(r, m)) return;
    job->reserved = true;
    pf_req_answer_upgrade(r, accept, adopt_stream, job);
}

/* GET /v1/stream: the multiplexed stream (stream.h). */

/* Who takes a multiplexed stream's socket after the 101, and with which
 * token. */
typedef struct mux_job {
    pf_hub *hub;
    bool reserved; /* holds one of the hub's max_streams places until adopted */
    pf_hub_token tok;
    bool own_only;
} mux_job;

static void free_mux_job(void *p) {
    mux_job *job = p;
    if (job->reserved) pf_hub_unreserve(job->hub); /* the upgrade never happened */
    free(job);
}

static void adopt_mux(void *ud, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh,
                      const char *extra, size_t n) {
    mux_job *job = ud;
    job->reserved = false; /* the hub's now */
    pf_hub_adopt_mux(job->hub, sock, urh, extra, n, &job->tok, job->own_only);
}

void pf__route_stream(pf_req *r, pf_sessions_routes *m) {
    char accept[PF_WS_ACCEPT_LEN + 1];
    mux_job *job;
    if (!pf_routes_ws_handshake(r, accept)) return;
    if (!(job = calloc(1, sizeof(*job)))) {
        pf_req_answer_error(r, PF_ERR_NO_MEMORY, NULL, NULL);
        return;
    }
    job->hub = m->hub;
    job->tok = (pf_hub_token){*pf_req_principal(r), pf_req_scope(r)};
    job->own_only = pf_req_scope(r) == PF_SCOPE_READ;
    pf_req_set_state(r, job, free_mux_job);
    if (!reserve_stream(r, m)) return;
    job->reserved = true;
    pf_req_answer_upgrade(r, accept, adopt_mux, job);
}
