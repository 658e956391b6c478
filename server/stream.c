/* stream.c -- see stream.h: the hub, one libuv loop thread for every
 * WebSocket stream. It takes upgraded connections (pf__conn_adopt), hands
 * pool work back to its thread (pf__hub_done: session and crowd answers,
 * multiplexed answers, crowd frames), runs the once-a-second reaper and
 * the crowds' ticker, and drains at shutdown. What a connection is lives
 * in stream_conn.c; what each kind of stream means in stream_session.c,
 * stream_crowd.c and stream_mux.c. */
#include <stdlib.h>

#include "clock.h"
#include "stream_conn.h"

#define REAP_EVERY_MS 1000

void pf__hub_done(pf_hub *h, pf_stream_done *d) {
    uv_mutex_lock(&h->mu);
    d->next = h->done;
    h->done = d;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

void pf__hub_count_close(pf_hub *h, uint64_t *counter) {
    uv_mutex_lock(&h->mu);
    (*counter)++;
    uv_mutex_unlock(&h->mu);
}

/* Once a second: drops streams past their close timeout, closes idle ones
 * and those whose session or crowd ended (expired, deleted, its map
 * replaced or deleted: the kind's ended), and reaps expired sessions and
 * crowds. */
static void on_tick(uv_timer_t *t) {
    pf_hub *h = t->data;
    uint64_t now = pf_clock_now_ns(), idle = (uint64_t)h->d.ws_idle_timeout_s * 1000000000ull;
    pf_wsconn *c, *n;
    pf__hub_count_close(h, &h->stats.reaper_runs); /* a count, under the same lock */
    pf_sessions_reap(h->d.sessions, now);
    if (h->d.crowds) pf_crowds_reap(h->d.crowds, now);
    for (c = h->all; c; c = n) {
        n = c->all_next;
        if (c->state == PF_CONN_CLOSE_SENT || c->state == PF_CONN_LINGER) {
            if (now >= c->close_by_ns) {
                pf__hub_count_close(h, &h->stats.dropped_after_close);
                pf__conn_gone(c);
                pf__conn_update_poll(c);
            }
            continue;
        }
        if (c->state != PF_CONN_OPEN || c->in_job ||
            (c->ops->outstanding && c->ops->outstanding(c)))
            continue;
        if (now - c->last_msg_ns > idle) {
            pf__hub_count_close(h, &h->stats.closed_idle);
            pf__conn_close_with(c, PF_WS_CLOSE_NORMAL, "idle: no message within ws_idle_timeout_s");
        } else if (!c->ops->ended || !c->ops->ended(c, now)) {
            continue;
        }
        pf__conn_update_poll(c);
    }
}

static void on_async(uv_async_t *a) {
    pf_hub *h = a->data;
    pf_wsconn *in;
    pf_stream_done *done;
    bool close_all, stop, rescan;
    uint64_t token_checks;
    uv_mutex_lock(&h->mu);
    in = h->incoming;
    done = h->done;
    h->incoming = NULL;
    h->done = NULL;
    close_all = h->close_all;
    stop = h->stop;
    rescan = h->rescan && !stop;
    h->rescan = false;
    token_checks = h->token_checks_asked;
    uv_mutex_unlock(&h->mu);
    if (token_checks != h->token_checks_done) {
        /* The token file was reloaded: streams whose token went lose it
         * now, before anything else of theirs runs. */
        for (pf_wsconn *c = h->all; c; c = c->all_next)
            if (c->state == PF_CONN_OPEN) (void)pf__conn_still_allowed(c);
        uv_mutex_lock(&h->mu);
        h->token_checks_done = token_checks;
        uv_cond_broadcast(&h->token_cv);
        uv_mutex_unlock(&h->mu);
    }
    while (done) { /* answers, crowd frames: pool work back on this thread */
        pf_stream_done *d = done;
        done = d->next;
        d->answered(d);
    }
    if (rescan) pf__crowd_streams_rescan(h);
    while (in) {
        pf_wsconn *c = in;
        in = c->next;
        pf__conn_start(c, close_all || stop);
    }
    if (close_all || stop) {
        pf_wsconn *c = h->all, *n;
        for (; c; c = n) {
            n = c->all_next;
            pf__conn_close_with(c, PF_WS_CLOSE_GOING_AWAY, "server shutting down");
            if (stop) pf__conn_gone(c); /* do not wait for slow readers */
            pf__conn_update_poll(c);
        }
    }
    if (stop && !h->all) {
        uv_close((uv_handle_t *)&h->reaper, NULL);
        uv_close((uv_handle_t *)&h->ticker, NULL);
        uv_close((uv_handle_t *)&h->async, NULL);
    }
}

/* The crowds' notify: a tick rate changed (any thread). */
static void crowds_changed(void *ud) {
    pf_hub *h = ud;
    uv_mutex_lock(&h->mu);
    h->rescan = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

static void hub_main(void *arg) {
    pf_hub *h = arg;
    uv_run(&h->loop, UV_RUN_DEFAULT);
}

bool pf_hub_reserve(pf_hub *h) {
    bool ok;
    uv_mutex_lock(&h->mu);
    ok = h->count < h->d.max_streams;
    if (ok) h->count++;
    uv_mutex_unlock(&h->mu);
    return ok;
}

void pf_hub_unreserve(pf_hub *h) {
    uv_mutex_lock(&h->mu);
    h->count--;
    uv_mutex_unlock(&h->mu);
}

pf_status pf_hub_create(const pf_hub_deps *d, pf_hub **out) {
    pf_hub *h = calloc(1, sizeof(*h));
    *out = NULL;
    if (!h) return PF_ENOMEM;
    h->d = *d;
    if (uv_loop_init(&h->loop)) goto out_free_hub;
    if (uv_mutex_init(&h->mu)) goto out_close_loop;
    if (uv_cond_init(&h->token_cv)) goto out_destroy_mutex;
    if (uv_async_init(&h->loop, &h->async, on_async)) goto out_destroy_cond;
    h->async.data = h;
    uv_timer_init(&h->loop, &h->reaper);
    h->reaper.data = h;
    uv_timer_start(&h->reaper, on_tick, REAP_EVERY_MS, REAP_EVERY_MS);
    uv_unref((uv_handle_t *)&h->reaper);
    uv_timer_init(&h->loop, &h->ticker);
    h->ticker.data = h;
    uv_unref((uv_handle_t *)&h->ticker);
    if (uv_thread_create(&h->thread, hub_main, h)) goto out_close_handles;
    if (h->d.crowds) pf_crowds_set_notify(h->d.crowds, crowds_changed, h);
    *out = h;
    return PF_OK;

out_close_handles:
    uv_close((uv_handle_t *)&h->async, NULL);
    uv_close((uv_handle_t *)&h->reaper, NULL);
    uv_close((uv_handle_t *)&h->ticker, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
out_destroy_cond:
    uv_cond_destroy(&h->token_cv);
out_destroy_mutex:
    uv_mutex_destroy(&h->mu);
out_close_loop:
    uv_loop_close(&h->loop);
out_free_hub:
    free(h);
    return PF_ENOMEM;
}

void pf_hub_tokens_changed(pf_hub *h) {
    uint64_t want;
    uv_mutex_lock(&h->mu);
    want = ++h->token_checks_asked;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    uv_mutex_lock(&h->mu);
    while (h->token_checks_done < want && !h->stop) uv_cond_wait(&h->token_cv, &h->mu);
    uv_mutex_unlock(&h->mu);
}

void pf_hub_close_all(pf_hub *h) {
    uv_mutex_lock(&h->mu);
    h->close_all = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
}

size_t pf_hub_count(pf_hub *h) {
    size_t n;
    uv_mutex_lock(&h->mu);
    n = h->count;
    uv_mutex_unlock(&h->mu);
    return n;
}

void pf_hub_get_stats(pf_hub *h, pf_hub_stats *out) {
    uv_mutex_lock(&h->mu);
    *out = h->stats;
    out->open = h->count;
    uv_mutex_unlock(&h->mu);
}

void pf_hub_destroy(pf_hub *h) {
    if (!h) return;
    if (h->d.crowds) pf_crowds_set_notify(h->d.crowds, NULL, NULL);
    uv_mutex_lock(&h->mu);
    h->stop = true;
    uv_mutex_unlock(&h->mu);
    uv_async_send(&h->async);
    uv_thread_join(&h->thread);
    while (h->done) { /* crowd ticks that ended after the loop did */
        pf_stream_done *d = h->done;
        h->done = d->next;
        if (d->discard) d->discard(d);
    }
    uv_loop_close(&h->loop);
    uv_cond_destroy(&h->token_cv);
    uv_mutex_destroy(&h->mu);
    free(h);
}
