/* example.c -- clients/c in one page: upload a map, ask for a path, then
 * follow a moving agent with a D* Lite session over a WebSocket.
 *
 *   cc -std=c99 example.c pathd.c -lcurl -o example
 *   ./example http://127.0.0.1:8080
 */
#include <curl/curl.h>
#include <stdio.h>

#include "pathd.h"

/* A 5 x 3 room with a door in the only gap of its wall. */
static const char map[] = "{\"rows\":[\"..#..\",\"..#..\",\".....\"],"
                          "\"doors\":{\"gate\":{\"cells\":[[2,2]]}}}";

static int report(const char *what, pathd_status st, const pathd_error *e) {
    fprintf(stderr, "%s: %s: %s", what, pathd_status_str(st), e->message);
    if (st == PATHD_ERR_API)
        fprintf(stderr, " (HTTP %d, %s, field '%s')", e->http_status, e->code_text, e->field);
    fprintf(stderr, "\n");
    return 1;
}

int main(int argc, char **argv) {
    pathd_options opts = {0};
    pathd_client *c;
    pathd_map_info info;
    pathd_path path;
    pathd_session sess, now;
    pathd_stream *ws;
    pathd_error e;
    pathd_status st;
    pathd_point start = {0, 0}, goal = {4, 0}, step = {1, 1};
    pathd_door_switch shut = {"gate", false};
    pathd_update up = {0};

    curl_global_init(CURL_GLOBAL_DEFAULT);
    opts.base_url = argc > 1 ? argv[1] : "http://127.0.0.1:8080";
    opts.timeout_ms = 5000; /* per attempt; 503s are retried after Retry-After */
    if ((st = pathd_client_create(&opts, &c, &e))) return report("client", st, &e);

    if ((st = pathd_map_put(c, "example", map, sizeof(map) - 1, PATHD_MAP_JSON, &info, &e)))
        return report("PUT /v1/maps/example", st, &e);
    printf("map %s version %llu: %dx%d, %d door(s)\n", info.id, (unsigned long long)info.version,
           info.width, info.height, info.doors);

    if ((st = pathd_find_path(c, "example", start, goal, NULL, &path, &e)))
        return report("path", st, &e);
    printf("path found=%d cost=%.3f steps=%zu algorithm=%s\n", path.found, path.cost, path.npoints,
           path.algorithm);
    pathd_path_free(&path);

    /* A session follows one agent; the stream sends its moves and the doors
     * it sees, and answers the repaired path each time. */
    if ((st = pathd_session_create(c, "example", start, goal, 60, &sess, &e)))
        return report("session", st, &e);
    if ((st = pathd_stream_open(c, "example", sess.session_id, &ws, &e)))
        return report("stream", st, &e);
    up.position = &step;
    if ((st = pathd_stream_send(ws, &up, &e)) || (st = pathd_stream_recv(ws, &now, &e)))
        return report("move", st, &e);
    printf("after the move: cost=%.3f from (%d,%d)\n", now.cost, now.position.x, now.position.y);
    pathd_session_free(&now);
    up.position = NULL;
    up.doors = &shut;
    up.ndoors = 1;
    if ((st = pathd_stream_send(ws, &up, &e)) || (st = pathd_stream_recv(ws, &now, &e)))
        return report("door", st, &e);
    printf("gate shut: found=%d reason=%s\n", now.found, now.reason);
    pathd_session_free(&now);
    pathd_stream_close(ws);

    pathd_session_delete(c, "example", sess.session_id, &e);
    pathd_session_free(&sess);
    pathd_map_delete(c, "example", &e);
    pathd_client_destroy(c);
    curl_global_cleanup();
    return 0;
}
