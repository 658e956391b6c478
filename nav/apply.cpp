/* apply.cpp -- pf_nav_apply: a change (obstacles put or removed, areas'
 * cost and state, links put, removed or turned on and off) checked whole,
 * then the next version: its obstacle, area and link state, the touched
 * tiles rebuilt for every agent type from their kept voxels (tilemesh.cpp)
 * on the runner, and a copy of each type's previous mesh with those tiles
 * replaced.
 *
 * Every check is O(n log n) in the change and the version's lists (ids are
 * sorted and searched, never compared pairwise), so a change of 65,536
 * obstacles is refused or applied in milliseconds, and a count past its
 * limit is refused before anything else is looked at.
 */
#include "nav_internal.h"

using namespace pfnav;

namespace {

int cmp_obstacle(const void *a, const void *b) {
    return strcmp(((const pf_nav_obstacle *)a)->id, ((const pf_nav_obstacle *)b)->id);
}

int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const pf_nav_obstacle *find_obstacle(const pf_nav_obstacle *obs, uint32_t n, const char *id) {
    if (n == 0) return NULL;
    pf_nav_obstacle key = {};
    snprintf(key.id, sizeof key.id, "%s", id);
    return (const pf_nav_obstacle *)bsearch(&key, obs, n, sizeof *obs, cmp_obstacle);
}

const pf_nav_link *find_link(const pf_nav_link *links, uint32_t n, const char *id) {
    if (n == 0) return NULL;
    pf_nav_link key = {};
    snprintf(key.id, sizeof key.id, "%s", id);
    return (const pf_nav_link *)bsearch(&key, links, n, sizeof *links, cmp_link);
}

/* Sorted ids, searched with has(). */
struct IdSet {
    const char **v = nullptr;
    size_t n = 0;
    ~IdSet() { free(v); }
    bool init(const char *const *ids, size_t count) {
        v = (const char **)malloc((count ? count : 1) * sizeof(char *));
        if (!v) return false;
        if (count) memcpy(v, ids, count * sizeof(char *));
        n = count;
        qsort(v, n, sizeof(char *), cmp_str);
        return true;
    }
    bool has(const char *id) const {
        return n && bsearch(&id, v, n, sizeof(char *), cmp_str) != NULL;
    }
};

/* Everything the check and the new lists need, sorted once. */
struct ChangeSets {
    IdSet put, remove, put_links, remove_links;
};

pf_status no_memory(pf_nav_error *err) {
    set_err(err, "", "out of memory");
    return PF_ENOMEM;
}

/* Sorted id sets of the change's four lists. */
pf_status change_sets(const pf_nav_change *ch, ChangeSets *cs, pf_nav_error *err) {
    const char **ids = (const char **)malloc((ch->nput + ch->nput_links + 1) * sizeof(char *));
    if (!ids) return no_memory(err);
    for (size_t i = 0; i < ch->nput; i++) ids[i] = ch->put[i].id;
    for (size_t i = 0; i < ch->nput_links; i++) ids[ch->nput + i] = ch->put_links[i].id;
    bool ok = cs->put.init(ids, ch->nput) && cs->put_links.init(ids + ch->nput, ch->nput_links) &&
              cs->remove.init(ch->remove, ch->nremove) &&
              cs->remove_links.init(ch->remove_links, ch->nremove_links);
    free(ids);
    return ok ? PF_OK : no_memory(err);
}

/* A duplicate among ids: "<prefix>[second]" names it. */
pf_status no_duplicates(const char *const *ids, size_t n, const char *prefix, const char *what,
                        pf_nav_error *err) {
    size_t a = 0, d = 0;
    bool oom = false;
    if (find_duplicate(ids, n, &a, &d, &oom)) {
        char field[64];
        snprintf(field, sizeof field, "%s[%zu]%s", prefix, d,
                 strcmp(prefix, "obstacles") == 0 || strcmp(prefix, "links") == 0 ? ".id" : "");
        set_err(err, field, "%s '%.63s' appears twice in one change (first at %s[%zu])", what,
                ids[d], prefix, a);
        return PF_EINVAL;
    }
    return oom ? no_memory(err) : PF_OK;
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
pf_status check_obstacles(const pf_navmesh *prev, const pf_nav_change *ch, const ChangeSets *cs,
                          pf_nav_error *err) {
    for (size_t i = 0; i < ch->nput; i++) {
        pf_status st = check_obstacle(&ch->put[i], i, err);
        if (st) return st;
    }
    const char **ids = (const char **)malloc((ch->nput + 1) * sizeof(char *));
    if (!ids) return no_memory(err);
    for (size_t i = 0; i < ch->nput; i++) ids[i] = ch->put[i].id;
    pf_status st = no_duplicates(ids, ch->nput, "obstacles", "obstacle", err);
    free(ids);
    if (st) return st;
    for (size_t i = 0; i < ch->nremove; i++) {
        char field[64];
        snprintf(field, sizeof field, "remove[%zu]", i);
        const char *id = ch->remove[i];
        if (!valid_name(id) || !find_obstacle(prev->obs, prev->nobs, id)) {
            set_err(err, field, "no obstacle '%.63s' on this map", id ? id : "");
            return PF_EINVAL;
        }
        if (cs->put.has(id)) {
            set_err(err, field, "obstacle '%s' is both put and removed", id);
            return PF_EINVAL;
        }
    }
    return no_duplicates(ch->remove, ch->nremove, "remove", "removed obstacle", err);
}

/* The change's links: put ones valid and once, removed and switched ones
 * on the map (or put), never put and removed. */
pf_status check_link_changes(const pf_navmesh *prev, const pf_nav_change *ch, const ChangeSets *cs,
                             pf_nav_error *err) {
    pf_status st = check_links(prev->base, ch->put_links, ch->nput_links, "links", err);
    if (st) return st;
    const char **ids =
        (const char **)malloc((ch->nput_links + ch->nlink_states + 1) * sizeof(char *));
    if (!ids) return no_memory(err);
    for (size_t i = 0; i < ch->nput_links; i++) ids[i] = ch->put_links[i].id;
    st = no_duplicates(ids, ch->nput_links, "links", "link", err);
    for (size_t i = 0; !st && i < ch->nlink_states; i++) ids[i] = ch->link_states[i].id;
    if (!st) st = no_duplicates(ids, ch->nlink_states, "link_states", "link", err);
    free(ids);
    if (!st) st = no_duplicates(ch->remove_links, ch->nremove_links, "remove_links", "link", err);
    for (size_t i = 0; !st && i < ch->nremove_links; i++) {
        char field[64];
        const char *id = ch->remove_links[i];
        snprintf(field, sizeof field, "remove_links[%zu]", i);
        if (!id || !find_link(prev->links, prev->nlinks, id)) {
            set_err(err, field, "no link '%.63s' on this map", id ? id : "");
            return PF_EINVAL;
        }
        if (cs->put_links.has(id)) {
            set_err(err, field, "link '%s' is both put and removed", id);
            return PF_EINVAL;
        }
    }
    for (size_t i = 0; !st && i < ch->nlink_states; i++) {
        char field[64];
        const char *id = ch->link_states[i].id;
        snprintf(field, sizeof field, "link_states[%zu]", i);
        if (!id || cs->remove_links.has(id) ||
            (!find_link(prev->links, prev->nlinks, id) && !cs->put_links.has(id))) {
            set_err(err, field, "no link '%.63s' on this map", id ? id : "");
            return PF_EINVAL;
        }
    }
    return st;
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

/* The change checked whole, counts first. */
pf_status check_change(const pf_navmesh *prev, const pf_nav_change *ch, const pf_nav_limits *lim,
                       ChangeSets *cs, int *area_index, pf_nav_error *err) {
    if (ch->nput > lim->max_obstacles) {
        set_err(err, "limits.max_obstacles", "the change puts %zu obstacles, more than %u",
                ch->nput, lim->max_obstacles);
        return PF_ELIMIT;
    }
    if (ch->nput_links > lim->max_links) {
        set_err(err, "limits.max_links", "the change puts %zu links, more than %u", ch->nput_links,
                lim->max_links);
        return PF_ELIMIT;
    }
    pf_status st = change_sets(ch, cs, err);
    if (!st) st = check_obstacles(prev, ch, cs, err);
    if (!st) st = check_area_changes(prev->base, ch, area_index, err);
    if (!st) st = check_link_changes(prev, ch, cs, err);
    if (st) return st;
    size_t nobs = prev->nobs - ch->nremove, nlinks = prev->nlinks - ch->nremove_links;
    for (size_t i = 0; i < ch->nput; i++)
        nobs += !find_obstacle(prev->obs, prev->nobs, ch->put[i].id);
    for (size_t i = 0; i < ch->nput_links; i++)
        nlinks += !find_link(prev->links, prev->nlinks, ch->put_links[i].id);
    if (nobs > lim->max_obstacles) {
        set_err(err, "limits.max_obstacles", "%zu obstacles, more than %u", nobs,
                lim->max_obstacles);
        return PF_ELIMIT;
    }
    if (nlinks > lim->max_links) {
        set_err(err, "limits.max_links", "%zu links, more than %u", nlinks, lim->max_links);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* The largest agent radius: an obstacle touches the tiles it touches for
 * the widest type. */
const AgentType *widest(const NavBase *b) {
    const AgentType *w = &b->agents[0];
    for (uint32_t t = 1; t < b->nagents; t++)
        if (b->agents[t].radius > w->radius) w = &b->agents[t];
    return w;
}

void touch_obstacle(const NavBase *b, const pf_nav_obstacle *o, unsigned char *touched) {
    float omin[3], omax[3];
    obstacle_bounds(b, widest(b), o, omin, omax);
    mark_tiles(b, omin, omax, touched);
}

/* nm's obstacles: prev minus removed and moved, plus put, sorted; the tiles
 * each removed, moved or put one touches marked. */
pf_status next_obstacles(const NavBase *b, const pf_navmesh *prev, const pf_nav_change *ch,
                         const ChangeSets *cs, pf_navmesh *nm, unsigned char *touched) {
    nm->obs = (pf_nav_obstacle *)malloc((prev->nobs + ch->nput + 1) * sizeof(pf_nav_obstacle));
    if (!nm->obs) return PF_ENOMEM;
    for (uint32_t i = 0; i < prev->nobs; i++) {
        const pf_nav_obstacle *o = &prev->obs[i];
        if (cs->remove.has(o->id) || cs->put.has(o->id))
            touch_obstacle(b, o, touched);
        else
            nm->obs[nm->nobs++] = *o;
    }
    for (size_t i = 0; i < ch->nput; i++) {
        pf_nav_obstacle o = ch->put[i];
        o.id[PF_NAV_NAME_MAX - 1] = '\0';
        touch_obstacle(b, &o, touched);
        nm->obs[nm->nobs++] = o;
    }
    qsort(nm->obs, nm->nobs, sizeof *nm->obs, cmp_obstacle);
    return PF_OK;
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
            /* Its links' flags too. */
            for (uint32_t l = 0; l < prev->nlinks; l++) {
                const unsigned char a = prev->link_area[l];
                bool in = a == ad->id;
                for (uint32_t k = 0; k < prev->nlclass && !in; k++)
                    in = prev->lclass[k].id == a && prev->lclass[k].base == ad->id;
                const int lt = in ? link_tile(b, &prev->links[l]) : -1;
                if (lt >= 0) touched[lt] = 1;
            }
        }
    }
}

void touch_link(const NavBase *b, const pf_nav_link *l, unsigned char *touched) {
    const int t = link_tile(b, l);
    if (t >= 0) touched[t] = 1;
}

/* nm's links: prev minus removed and replaced, plus put, states set,
 * sorted, their classes; the tiles of every link that changed marked. */
pf_status next_links(const NavBase *b, const pf_navmesh *prev, const pf_nav_change *ch,
                     const ChangeSets *cs, pf_navmesh *nm, unsigned char *touched,
                     pf_nav_error *err) {
    nm->links = (pf_nav_link *)malloc((prev->nlinks + ch->nput_links + 1) * sizeof(pf_nav_link));
    if (!nm->links) return no_memory(err);
    for (uint32_t i = 0; i < prev->nlinks; i++) {
        const pf_nav_link *l = &prev->links[i];
        if (cs->remove_links.has(l->id) || cs->put_links.has(l->id))
            touch_link(b, l, touched);
        else
            nm->links[nm->nlinks++] = *l;
    }
    for (size_t i = 0; i < ch->nput_links; i++) {
        nm->links[nm->nlinks] = ch->put_links[i];
        nm->links[nm->nlinks].id[PF_NAV_NAME_MAX - 1] = '\0';
        if (!(nm->links[nm->nlinks].radius > 0)) nm->links[nm->nlinks].radius = b->agents[0].radius;
        touch_link(b, &nm->links[nm->nlinks++], touched);
    }
    qsort(nm->links, nm->nlinks, sizeof *nm->links, cmp_link);
    for (size_t i = 0; i < ch->nlink_states; i++) {
        pf_nav_link *l = (pf_nav_link *)find_link(nm->links, nm->nlinks, ch->link_states[i].id);
        if (!l || l->enabled == ch->link_states[i].enabled) continue;
        l->enabled = ch->link_states[i].enabled;
        touch_link(b, l, touched);
    }
    pf_status st = link_classes(b, nm->links, nm->nlinks, prev->lclass, prev->nlclass, &nm->lclass,
                                &nm->nlclass, &nm->link_area, err);
    if (st) return st;
    /* A link whose area id changed (its class was renumbered) is rebuilt. */
    for (uint32_t i = 0; i < nm->nlinks; i++) {
        const pf_nav_link *o = find_link(prev->links, prev->nlinks, nm->links[i].id);
        if (o && prev->link_area[o - prev->links] != nm->link_area[i]) touch_link(b, o, touched);
        nm->nlinks_on += nm->links[i].enabled;
    }
    return PF_OK;
}

/* Apply: rebuild tasks, one per touched tile and agent type. */
struct ApplyJob {
    NavBase *b;
    TileState vs;          /* the new version's */
    const uint32_t *tiles; /* touched tile indices */
    unsigned char **data;  /* [ntiles * nagents] */
    int *size, *npolys;
    dtStatus *st;
    char (*why)[120];
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
    const NavBase *b = j->b;
    const uint32_t ti = j->tiles[i / b->nagents], t = i % b->nagents;
    const AgentType *at = &b->agents[t];
    j->st[i] = DT_SUCCESS;
    if (!at->kept[ti].data) return; /* nothing walkable there */
    rcCompactHeightfield *chf = kept_load(&at->kept[ti]);
    if (!chf) {
        j->st[i] = DT_FAILURE | DT_OUT_OF_MEMORY;
    } else {
        j->st[i] =
            tile_mesh(b, at, (int)(ti % (uint32_t)b->tw), (int)(ti / (uint32_t)b->tw), *chf, &j->vs,
                      &j->data[i], &j->size[i], &j->npolys[i], j->why[i], sizeof j->why[i]);
        rcFreeCompactHeightfield(chf);
    }
    if (dtStatusFailed(j->st[i])) __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
}

/* The rebuild tasks' outcome: the first failure named, or a tile with more
 * polygons than the mesh's references allow. */
pf_status rebuild_outcome(const ApplyJob *job, uint32_t n, const pf_nav_limits *lim,
                          pf_nav_error *err) {
    const NavBase *b = job->b;
    for (uint32_t i = 0; i < n; i++) {
        const dtStatus ts = job->st[i];
        const AgentType *at = &b->agents[i % b->nagents];
        if (!dtStatusFailed(ts)) {
            if ((uint32_t)job->npolys[i] > at->max_tile_polys) {
                set_err(err, "obstacles",
                        "the change leaves a tile with %d polygons, more than the %u a tile of "
                        "this mesh may hold",
                        job->npolys[i], at->max_tile_polys);
                return PF_ELIMIT;
            }
            continue;
        }
        if (dtStatusDetail(ts, DT_IN_PROGRESS)) {
            set_err(err, "limits.build_ms", "rebuilding %u tiles took longer than %u ms",
                    n / b->nagents, lim->build_ms);
            return PF_ELIMIT;
        }
        if (dtStatusDetail(ts, DT_OUT_OF_MEMORY)) return no_memory(err);
        set_err(err, "obstacles", "the change makes a tile Recast cannot build: %s", job->why[i]);
        return PF_ELIMIT;
    }
    return PF_OK;
}

/* Each type's mesh of nm: a copy of prev's with the rebuilt tiles replaced
 * (the new data taken). False on ENOMEM. */
bool replace_tiles(const NavBase *b, const pf_navmesh *prev, pf_navmesh *nm, const ApplyJob *job,
                   uint32_t ntouched) {
    for (uint32_t t = 0; t < b->nagents; t++) {
        pf_navmesh *v = nm->types[t];
        v->nav = clone_nav(prev->types[t]->nav);
        if (!v->nav) return false;
        for (uint32_t k = 0; k < ntouched; k++) {
            const int tx = (int)(job->tiles[k] % (uint32_t)b->tw),
                      ty = (int)(job->tiles[k] / (uint32_t)b->tw);
            dtTileRef old = v->nav->getTileRefAt(tx, ty, 0);
            if (old && dtStatusFailed(v->nav->removeTile(old, NULL, NULL))) return false;
        }
        for (uint32_t k = 0; k < ntouched; k++) {
            const uint32_t i = k * b->nagents + t;
            if (!job->data[i]) continue;
            if (dtStatusFailed(
                    v->nav->addTile(job->data[i], job->size[i], DT_TILE_FREE_DATA, 0, 0)))
                return false;
            job->data[i] = NULL;
        }
        repair_links(v->nav);
    }
    return true;
}

/* What a change allocates on its way. */
struct ApplyParts {
    unsigned char *touched = nullptr;
    uint32_t *tiles = nullptr;
    unsigned char **data = nullptr;
    int *size = nullptr, *npolys = nullptr;
    dtStatus *st = nullptr;
    char (*why)[120] = nullptr;
    uint32_t n = 0;
    ~ApplyParts() {
        for (uint32_t i = 0; data && i < n; i++) dtFree(data[i]);
        free(touched);
        free(tiles);
        free(data);
        free(size);
        free(npolys);
        free(st);
        free(why);
    }
    bool alloc(uint32_t count) {
        n = count;
        const size_t c = count ? count : 1;
        data = (unsigned char **)calloc(c, sizeof *data);
        size = (int *)calloc(c, sizeof *size);
        npolys = (int *)calloc(c, sizeof *npolys);
        st = (dtStatus *)calloc(c, sizeof *st);
        why = (char(*)[120])calloc(c, sizeof *why);
        return data && size && npolys && st && why;
    }
};

/* The touched tiles rebuilt for every type on the runner. */
pf_status rebuild(NavBase *b, pf_navmesh *nm, ApplyParts *p, ApplyJob *job, uint32_t ntouched,
                  const pf_nav_limits *lim, const pf_nav_runner *run, uint64_t t0,
                  pf_nav_error *err) {
    if (!p->alloc(ntouched * b->nagents)) return no_memory(err);
    memset(job, 0, sizeof *job);
    job->b = b;
    job->vs = version_tile_state(nm);
    job->tiles = p->tiles;
    job->data = p->data;
    job->size = p->size;
    job->npolys = p->npolys;
    job->st = p->st;
    job->why = p->why;
    job->deadline_us = t0 + (uint64_t)lim->build_ms * 1000u;
    run_tasks(run, p->n, apply_task, job);
    return rebuild_outcome(job, p->n, lim, err);
}

} /* namespace */

extern "C" {

pf_status pf_nav_apply(const pf_navmesh *prev_view, const pf_nav_change *ch,
                       const pf_nav_limits *lim_in, const pf_nav_runner *run, pf_navmesh **out,
                       pf_nav_error *err) {
    *out = NULL;
    if (err) err->field[0] = err->message[0] = '\0';
    const uint64_t t0 = now_us();
    pf_nav_limits lim = lim_in ? *lim_in : pf_nav_default_limits();
    const pf_navmesh *prev = prev_view->root;
    NavBase *b = prev->base;
    ChangeSets cs;
    int area_index[PF_NAV_MAX_AREAS];

    /* Check everything first: an error changes nothing. */
    pf_status st = check_change(prev, ch, &lim, &cs, area_index, err);
    if (st) return st;

    ApplyParts p;
    ApplyJob job;
    uint32_t ntouched = 0;
    pf_navmesh *nm = version_alloc(b);
    if (!nm) return no_memory(err);
    p.touched = (unsigned char *)calloc((size_t)b->tw * (size_t)b->th, 1);
    if (!p.touched || next_obstacles(b, prev, ch, &cs, nm, p.touched)) goto out_nomem;
    st = next_links(b, prev, ch, &cs, nm, p.touched, err);
    if (st) goto out_free;
    next_areas(b, prev, ch, area_index, nm, p.touched);
    version_set_filter(nm);
    p.tiles = (uint32_t *)malloc(((size_t)b->tw * (size_t)b->th) * sizeof(uint32_t));
    if (!p.tiles) goto out_nomem;
    for (uint32_t i = 0; i < (uint32_t)(b->tw * b->th); i++)
        if (p.touched[i]) p.tiles[ntouched++] = i;
    st = rebuild(b, nm, &p, &job, ntouched, &lim, run, t0, err);
    if (st) goto out_free;
    if (!replace_tiles(b, prev, nm, &job, ntouched)) goto out_nomem;
    nm->generation = prev->generation + 1;
    nm->rebuilt = ntouched;
    if (!version_components(nm) || !version_views(nm)) goto out_nomem;
    version_count(nm);
    nm->build_us = now_us() - t0;
    *out = nm;
    return PF_OK;

out_nomem:
    st = no_memory(err);
out_free:
    version_free(nm);
    return st;
}

} /* extern "C" */
