/* mux_json.h -- the multiplexed session stream's messages (GET /v1/stream,
 * server/stream.h): one WebSocket carries the messages of any number of
 * sessions, each message naming its map and session. A message is one
 * JSON object (text frame):
 *   {"op":"update",              update (default), get, create or delete
 *    "map":"<map id>",           required
 *    "session":"<session id>",   required but for create
 *    "tag":"a1" | 17,            optional, echoed in the answer: a string
 *                                of at most 64 bytes or an integer
 *    "update":{...},             op update (required): one update, as POST
 *                                .../updates takes it (session_json.h)
 *    "create":{...}}             op create (required): as POST .../sessions
 * Errors name the field: "update.cells[2].cost", "create.start".
 * Thread-safe.
 */
#ifndef PF_PROTO_MUX_JSON_H
#define PF_PROTO_MUX_JSON_H

#include <stdint.h>

#include "errors.h"
#include "jsonw.h"
#include "session_json.h"

#define PF_MUX_ID_MAX 64
#define PF_MUX_TAG_MAX 64

typedef enum pf_mux_op { PF_MUX_UPDATE = 0, PF_MUX_GET, PF_MUX_CREATE, PF_MUX_DELETE } pf_mux_op;

typedef struct pf_mux_message {
    pf_mux_op op;
    char map_id[PF_MUX_ID_MAX + 1];
    char session_id[PF_MUX_ID_MAX + 1]; /* "" for create */
    int tag_kind;                       /* 0 none, 1 string, 2 integer */
    char tag[PF_MUX_TAG_MAX + 1];
    int64_t tag_int;
    pf_update_list update;     /* op update: one update (owned) */
    pf_session_request create; /* op create */
} pf_mux_message;

/* Parses one message. Statuses as pf_update_list_parse and
 * pf_session_request_parse (ttl_s up to max_ttl_s), plus PF_EPARSE for a
 * missing or malformed op, map, session or tag and for an update or create
 * member that does not go with the op. On error nothing is owned. Free
 * with pf_mux_message_free. */
pf_status pf_mux_message_parse(const char *buf, size_t len, int64_t max_ttl_s, pf_mux_message *out,
                               pf_proto_error *e);
void pf_mux_message_free(pf_mux_message *m);
const char *pf_mux_op_name(pf_mux_op op);

/* Writes the head of an answer's envelope into the object being written:
 * "op", "map", "session" (session_id, or m's when NULL) and "tag" when the
 * message had one. The caller adds "status" (the HTTP status the request
 * would have had) and "body" (its HTTP body, or null). */
void pf_mux_write_head(pf_jsonw *w, const pf_mux_message *m, const char *session_id);

#endif
