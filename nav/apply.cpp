/* apply.cpp -- pf_nav_apply: a change (obstacles put or removed, areas'
 * cost and state) checked whole, then the next version: its obstacle list
 * and area state, the touched tiles' layers rebuilt (tilecache.cpp) on the
 * runner, and a copy of the previous mesh with those tiles replaced.
 */
#include "nav_internal.h"

using namespace pfnav;

namespace {

int cmp_obstacle(const void *a, const void *b) {
    return strcmp(((const pf_nav_obstacle *)a)->id, ((const pf_nav_obstacle *)b)->id);
}

const pf_nav_obstacle *find_obstacle(const pf_nav_obstacle *obs, uint32_t n, const char *id) {
    if (n == 0) return NULL;
    pf_nav_obstacle key;
    snprintf(key.id, sizeof key.id, "%s", id);
    return (const pf_nav_obstacle *)bsearch(&key, obs, n, sizeof *obs, cmp_obstacle);
}

/* Apply: rebuild tasks. */
struct ApplyJob {
    NavBase *b;
    const pf_navmesh *next; /* obstacles and area state of the new version */
    const dtCompressedTileRef *refs;
    unsigned char **data;
    int *size;
    int *npolys;
    dtStatus *st;
    uint64_t deadline_us;
    int aborted;
};

void apply_task(void *arg, uint32_t i) {
    ApplyJob *j = (ApplyJob *)arg;
    if (__atomic_load_n(&j->aborted, __ATOMIC_RELAXED) || now_us() > j->deadline_us) {
        __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
        j->st[i] = DT_FAILURE | DT_IN_PROGRESS; /* stands for "timed out" */
        return;
    }
    const dtCompressedTile *ct = j->b->tc->getTileByRef(j->refs[i]);
    j->st[i] = tile_from_layer(j->b, ct, j->next->obs, j->next->nobs, j->next->area_enabled,
                               &j->data[i], &j->size[i], &j->npolys[i]);
    if (dtStatusFailed(j->st[i])) __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
}

pf_status check_obstacle(const pf_nav_obstacle *o, size_t i, pf_nav_error *err) {
    char field[64];
    snprintf(field, sizeof field, "obstacles[%zu].id", i);
    if (!valid_name(o->id)) {
        set_err(err, field, "an obstacle id is 1..63 characters of [A-Za-z0-9_.-]");
        return PF_EINVAL;
    }
    if (o->shape == PF_NAV_CYLINDER) {
        snprintf(field, sizeof field, "obstacles[%zu].pos", i);
        if (!finite3(o->pos) || fabsf(o->pos[0]) > 1e7f || fabsf(o->pos[1]) > 1e7f ||
            fabsf(o->pos[2]) > 1e7f) {
            set_err(err, field, "a cylinder's position is 3 finite numbers within +-1e7");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "obstacles[%zu].radius", i);
        if (!(isfinite(o->radius) && o->radius > 0 && o->radius <= 1e5f)) {
            set_err(err, field, "a cylinder's radius is a number in (0, 1e5]");
            return PF_EINVAL;
        }
        snprintf(field, sizeof field, "obstacles[%zu].height", i);
        if (!(isfinite(o->height) && o->height > 0 && o->height <= 1e5f)) {
            set_err(err, field, "a cylinder's height is a number in (0, 1e5]");
            return PF_EINVAL;
        }
        return PF_OK;
    }
    if (o->shape == PF_NAV_BOX) {
        snprintf(field, sizeof field, "obstacles[%zu].box", i);
        pf_nav_box bx;
        memcpy(bx.bmin, o->bmin, sizeof bx.bmin);
        memcpy(bx.bmax, o->bmax, sizeof bx.bmax);
        return check_box(&bx, err, field);
    }
    snprintf(field, sizeof field, "obstacles[%zu]", i);
    set_err(err, field, "an obstacle is a cylinder or a box");
    return PF_EINVAL;
}

/* The change's obstacles: each valid, put once, removed once and only when
 * on the map, never both. */
pf_status check_obstacles(const pf_navmesh *prev, const pf_nav_change *ch, pf_nav_error *err) {
    for (size_t i = 0; i < ch->nput; i++) {
        pf_status st = check_obstacle(&ch->put[i], i, err);
        if (st) return st;
        for (size_t k = 0; k < i; k++)
            if (strcmp(ch->put[k].id, ch->put[i].id) == 0) {
                char field[64];
                snprintf(field, sizeof field, "obstacles[%zu].id", i);
                set_err(err, field, "obstacle '%s' appears twice in one change", ch->put[i].id);
                return PF_EINVAL;
            }
    }
    for (size_t i = 0; i < ch->nremove; i++) {
        char field[64];
        snprintf(field, sizeof field, "remove[%zu]", i);
        const char *id = ch->remove[i];
        if (!valid_name(id) || !find_obstacle(prev->obs, prev->nobs, id)) {
            set_err(err, field, "no obstacle '%.63s' on this map", id ? id : "");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(ch->remove[k], id) == 0) {
                set_err(err, field, "obstacle '%s' is removed twice", id);
                return PF_EINVAL;
            }
        for (size_t k = 0; k < ch->nput; k++)
            if (strcmp(ch->put[k].id, id) == 0) {
                set_err(err, field, "obstacle '%s' is both put and removed", id);
                return PF_EINVAL;
            }
    }
    return PF_OK;
}

/* The change's areas: each a named area of the map, once, with a valid
 * cost; area_index[i] = its index in the build's areas. */
pf_status check_area_changes(const NavBase *b, const pf_nav_change *ch, int *area_index,
                             pf_nav_error *err) {
    for (size_t i = 0; i < ch->nareas; i++) {
        char field[64];
        const pf_nav_area_change *ac = &ch->areas[i];
        snprintf(field, sizeof field, "areas[%zu].id", i);
        int found = -1;
        for (uint32_t a = 0; a < b->nnamed; a++)
            if (ac->name && strcmp(b->areas[a].name, ac->name) == 0) found = (int)a;
        if (found < 0) {
            set_err(err, field, "no area '%.63s' on this map", ac->name ? ac->name : "");
            return PF_EINVAL;
        }
        for (size_t k = 0; k < i; k++)
            if (area_index[k] == found) {
                set_err(err, field, "area '%s' appears twice in one change", ac->name);
                return PF_EINVAL;
            }
        area_index[i] = found;
        if (ac->set_cost && !(isfinite(ac->cost) && ac->cost >= 0.01f && ac->cost <= 1000.0f)) {
            snprintf(field, sizeof field, "areas[%zu].cost", i);
            set_err(err, field, "an area's cost is a number in [0.01, 1000]");
            return PF_EINVAL;
        }
        if (i + 1 >= PF_NAV_MAX_AREAS && i + 1 < ch->nareas) {
            set_err(err, "areas", "more than %u area changes", PF_NAV_MAX_AREAS);
            return PF_EINVAL;
        }
    }
    return PF_OK;
}

/* How many obstacles the next version has: prev minus removed, plus put
 * ones that are new. */
size_t count_obstacles(const pf_navmesh *prev, const pf_nav_change *ch) {
    size_t nnew = 0;
    for (uint32_t i = 0; i < prev->nobs; i++) {
        bool gone = false;
        for (size_t k = 0; k < ch->nremove && !gone; k++)
            gone = strcmp(prev->obs[i].id, ch->remove[k]) == 0;
        if (!gone) nnew++;
    }
    for (size_t i = 0; i < ch->nput; i++)
        if (!find_obstacle(prev->obs, prev->nobs, ch->put[i].id)) nnew++;
    return nnew;
}

/* nm's obstacles: prev minus removed and moved, plus put, sorted; the tiles
 * each removed, moved or put one touches marked. nm->obs holds room. */
void next_obstacles(const NavBase *b, const pf_navmesh *prev, const pf_nav_change *ch,
                    pf_navmesh *nm, unsigned char *touched) {
    for (uint32_t i = 0; i < prev->nobs; i++) {
        const pf_nav_obstacle *o = &prev->obs[i];
        bool gone = false, moved = false;
        for (size_t k = 0; k < ch->nremove && !gone; k++) gone = strcmp(o->id, ch->remove[k]) == 0;
        for (size_t k = 0; k < ch->nput && !moved; k++) moved = strcmp(o->id, ch->put[k].id) == 0;
        if (gone || moved) {
            float omin[3], omax[3];
            obstacle_bounds(b, o, omin, omax);
            mark_tiles(b, omin, omax, touched);
        }
        if (!gone && !moved) nm->obs[nm->nobs++] = *o;
    }
    for (size_t i = 0; i < ch->nput; i++) {
        pf_nav_obstacle o = ch->put[i];
        o.id[PF_NAV_NAME_MAX - 1] = '\0';
        float omin[3], omax[3];
        obstacle_bounds(b, &o, omin, omax);
        mark_tiles(b, omin, omax, touched);
        nm->obs[nm->nobs++] = o;
    }
    qsort(nm->obs, nm->nobs, sizeof *nm->obs, cmp_obstacle);
}

/* nm's area costs and states: prev's with the change; an area turned on or
 * off marks its tiles (flags are baked into the tiles). */
void next_areas(const NavBase *b, const pf_navmesh *prev, const pf_nav_change *ch,
                const int *area_index, pf_navmesh *nm, unsigned char *touched) {
    memcpy(nm->area_cost, prev->area_cost, sizeof nm->area_cost);
    memcpy(nm->area_enabled, prev->area_enabled, sizeof nm->area_enabled);
    for (size_t i = 0; i < ch->nareas; i++) {
        const pf_nav_area_change *ac = &ch->areas[i];
        const AreaDef *ad = &b->areas[area_index[i]];
        if (ac->set_cost) nm->area_cost[ad->id] = ac->cost;
        if (ac->set_enabled && ac->enabled != prev->area_enabled[ad->id]) {
            nm->area_enabled[ad->id] = ac->enabled;
            for (size_t k = 0; k < ad->nboxes; k++)
                mark_tiles(b, ad->boxes[k].bmin, ad->boxes[k].bmax, touched);
        }
    }
    version_set_filter(nm);
}

/* The compressed layers of the touched tiles; NULL on ENOMEM. */
dtCompressedTileRef *touched_layers(const NavBase *b, const unsigned char *touched,
                                    uint32_t *nrefs) {
    uint32_t cap = 0;
    *nrefs = 0;
    for (int i = 0; i < b->tw * b->th; i++) cap += touched[i] ? MAX_LAYERS : 0;
    dtCompressedTileRef *refs = (dtCompressedTileRef *)malloc((cap ? cap : 1) * sizeof *refs);
    if (!refs) return NULL;
    for (int tz = 0; tz < b->th; tz++)
        for (int tx = 0; tx < b->tw; tx++)
            if (touched[tx + tz * b->tw])
                *nrefs += (uint32_t)b->tc->getTilesAt(tx, tz, refs + *nrefs, MAX_LAYERS);
    return refs;
}

/* The rebuild tasks' outcome: the first failure named, or a tile with more
 * polygons than the mesh's references allow. */
pf_status rebuild_outcome(const ApplyJob *job, uint32_t nrefs, const pf_nav_limits *lim,
                          pf_nav_error *err) {
    const NavBase *b = job->b;
    for (uint32_t i = 0; i < nrefs; i++) {
        const dtStatus ts = job->st[i];
        if (!dtStatusFailed(ts)) {
            if ((uint32_t)job->npolys[i] > b->max_tile_polys) {
                set_err(err, "obstacles",
                        "the change leaves a tile with %d polygons, more than the %u a tile of "
                        "this mesh may hold",
                        job->npolys[i], b->max_tile_polys);
                return PF_ELIMIT;
            }
            continue;
        }
        if (dtStatusDetail(ts, DT_IN_PROGRESS)) {
            set_err(err, "limits.build_ms", "rebuilding %u tiles took longer than %u ms", nrefs,
                    lim->build_ms);
            return PF_ELIMIT;
        }
        if (dtStatusDetail(ts, DT_BUFFER_TOO_SMALL)) {
            set_err(err, "obstacles",
                    "the change makes a tile too intricate for Detour's tile builder (more than "
                    "255 regions or a polygon hole too large)");
            return PF_ELIMIT;
        }
        set_err(err, "", "out of memory");
        return PF_ENOMEM;
    }
    return PF_OK;
}

/* nm's mesh: a copy of prev's with the rebuilt layers' tiles replaced (the
 * new data taken). False on ENOMEM. */
bool replace_tiles(const NavBase *b, const pf_navmesh *prev, pf_navmesh *nm, const ApplyJob *job,
                   uint32_t nrefs) {
    nm->nav = clone_nav(prev->nav);
    if (!nm->nav) return false;
    for (uint32_t i = 0; i < nrefs; i++) {
        const dtCompressedTile *ct = b->tc->getTileByRef(job->refs[i]);
        dtTileRef old = nm->nav->getTileRefAt(ct->header->tx, ct->header->ty, ct->header->tlayer);
        if (old && dtStatusFailed(nm->nav->removeTile(old, NULL, NULL))) return false;
    }
    for (uint32_t i = 0; i < nrefs; i++) {
        if (!job->data[i]) continue;
        if (dtStatusFailed(nm->nav->addTile(job->data[i], job->size[i], DT_TILE_FREE_DATA, 0, 0)))
            return false;
        job->data[i] = NULL;
    }
    repair_links(nm->nav);
    return true;
}

} /* namespace */

extern "C" {

pf_status pf_nav_apply(const pf_navmesh *prev, const pf_nav_change *ch, const pf_nav_limits *lim_in,
                       const pf_nav_runner *run, pf_navmesh **out, pf_nav_error *err) {
    *out = NULL;
    if (err) err->field[0] = err->message[0] = '\0';
    const uint64_t t0 = now_us();
    pf_nav_limits lim = lim_in ? *lim_in : pf_nav_default_limits();
    NavBase *b = prev->base;

    /* Validate everything first: an error changes nothing. */
    pf_status st = check_obstacles(prev, ch, err);
    if (st) return st;
    int area_index[PF_NAV_MAX_AREAS];
    st = check_area_changes(b, ch, area_index, err);
    if (st) return st;
    size_t nnew = count_obstacles(prev, ch);
    if (nnew > lim.max_obstacles) {
        set_err(err, "limits.max_obstacles", "%zu obstacles, more than %u", nnew,
                lim.max_obstacles);
        return PF_ELIMIT;
    }

    pf_navmesh *nm = version_alloc(b);
    unsigned char *touched = NULL;
    dtCompressedTileRef *refs = NULL;
    unsigned char **data = NULL;
    int *size = NULL, *npolys = NULL;
    dtStatus *tst = NULL;
    uint32_t nrefs = 0;
    ApplyJob job;
    if (!nm) goto out_nomem;
    nm->obs = (pf_nav_obstacle *)malloc((nnew ? nnew : 1) * sizeof(pf_nav_obstacle));
    touched = (unsigned char *)calloc((size_t)b->tw * (size_t)b->th, 1);
    if (!nm->obs || !touched) goto out_nomem;
    next_obstacles(b, prev, ch, nm, touched);
    next_areas(b, prev, ch, area_index, nm, touched);
    refs = touched_layers(b, touched, &nrefs);
    if (!refs) goto out_nomem;
    data = (unsigned char **)calloc(nrefs ? nrefs : 1, sizeof *data);
    size = (int *)calloc(nrefs ? nrefs : 1, sizeof *size);
    npolys = (int *)calloc(nrefs ? nrefs : 1, sizeof *npolys);
    tst = (dtStatus *)calloc(nrefs ? nrefs : 1, sizeof *tst);
    if (!data || !size || !npolys || !tst) goto out_nomem;
    job.b = b;
    job.next = nm;
    job.refs = refs;
    job.data = data;
    job.size = size;
    job.npolys = npolys;
    job.st = tst;
    job.deadline_us = t0 + (uint64_t)lim.build_ms * 1000u;
    job.aborted = 0;
    run_tasks(run, nrefs, apply_task, &job);
    st = rebuild_outcome(&job, nrefs, &lim, err);
    if (st) goto out_free;
    if (!replace_tiles(b, prev, nm, &job, nrefs)) goto out_nomem;
    nm->generation = prev->generation + 1;
    nm->rebuilt = nrefs;
    version_count(nm);
    nm->build_us = now_us() - t0;
    *out = nm;
    nm = NULL;
    st = PF_OK;
    goto out_free;

out_nomem:
    st = PF_ENOMEM;
    set_err(err, "", "out of memory");
out_free:
    if (data)
        for (uint32_t i = 0; i < nrefs; i++) dtFree(data[i]);
    free(tst);
    free(npolys);
    free(size);
    free(data);
    free(refs);
    free(touched);
    version_free(nm);
    return st;
}

} /* extern "C" */
