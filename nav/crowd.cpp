/* crowd.cpp -- crowds (navmesh.h "Crowds"): DetourCrowd over the crowd's
 * own copy of a version's mesh, brought up to the map's latest version
 * before each step.
 */
#include "nav_internal.h"

using namespace pfnav;

extern "C" {

pf_nav_agent_params pf_nav_default_agent(const pf_navmesh *nm) {
    pf_nav_agent_params p;
    p.radius = nm->at->radius;
    p.height = nm->at->height;
    p.max_speed = 3.5f;
    p.max_accel = 8.0f;
    p.separation = 2.0f;
    return p;
}

static void crowd_set_filter(pf_nav_crowd *c) {
    dtQueryFilter *f = c->crowd->getEditableFilter(0);
    f->setIncludeFlags(FLAG_WALK);
    f->setExcludeFlags(0);
    for (int i = 0; i < 64; i++) f->setAreaCost(i, c->ver->area_cost[i]);
}

pf_status pf_nav_crowd_create(const pf_navmesh *nm, uint32_t max_agents, pf_nav_crowd **out) {
    *out = NULL;
    if (max_agents < 1 || max_agents > 65535) return PF_ERANGE;
    if (!(nm->at->radius > 0)) return PF_EUNSUPPORTED;
    install_assert_hook();
    pf_nav_crowd *c = (pf_nav_crowd *)calloc(1, sizeof *c);
    if (!c) return PF_ENOMEM;
    c->max_agents = max_agents;
    c->target = (float *)calloc(max_agents, 3 * sizeof(float));
    c->has_target = (bool *)calloc(max_agents, sizeof(bool));
    c->nav = clone_nav(nm->nav);
    c->crowd = dtAllocCrowd();
    if (!c->target || !c->has_target || !c->nav || !c->crowd ||
        !c->crowd->init((int)max_agents, nm->at->radius, c->nav)) {
        pf_nav_crowd_destroy(c);
        return PF_ENOMEM;
    }
    pf_navmesh_retain(nm);
    c->ver = nm;
    crowd_set_filter(c);
    /* CrowdTool's "good" quality (45 samples): adaptive sampling, 7
     * divisions, 2 rings, depth 3. */
    dtObstacleAvoidanceParams ap;
    memcpy(&ap, c->crowd->getObstacleAvoidanceParams(0), sizeof ap);
    ap.velBias = 0.5f;
    ap.adaptiveDivs = 7;
    ap.adaptiveRings = 2;
    ap.adaptiveDepth = 3;
    c->crowd->setObstacleAvoidanceParams(0, &ap);
    *out = c;
    return PF_OK;
}

void pf_nav_crowd_destroy(pf_nav_crowd *c) {
    if (!c) return;
    dtFreeCrowd(c->crowd);
    dtFreeNavMesh(c->nav);
    pf_navmesh_release(c->ver);
    free(c->target);
    free(c->has_target);
    free(c);
}

static bool crowd_nearest(pf_nav_crowd *c, const float p[3], dtPolyRef *ref, float s[3]) {
    if (!finite3(p)) return false;
    const dtNavMeshQuery *nq = c->crowd->getNavMeshQuery();
    *ref = 0;
    dtStatus ds =
        nq->findNearestPoly(p, c->crowd->getQueryHalfExtents(), c->crowd->getFilter(0), ref, s);
    return dtStatusSucceed(ds) && *ref != 0;
}

static bool valid_agent(const pf_nav_crowd *c, const pf_nav_agent_params *p, float mesh_radius,
                        const char **which) {
#define CHECK(cond, name)                                                                          \
    if (!(cond)) {                                                                                 \
        if (which) *which = name;                                                                  \
        return false;                                                                              \
    }
    (void)c;
    CHECK(isfinite(p->radius) && p->radius > 0 && p->radius <= mesh_radius, "radius");
    CHECK(isfinite(p->height) && p->height > 0 && p->height <= 100, "height");
    CHECK(isfinite(p->max_speed) && p->max_speed > 0 && p->max_speed <= 1000, "max_speed");
    CHECK(isfinite(p->max_accel) && p->max_accel > 0 && p->max_accel <= 10000, "max_accel");
    CHECK(isfinite(p->separation) && p->separation >= 0 && p->separation <= 100, "separation");
#undef CHECK
    return true;
}

pf_status pf_nav_crowd_add(pf_nav_crowd *c, const float pos[3], const float *target,
                           const pf_nav_agent_params *p, int32_t *id, const char **which) {
    *id = -1;
    if (which) *which = NULL;
    if (!valid_agent(c, p, c->ver->at->radius, which)) return PF_EINVAL;
    if (c->count >= c->max_agents) return PF_ELIMIT;
    dtPolyRef ref, tref = 0;
    float s[3], ts[3];
    if (!crowd_nearest(c, pos, &ref, s)) {
        if (which) *which = "position";
        return finite3(pos) ? PF_EBLOCKED : PF_ERANGE;
    }
    if (target && !crowd_nearest(c, target, &tref, ts)) {
        if (which) *which = "target";
        return finite3(target) ? PF_EBLOCKED : PF_ERANGE;
    }
    dtCrowdAgentParams ap;
    memset(&ap, 0, sizeof ap);
    ap.radius = p->radius;
    ap.height = p->height;
    ap.maxSpeed = p->max_speed;
    ap.maxAcceleration = p->max_accel;
    /* DetourCrowd takes at most 32 agents from its proximity grid in the
     * query box and keeps the 6 nearest: CrowdTool's 12 radii miss the
     * nearest neighbours in a dense crowd (agents then walk through each
     * other); 8 radii keep them in. */
    ap.collisionQueryRange = p->radius * 8.0f;
    ap.pathOptimizationRange = p->radius * 30.0f;
    ap.separationWeight = p->separation;
    ap.updateFlags = DT_CROWD_ANTICIPATE_TURNS | DT_CROWD_OPTIMIZE_VIS | DT_CROWD_OPTIMIZE_TOPO |
                     DT_CROWD_OBSTACLE_AVOIDANCE | (p->separation > 0 ? DT_CROWD_SEPARATION : 0);
    ap.obstacleAvoidanceType = 0;
    ap.queryFilterType = 0;
    int idx = c->crowd->addAgent(s, &ap);
    if (idx < 0) return PF_ELIMIT;
    c->count++;
    c->has_target[idx] = false;
    if (target) {
        if (!c->crowd->requestMoveTarget(idx, tref, ts)) {
            c->crowd->removeAgent(idx);
            c->count--;
            return PF_ENOMEM;
        }
        dtVcopy(&c->target[3 * idx], target);
        c->has_target[idx] = true;
    }
    *id = idx;
    return PF_OK;
}

static bool is_agent(pf_nav_crowd *c, int32_t id) {
    return id >= 0 && (uint32_t)id < c->max_agents && c->crowd->getAgent(id)->active;
}

pf_status pf_nav_crowd_remove(pf_nav_crowd *c, int32_t id) {
    if (!is_agent(c, id)) return PF_ERANGE;
    c->crowd->removeAgent(id);
    c->has_target[id] = false;
    c->count--;
    return PF_OK;
}

pf_status pf_nav_crowd_set_target(pf_nav_crowd *c, int32_t id, const float *target) {
    if (!is_agent(c, id)) return PF_ERANGE;
    if (!target) {
        c->crowd->resetMoveTarget(id);
        c->has_target[id] = false;
        return PF_OK;
    }
    dtPolyRef ref;
    float s[3];
    if (!crowd_nearest(c, target, &ref, s)) return finite3(target) ? PF_EBLOCKED : PF_ERANGE;
    if (!c->crowd->requestMoveTarget(id, ref, s)) return PF_ENOMEM;
    dtVcopy(&c->target[3 * id], target);
    c->has_target[id] = true;
    return PF_OK;
}

pf_status pf_nav_crowd_sync(pf_nav_crowd *c, const pf_navmesh *latest) {
    if (!latest) return PF_OK;
    if (latest->base != c->ver->base) return PF_EINVAL;
    latest = latest->root->types[c->ver->type]; /* the crowd's agent type */
    if (latest == c->ver) return PF_OK;
    if (latest->generation > c->ver->generation) {
        if (dtStatusFailed(sync_nav(c->nav, latest->nav))) return PF_ENOMEM;
        pf_navmesh_retain(latest);
        pf_navmesh_release(c->ver);
        c->ver = latest;
        crowd_set_filter(c);
    }
    return PF_OK;
}

pf_status pf_nav_crowd_step(pf_nav_crowd *c, float dt, const pf_navmesh *latest) {
    if (!(isfinite(dt) && dt > 0 && dt <= 1)) return PF_ERANGE;
    pf_status st = pf_nav_crowd_sync(c, latest);
    if (st) return st;
    c->crowd->update(dt, NULL);
    c->time += dt;
    return PF_OK;
}

const char *pf_nav_agent_state_str(pf_nav_agent_state s) {
    switch (s) {
    case PF_NAV_AGENT_IDLE:
        return "idle";
    case PF_NAV_AGENT_MOVING:
        return "moving";
    case PF_NAV_AGENT_PLANNING:
        return "planning";
    case PF_NAV_AGENT_ARRIVED:
        return "arrived";
    case PF_NAV_AGENT_PARTIAL:
        return "partial";
    case PF_NAV_AGENT_FAILED:
        return "failed";
    case PF_NAV_AGENT_OFF_MESH:
        return "off_mesh";
    case PF_NAV_AGENT_ON_LINK:
        return "on_link";
    }
    return "unknown";
}

bool pf_nav_crowd_agent(const pf_nav_crowd *c, int32_t id, pf_nav_agent *out) {
    if (id < 0 || (uint32_t)id >= c->max_agents) return false;
    const dtCrowdAgent *ag = c->crowd->getAgent(id);
    if (!ag->active) return false;
    dtVcopy(out->pos, ag->npos);
    dtVcopy(out->vel, ag->vel);
    dtVcopy(out->target, &c->target[3 * id]);
    out->radius = ag->params.radius;
    out->has_target = c->has_target[id];
    if (ag->state == DT_CROWDAGENT_STATE_INVALID) {
        out->state = PF_NAV_AGENT_OFF_MESH;
        return true;
    }
    if (ag->state == DT_CROWDAGENT_STATE_OFFMESH) {
        out->state = PF_NAV_AGENT_ON_LINK;
        return true;
    }
    switch (ag->targetState) {
    case DT_CROWDAGENT_TARGET_NONE:
    case DT_CROWDAGENT_TARGET_VELOCITY:
        out->state = c->has_target[id] ? PF_NAV_AGENT_MOVING : PF_NAV_AGENT_IDLE;
        break;
    case DT_CROWDAGENT_TARGET_FAILED:
        out->state = PF_NAV_AGENT_FAILED;
        break;
    case DT_CROWDAGENT_TARGET_VALID: {
        if (ag->partial) {
            out->state = PF_NAV_AGENT_PARTIAL;
            break;
        }
        float d = dtVdist2D(ag->npos, ag->targetPos);
        out->state = d <= ag->params.radius ? PF_NAV_AGENT_ARRIVED : PF_NAV_AGENT_MOVING;
        break;
    }
    default:
        out->state = PF_NAV_AGENT_PLANNING;
        break;
    }
    return true;
}

uint32_t pf_nav_crowd_capacity(const pf_nav_crowd *c) { return c->max_agents; }
uint32_t pf_nav_crowd_count(const pf_nav_crowd *c) { return c->count; }
double pf_nav_crowd_time(const pf_nav_crowd *c) { return c->time; }
const pf_navmesh *pf_nav_crowd_version(const pf_nav_crowd *c) { return c->ver; }

} /* extern "C" */
