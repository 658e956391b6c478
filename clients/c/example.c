/* example.c -- clients/c in one page: upload a map, ask for a path, then
 * follow a moving agent with a D* Lite session over a WebSocket.
 *
 *   cc -std=c99 example.c pathd.c -lcurl -o example
 *   ./example http://127.0.0.1:8080
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

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

    /* A waypoint graph: ids as strings or integers, a point snapped to the
     * nearest node, a PATCH that closes an edge as the next version. */
    {
        pathd_graph_node nodes[3];
        pathd_graph_edge edges[3];
        pathd_edge_change close = {-1, "hall-door", 0, -1};
        pathd_graph_path gp;
        memset(nodes, 0, sizeof(nodes));
        memset(edges, 0, sizeof(edges));
        nodes[0].id = pathd_node_str("hall");
        nodes[1].id = pathd_node_str("door");
        nodes[1].pos.x = 10;
        nodes[2].id = pathd_node_int(3);
        nodes[2].pos.x = nodes[2].pos.y = 10;
        nodes[0].dims = nodes[1].dims = nodes[2].dims = 2;
        edges[0].from = nodes[0].id, edges[0].to = nodes[1].id, edges[0].cost = -1;
        edges[0].id = "hall-door";
        edges[1].from = nodes[1].id, edges[1].to = nodes[2].id, edges[1].cost = 25;
        edges[2].from = nodes[0].id, edges[2].to = nodes[2].id, edges[2].cost = 50;
        if ((st = pathd_graph_put(c, "rooms", nodes, 3, edges, 3, NULL, 0, 0, &info, &e)))
            return report("PUT /v1/maps/rooms", st, &e);
        if ((st = pathd_graph_find_path(c, "rooms", pathd_place_point(1, 1),
                                        pathd_place_node(pathd_node_int(3)), NULL, &gp, &e)))
            return report("graph path", st, &e);
        printf("graph path over %zu nodes cost=%.3f (start snapped to %s)\n", gp.nnodes, gp.cost,
               gp.start.node.str);
        pathd_graph_path_free(&gp);
        if ((st = pathd_graph_patch(c, "rooms", NULL, 0, NULL, 0, &close, 1, NULL, &info, &e)))
            return report("PATCH /v1/maps/rooms", st, &e);
        if ((st = pathd_graph_find_path(c, "rooms", pathd_place_node(nodes[0].id),
                                        pathd_place_node(nodes[2].id), NULL, &gp, &e)))
            return report("graph path", st, &e);
        printf("hall-door closed: %zu nodes cost=%.3f\n", gp.nnodes, gp.cost);
        pathd_graph_path_free(&gp);
        pathd_map_delete(c, "rooms", &e);
    }
    pathd_client_destroy(c);
    curl_global_cleanup();
    return 0;
}
