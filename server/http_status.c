/* http_status.c -- see http_status.h. */
#include "http_status.h"

int pf_http_status(pf_status st) {
    switch (st) {
    case PF_OK:
    case PF_NO_PATH:
    case PF_EBUDGET:
        return 200;
    case PF_EPARSE:
        return 400;
    case PF_EINVAL:
    case PF_ERANGE:
    case PF_EBLOCKED:
    case PF_EUNSUPPORTED:
        return 422;
    case PF_ELIMIT:
        return 413;
    case PF_ECANCELED:
        return 504;
    case PF_ENOMEM:
        return 503;
    case PF_EIO:
        return 500;
    }
    return 500;
}

const char *pf_http_reason(int code) {
    switch (code) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 426:
        return "Upgrade Required";
    case 429:
        return "Too Many Requests";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Entity";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Internal Server Error";
    }
}
