/* version.h -- pathd's version, as /v1/info reports it. */
#ifndef PF_SERVER_VERSION_H
#define PF_SERVER_VERSION_H

#define PF_SERVER_VERSION "0.1.0"

#endif
