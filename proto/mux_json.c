/* mux_json.c -- see mux_json.h. */
#include "mux_json.h"

#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

static const char *const mux_members[] = {"op", "map", "session", "tag", "update", "create", NULL};
static const char *const mux_ops[] = {"update", "get", "create", "delete"};

const char *pf_mux_op_name(pf_mux_op op) {
    return (unsigned)op < sizeof(mux_ops) / sizeof(mux_ops[0]) ? mux_ops[op] : "update";
}

void pf_mux_message_free(pf_mux_message *m) {
    if (!m) return;
    pf_update_list_free(&m->update);
    memset(m, 0, sizeof(*m));
}

/* A required or optional id string of 1..PF_MUX_ID_MAX bytes. */
static pf_status read_id(const cJSON *root, const char *name, bool required, char *out,
                         pf_proto_error *e) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, name);
    const char *s;
    pf_status st;
    if (!it) {
        if (!required) return PF_OK;
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' is required.", name);
    }
    if ((st = pf_jsonr_string(it, name, &s, e))) return st;
    if (!*s || strlen(s) > PF_MUX_ID_MAX)
        return pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, name,
                                  "Field '%s' must be an id of 1 to %d characters.", name,
                                  PF_MUX_ID_MAX);
    memcpy(out, s, strlen(s) + 1);
    return PF_OK;
}

pf_status pf_mux_message_parse(const char *buf, size_t len, int64_t max_ttl_s, pf_mux_message *out,
                               pf_proto_error *e) {
    pf_mux_message m;
    cJSON *root;
    const cJSON *it, *upd, *cre;
    const char *s;
    pf_status st;

    memset(out, 0, sizeof(*out));
    memset(&m, 0, sizeof(m));
    if ((st = pf_jsonr_parse(buf, len, &root, e))) return st;
    if ((st = pf_jsonr_object(root, NULL, e))) goto out;
    if ((st = pf_jsonr_check_members(root, mux_members, "", e))) goto out;
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "op"))) {
        size_t k = 0;
        if ((st = pf_jsonr_string(it, "op", &s, e))) goto out;
        while (k < sizeof(mux_ops) / sizeof(mux_ops[0]) && strcmp(s, mux_ops[k]) != 0) k++;
        if (k == sizeof(mux_ops) / sizeof(mux_ops[0])) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "op",
                                    "Unknown op '%.40s'; use update, get, create or delete.", s);
            goto out;
        }
        m.op = (pf_mux_op)k;
    }
    if ((st = read_id(root, "map", true, m.map_id, e))) goto out;
    if ((st = read_id(root, "session", m.op != PF_MUX_CREATE, m.session_id, e))) goto out;
    if (m.op == PF_MUX_CREATE && m.session_id[0]) {
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "session",
                                "A create names no session: the answer gives its id.");
        goto out;
    }
    if ((it = cJSON_GetObjectItemCaseSensitive(root, "tag"))) {
        if (cJSON_IsString(it) && it->valuestring && strlen(it->valuestring) <= PF_MUX_TAG_MAX) {
            m.tag_kind = 1;
            memcpy(m.tag, it->valuestring, strlen(it->valuestring) + 1);
        } else if (cJSON_IsNumber(it) &&
                   pf_jsonr_int(it, "tag", -(INT64_C(1) << 53), INT64_C(1) << 53, &m.tag_int,
                                NULL) == PF_OK) {
            m.tag_kind = 2;
        } else {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "tag",
                                    "Field 'tag' must be a string of at most %d bytes or an "
                                    "integer.",
                                    PF_MUX_TAG_MAX);
            goto out;
        }
    }
    upd = cJSON_GetObjectItemCaseSensitive(root, "update");
    cre = cJSON_GetObjectItemCaseSensitive(root, "create");
    if ((upd && m.op != PF_MUX_UPDATE) || (cre && m.op != PF_MUX_CREATE)) {
        const char *f = upd && m.op != PF_MUX_UPDATE ? "update" : "create";
        st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, f,
                                "Field '%s' does not go with op '%s'.", f, pf_mux_op_name(m.op));
        goto out;
    }
    if (m.op == PF_MUX_UPDATE) {
        if (!upd) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "update",
                                    "Field 'update' is required with op update.");
            goto out;
        }
        m.update.items = calloc(1, sizeof(*m.update.items));
        if (!m.update.items) {
            st = pf_proto_error_set(e, PF_ENOMEM, PF_ERR_NO_MEMORY, NULL, "Out of memory.");
            goto out;
        }
        m.update.n = 1;
        if (!cJSON_IsObject(upd)) {
            st = pf_jsonr_object(upd, "update", e);
            goto out;
        }
        if ((st = pf_update_read(upd, "update.", false, &m.update.items[0], e))) goto out;
    }
    if (m.op == PF_MUX_CREATE) {
        if (!cre) {
            st = pf_proto_error_set(e, PF_EPARSE, PF_ERR_INVALID_REQUEST, "create",
                                    "Field 'create' is required with op create.");
            goto out;
        }
        if ((st = pf_session_request_read(cre, "create.", max_ttl_s, &m.create, e))) goto out;
    }
    *out = m;
    cJSON_Delete(root);
    return PF_OK;
out:
    pf_mux_message_free(&m);
    cJSON_Delete(root);
    return st;
}

void pf_mux_write_head(pf_jsonw *w, const pf_mux_message *m, const char *session_id) {
    pf_jsonw_kstr(w, "op", pf_mux_op_name(m->op));
    pf_jsonw_kstr(w, "map", m->map_id);
    pf_jsonw_key(w, "session");
    if (session_id && *session_id)
        pf_jsonw_str(w, session_id);
    else if (m->session_id[0])
        pf_jsonw_str(w, m->session_id);
    else
        pf_jsonw_null(w);
    if (m->tag_kind == 1) pf_jsonw_kstr(w, "tag", m->tag);
    if (m->tag_kind == 2) pf_jsonw_kint(w, "tag", m->tag_int);
}
