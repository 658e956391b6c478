/* status.c -- status phrases. */
#include "status.h"

const char *pf_status_str(pf_status st) {
    switch (st) {
    case PF_OK:
        return "ok";
    case PF_NO_PATH:
        return "no path";
    case PF_EBUDGET:
        return "node budget exhausted";
    case PF_ECANCELED:
        return "search canceled";
    case PF_EINVAL:
        return "invalid argument";
    case PF_ERANGE:
        return "out of range";
    case PF_EBLOCKED:
        return "cell is blocked";
    case PF_ENOMEM:
        return "out of memory";
    case PF_ELIMIT:
        return "limit exceeded";
    case PF_EPARSE:
        return "parse error";
    case PF_EUNSUPPORTED:
        return "unsupported on this map";
    case PF_EIO:
        return "storage error";
    }
    return "unknown status";
}
