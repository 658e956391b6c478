/* conns.c -- see conns.h. A doubly linked list under one mutex (changed at
 * accept and close only), scanned by the watchdog four times a second. */
#include "conns.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <uv.h>

#include "clock.h"

#define SCAN_EVERY_NS (250ull * 1000000ull)

enum { WAITING = 0, RECEIVING, HANDLING, UPGRADED };

struct pf_conn {
    int fd;
    atomic_int state;
    atomic_uint_fast64_t since_ns; /* when it entered its state */
    bool shut;                     /* the watchdog closed it (lock held) */
    struct pf_conn *prev, *next;
};

struct pf_conns {
    uint64_t request_ns, idle_ns;
    uint64_t answer_conn_max, answer_total_max;
    atomic_uint_fast64_t answers_bytes, answers_held, answers_too_big, answers_refused;
    uv_mutex_t mu;
    uv_cond_t cv;
    pf_conn *head;
    bool stop;
    uint64_t open, closed_slow, closed_idle;
    uv_thread_t thread;
};

static void set_state(pf_conn *c, int state) {
    atomic_store_explicit(&c->since_ns, pf_clock_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&c->state, state, memory_order_release);
}

/* Closes the connections past their deadline. Lock held. */
static void scan(pf_conns *t, uint64_t now) {
    for (pf_conn *c = t->head; c; c = c->next) {
        int st = atomic_load_explicit(&c->state, memory_order_acquire);
        uint64_t since = atomic_load_explicit(&c->since_ns, memory_order_relaxed);
        uint64_t limit = st == WAITING ? t->idle_ns : st == RECEIVING ? t->request_ns : 0;
        if (!limit || c->shut || now < since || now - since <= limit) continue;
        shutdown(c->fd, SHUT_RDWR);
        c->shut = true;
        if (st == WAITING)
            t->closed_idle++;
        else
            t->closed_slow++;
    }
}

static void watchdog(void *arg) {
    pf_conns *t = arg;
    uv_mutex_lock(&t->mu);
    while (!t->stop) {
        scan(t, pf_clock_now_ns());
        (void)uv_cond_timedwait(&t->cv, &t->mu, SCAN_EVERY_NS);
    }
    uv_mutex_unlock(&t->mu);
}

pf_status pf_conns_create(int64_t request_ms, int64_t idle_ms, int64_t answer_conn_max,
                          int64_t answer_total_max, pf_conns **out) {
    pf_conns *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (!t) return PF_ENOMEM;
    t->request_ns = (uint64_t)request_ms * 1000000ull;
    t->idle_ns = (uint64_t)idle_ms * 1000000ull;
    t->answer_conn_max = (uint64_t)answer_conn_max;
    t->answer_total_max = (uint64_t)answer_total_max;
    atomic_init(&t->answers_bytes, 0);
    atomic_init(&t->answers_held, 0);
    atomic_init(&t->answers_too_big, 0);
    atomic_init(&t->answers_refused, 0);
    if (uv_mutex_init(&t->mu)) goto out_free;
    if (uv_cond_init(&t->cv)) goto out_destroy_mutex;
    if (uv_thread_create(&t->thread, watchdog, t)) goto out_destroy_cv;
    *out = t;
    return PF_OK;

out_destroy_cv:
    uv_cond_destroy(&t->cv);
out_destroy_mutex:
    uv_mutex_destroy(&t->mu);
out_free:
    free(t);
    return PF_ENOMEM;
}

void pf_conns_destroy(pf_conns *t) {
    if (!t) return;
    uv_mutex_lock(&t->mu);
    t->stop = true;
    uv_cond_signal(&t->cv);
    uv_mutex_unlock(&t->mu);
    uv_thread_join(&t->thread);
    while (t->head) { /* none after the daemons stopped; freed all the same */
        pf_conn *c = t->head;
        t->head = c->next;
        free(c);
    }
    uv_cond_destroy(&t->cv);
    uv_mutex_destroy(&t->mu);
    free(t);
}

pf_conn *pf_conns_open(pf_conns *t, int fd) {
    pf_conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->fd = fd;
    atomic_init(&c->state, WAITING);
    atomic_init(&c->since_ns, pf_clock_now_ns());
    uv_mutex_lock(&t->mu);
    c->next = t->head;
    if (t->head) t->head->prev = c;
    t->head = c;
    t->open++;
    uv_mutex_unlock(&t->mu);
    return c;
}

void pf_conns_close(pf_conns *t, pf_conn *c) {
    if (!c) return;
    uv_mutex_lock(&t->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        t->head = c->next;
    if (c->next) c->next->prev = c->prev;
    t->open--;
    uv_mutex_unlock(&t->mu);
    free(c);
}

void pf_conn_request_line(pf_conn *c) {
    if (c && atomic_load(&c->state) != UPGRADED) set_state(c, RECEIVING);
}

void pf_conn_request_received(pf_conn *c) {
    if (c && atomic_load(&c->state) != UPGRADED) set_state(c, HANDLING);
}

void pf_conn_request_done(pf_conn *c) {
    if (c && atomic_load(&c->state) != UPGRADED) set_state(c, WAITING);
}

void pf_conn_upgraded(pf_conn *c) {
    if (c) set_state(c, UPGRADED);
}

pf_status pf_conns_answer_hold(pf_conns *t, size_t n, bool force) {
    uint64_t cur = atomic_load(&t->answers_bytes);
    if (!force && n > t->answer_conn_max) {
        atomic_fetch_add(&t->answers_too_big, 1);
        return PF_ELIMIT;
    }
    /* Compare and swap: two holds at once cannot both pass the total. */
    do {
        if (!force && (n > t->answer_total_max || cur > t->answer_total_max - n)) {
            atomic_fetch_add(&t->answers_refused, 1);
            return PF_ENOMEM;
        }
    } while (!atomic_compare_exchange_weak(&t->answers_bytes, &cur, cur + n));
    atomic_fetch_add(&t->answers_held, 1);
    return PF_OK;
}

void pf_conns_answer_sent(pf_conns *t, size_t n) {
    atomic_fetch_sub(&t->answers_bytes, n);
    atomic_fetch_sub(&t->answers_held, 1);
}

void pf_conns_answer_refused(pf_conns *t) { atomic_fetch_add(&t->answers_refused, 1); }

void pf_conns_get_stats(pf_conns *t, pf_conns_stats *out) {
    uv_mutex_lock(&t->mu);
    out->open = t->open;
    out->closed_slow_request = t->closed_slow;
    out->closed_idle = t->closed_idle;
    uv_mutex_unlock(&t->mu);
    out->answers_held = atomic_load(&t->answers_held);
    out->answers_bytes = atomic_load(&t->answers_bytes);
    out->answers_too_big = atomic_load(&t->answers_too_big);
    out->answers_refused = atomic_load(&t->answers_refused);
}
